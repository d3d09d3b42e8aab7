"""The package shows what is public: kvpool/ holds the public modules and folders and the internal ones by name; the
command's kvpool/cli/ is grouped by the real part each group stands in for, nothing but its entry point loose at its
top, and each group's docstring names the tests that compare it with that part, which exist."""

from __future__ import annotations

import ast
import re

from tests.program_runs import PROJECT_DIR

KVPOOL = PROJECT_DIR / "kvpool"
CLI = KVPOOL / "cli"
GROUPS = {"engine", "policy_host", "apiserver", "views", "fleet", "commands"}


def test_the_top_holds_the_public_api_and_the_internal_folders_by_name() -> None:
    assert sorted(path.name for path in KVPOOL.glob("*.py")) == ["__init__.py", "__main__.py", "errors.py"]
    assert {path.parent.name for path in KVPOOL.glob("*/__init__.py")} == {
        "settings", "components", "program", "policies", "component_package", "internal", "cli"}


def test_only_the_entry_point_lies_at_the_top_of_the_command() -> None:
    assert sorted(path.name for path in CLI.glob("*.py")) == ["__init__.py", "preview.py"]
    assert {path.parent.name for path in CLI.glob("*/__init__.py")} == GROUPS


def test_each_stand_in_group_names_existing_tests_of_its_real_part() -> None:
    named = {}
    for group in GROUPS:
        docstring = ast.get_docstring(ast.parse((CLI / group / "__init__.py").read_text())) or ""
        named[group] = re.findall(r"tests/[\w/]+\.py", docstring)
        assert all((PROJECT_DIR / test).is_file() for test in named[group]), (group, named[group])
    assert {group for group, tests in named.items() if any(test.startswith("tests/e2e/") for test in tests)} == {
        "engine", "policy_host", "apiserver", "views", "fleet", "commands"}
