"""Motor's deploy.py --dry-run, offline: a writable copy of its folder (it writes ./output_yamls beside itself) and a
stub `kubectl` for its one cluster query. Used by tests/conformance and bench/preview_vs_deploy.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# deploy.py --dry-run asks for the nodes' accelerator labels (lib/generator/k8s_utils.py); the stub answers with
# $KVPOOL_NODES. Anything else is refused, so an unexpected cluster call fails the run.
KUBECTL_STUB = """#!/bin/sh
if [ "$1" = get ] && [ "$2" = nodes ]; then
  echo "$KVPOOL_NODES"
  exit 0
fi
echo "kubectl stub: unexpected call: $*" >&2
exit 1
"""


def nodes(labels: dict[str, str]) -> str:
    """KVPOOL_NODES for one node carrying `labels`."""
    return json.dumps({"items": [{"metadata": {"name": "node-1", "labels": labels}}]})


def writable_copy(source: Path, target: Path) -> Path:
    """A copy of a folder of Motor's checkout that deploy.py or Motor's build can write into (the checkout may be
    read-only)."""
    shutil.copytree(source, target)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | 0o200)
    return target


def kubectl_dir(folder: Path) -> Path:
    """`folder` holding the kubectl stub, to put first on PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kubectl").write_text(KUBECTL_STUB)
    (folder / "kubectl").chmod(0o755)
    return folder
