"""venv/bin/python -m tools.reference [--check]: write docs/configuration.md, docs/policies.md, docs/restarts.md and
docs/seeds.md from their sources, or with --check exit 1 naming each committed page that differs."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from tools.reference.configuration import configuration_page
from tools.reference.policies import policies_page
from tools.reference.restarts import restarts_page
from tools.reference.seeds import seeds_page

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES: dict[str, Callable[[], str]] = {
    "configuration.md": configuration_page, "policies.md": policies_page, "restarts.md": restarts_page,
    "seeds.md": seeds_page,
}


def stale_pages() -> list[Path]:
    """The committed pages that differ from what their sources give (a missing page differs)."""
    return [DOCS / name for name, render in PAGES.items()
            if not (DOCS / name).is_file() or (DOCS / name).read_text(encoding="utf-8") != render()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.reference", description=__doc__)
    parser.add_argument("--check", action="store_true", help="compare with the committed pages, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_pages()
        for path in stale:
            print(f"{path} differs from its sources; run venv/bin/python -m tools.reference", file=sys.stderr)
        return 1 if stale else 0
    for name, render in PAGES.items():
        (DOCS / name).write_text(render(), encoding="utf-8")
        print(f"wrote {DOCS / name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
