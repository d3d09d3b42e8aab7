"""docs/seeds.yaml, the table "seed statement -> behaviour -> test" (issue 44, Done when) that docs/seeds.md is written
from, cannot drift: each row points at the seed text it paraphrases (its line holds the row's verbatim fragment), every
test it cites exists, a row without tests says why, and the seeds' parameter rows and FAQ items each have a row.
The seeds themselves are an outside corpus (tests/outside.py: SEEDS_DIR)."""

from __future__ import annotations

import ast
import re
from functools import cache

import pytest

from tests.outside import SEEDS, absent
from tests.program_runs import PROJECT_DIR
from tools.reference.policies import catalog
from tools.reference.seeds import STATUSES, seed_table

TABLE = seed_table()
ROWS = TABLE["rows"]
ID = re.compile(r"^S(000|001)-\d{2}$")
# The statements no test proves yet. A row joins this list only on purpose (the report names it).
NOT_COVERED = ["S000-36"]


@pytest.fixture(scope="module")
def seeds() -> dict[str, list[str]]:
    """Each seed's lines, by the id prefix its rows use (S000, S001)."""
    files = {prefix: SEEDS / seed["file"] for prefix, seed in TABLE["seeds"].items()}
    missing = [path.name for path in files.values() if not path.is_file()]
    if missing:
        absent(f"no product seeds at {SEEDS} ({', '.join(missing)} missing; set SEEDS_DIR to reference/seeds)")
    return {prefix: path.read_text(encoding="utf-8").splitlines() for prefix, path in files.items()}


def prefix_of(row: dict) -> str:
    return row["id"].split("-", 1)[0]


@cache
def cited_names_in(path: str) -> frozenset[str]:
    """The test functions of a test file, also as Class::method; parametrized ids are not needed."""
    found: set[str] = set()
    tree = ast.parse((PROJECT_DIR / path).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            found.add(node.name)
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            found |= {f"{node.name}::{item.name}" for item in node.body
                      if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")}
    return frozenset(found)


def test_ids_are_unique_well_formed_and_of_a_known_seed():
    ids = [row["id"] for row in ROWS]
    assert [i for i in ids if not ID.match(i)] == []
    assert sorted({i for i in ids if ids.count(i) > 1}) == []
    assert {prefix_of(row) for row in ROWS} == set(TABLE["seeds"])


def test_every_row_has_its_fields():
    fields = {"id", "line", "fragment", "statement", "behaviour", "status"}
    for row in ROWS:
        assert fields <= set(row), row["id"]
        assert all(isinstance(row[key], str) and row[key].strip() for key in fields - {"line"}), row["id"]
        assert isinstance(row["line"], int) and row["line"] >= 1, row["id"]


def test_every_cited_line_holds_the_rows_fragment(seeds):
    wrong = []
    for row in ROWS:
        lines = seeds[prefix_of(row)]
        if row["line"] > len(lines):
            wrong.append(f"{row['id']}: line {row['line']} is past the seed's {len(lines)} lines")
        elif row["fragment"] not in lines[row["line"] - 1]:
            wrong.append(f"{row['id']}: line {row['line']} does not hold {row['fragment']!r}")
    assert wrong == []


def test_every_cited_test_exists():
    missing = []
    for row in ROWS:
        for cited in row.get("tests") or []:
            path, _, name = cited.partition("::")
            if not (path.startswith("tests/") and path.endswith(".py") and (PROJECT_DIR / path).is_file()):
                missing.append(f"{row['id']}: no test file {path}")
            elif name not in cited_names_in(path):
                missing.append(f"{row['id']}: {path} has no test {name}")
    assert missing == []


def test_a_row_is_tested_or_says_why_not():
    for row in ROWS:
        assert row["status"] in STATUSES, row["id"]
        if row["status"] == "tested":
            assert row.get("tests") and "reason" not in row, row["id"]
        else:  # a reason, and no test cited beside it (an unrelated test would pass for a proof)
            assert str(row.get("reason") or "").strip() and not row.get("tests"), row["id"]


def test_the_statements_no_test_proves_are_the_known_ones():
    assert [row["id"] for row in ROWS if row["status"] == "not covered"] == NOT_COVERED


def test_the_policies_a_row_names_are_the_packs():
    named = {name for row in ROWS for name in re.findall(r"\bkvpool-[a-z0-9-]+[a-z0-9]", row["behaviour"])}
    assert named and named <= {policy.name for policy in catalog().POLICIES}


def test_every_parameter_row_and_faq_item_of_seed_000_has_a_row(seeds):
    """The parameter tables (name, type, default, meaning: tab-separated, a type column) and the FAQ items, whose
    answer is two lines below the question."""
    lines = seeds["S000"]
    cited = {row["line"] for row in ROWS if prefix_of(row) == "S000"}
    parameters = [number for number, line in enumerate(lines, 1)
                  if re.match(r"^[a-z_]+\t(string|int|float)", line)]
    faq_start = lines.index("常见问题")
    answers = [number + 2 for number, line in enumerate(lines, 1) if number > faq_start and re.match(r"^\d+\. ", line)]
    assert len(parameters) == 14 and len(answers) == 7  # the pattern still finds them
    assert sorted(set(parameters + answers) - cited) == []


def test_every_parameter_seed_001_explains_has_a_row(seeds):
    """Seed 001 explains kv_cache_pool_config's parameters on the line after its 说明 (note), `name：meaning` each."""
    [line] = [number + 1 for number, text in enumerate(seeds["S001"], 1) if text.startswith("说明：kv_cache_pool_config")]
    names = re.findall(r"([a-z_]+)：", seeds["S001"][line - 1])
    fragments = " ".join(row["fragment"] for row in ROWS if prefix_of(row) == "S001" and row["line"] == line)
    assert len(names) >= 7 and [name for name in names if name not in fragments] == []
