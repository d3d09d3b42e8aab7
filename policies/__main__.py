"""The design card's policies/ in a clone: `pulumi preview --policy-pack policies` runs motor-kvpool's pack, defined
once in kvpool/policies/ (catalog.py's POLICIES, pack.py's PolicyPack), imported from here, never copied.

The engine starts the pack in this folder, where `kvpool` is not importable; the clone's root (this folder's
parent) goes first on sys.path, so the pack is the clone's own kvpool, as the program's `pulumi preview` runs it,
and not another one the virtualenv may have installed."""

import sys
from pathlib import Path

_CLONE = Path(__file__).resolve().parent.parent
if (_CLONE / "kvpool" / "policies" / "pack.py").is_file():
    sys.path.insert(0, str(_CLONE))

from kvpool.policies.pack import serve  # noqa: E402 (after the clone's root is on sys.path)

serve()
