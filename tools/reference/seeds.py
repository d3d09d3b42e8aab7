"""docs/seeds.md: every statement of the two product seeds (shared/reference/seeds/), what motor-kvpool does about it
and the tests that prove it, from docs/seeds.yaml. tests/test_seed_table.py holds the rows to the seeds' text and to
the tests they cite."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tools.reference.markdown import page, table

SOURCE = Path(__file__).resolve().parents[2] / "docs" / "seeds.yaml"
STATUSES = ("tested", "documented only", "not covered")


def seed_table(source: Path = SOURCE) -> dict[str, Any]:
    """docs/seeds.yaml as data: `seeds` (prefix -> file and title) and `rows`."""
    return yaml.safe_load(source.read_text(encoding="utf-8"))


def _where(row: dict[str, Any]) -> str:
    """`000:133` for row S000-nn citing line 133 of seed 000."""
    return f"{row['id'].split('-', 1)[0].removeprefix('S')}:{row['line']}"


def _proof(row: dict[str, Any]) -> str:
    if row["status"] == "tested":
        return "<br>".join(f"`{test}`" for test in row["tests"])
    return f"**{row['status']}**: {row['reason']}"


def seeds_page() -> str:
    data = seed_table()
    seeds, rows = data["seeds"], data["rows"]
    counts = {status: sum(row["status"] == status for row in rows) for status in STATUSES}
    intro = ("Each checkable statement of the two product seeds, what motor-kvpool does about it, and the tests that "
             "prove it. *Seed:line* is the seed file and its 1-based line; the quoted text is verbatim from that line, "
             "which tests/test_seed_table.py checks, together with every test named here.\n\n"
             + "\n".join(f"- seed {prefix.removeprefix('S')}: `{seed['file']}`, {seed['title']}"
                         for prefix, seed in seeds.items())
             + "\n\n" + f"{len(rows)} rows: " + ", ".join(f"{count} {status}" for status, count in counts.items())
             + ".\n")
    body = intro + "\n" + table(
        ("id", "seed:line", "statement", "motor-kvpool", "proof"),
        [(row["id"], _where(row), f"{row['statement']} «{row['fragment']}»", row["behaviour"], _proof(row))
         for row in rows])
    gaps = [row for row in rows if row["status"] == "not covered"]
    if gaps:
        body += ("\n## Not covered\n\n"
                 + "\n".join(f"- {row['id']} ({_where(row)}): {row['statement']} {row['reason']}"
                             for row in gaps) + "\n")
    return page("Seed statements, behaviour and tests", "docs/seeds.yaml", "venv/bin/python -m tools.reference", body)
