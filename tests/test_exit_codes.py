"""One meaning per exit code in every `kvpool` command (kvpool/cli/commands/exit_codes.py, README "Exit codes"): each
command run into a refusal, the preview into a mandatory policy violation, diff and stack-schema --check into "has
changes"; the exact code, and why on stderr, never on stdout. `--stack` names one stack wherever a command reads one.
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvpool.cli.commands import exit_codes
from kvpool.cli.commands.cli import SUBCOMMANDS, build_parser
from kvpool.cli.preview import preview
from tests.program_runs import PROJECT_DIR

KV_DEMO = PROJECT_DIR / "tests" / "fixtures" / "programs" / "kv-demo"
DEMO_PACK = PROJECT_DIR / "tests" / "fixtures" / "policy-packs" / "demo"
COMMANDS = PROJECT_DIR / "kvpool" / "cli" / "commands"


def kvpool(*args: object, cwd: Path = PROJECT_DIR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300, check=False)


@pytest.fixture(scope="module")
def demo_previews(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kv-demo's dev stack previewed (old), and the same with one manifest edited (new)."""
    root = tmp_path_factory.mktemp("previews")
    preview(KV_DEMO, "dev", root / "old")
    shutil.copytree(root / "old", root / "new")
    deployment = next((root / "new" / "dev" / "manifests").glob("deployment-*.yaml"))
    deployment.write_text(deployment.read_text().replace("registry.local/engine:1.4.2", "registry.local/engine:1.4.3"))
    return root


@pytest.fixture(scope="module")
def schema_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project whose stack folder holds no schema yet: `stack-schema --check` finds it to write."""
    project = tmp_path_factory.mktemp("schema-project")
    (project / "Pulumi.yaml").write_text("name: llm-infra\nruntime: python\nstackConfigDir: stacks\n")
    (project / "stacks").mkdir()
    return project


# A refusal of each command (some twice: argparse's usage error, fleet's check of one stack), run in the repository.
REFUSALS = {
    "preview": ["preview", "--stack", "no-such-stack", "--project-dir", KV_DEMO],
    "preview-usage": ["preview"],  # argparse's usage error: refused input too, not 2 (the tool's bugs)
    "diff": ["diff", "--stack", "dev"],
    "import": ["import", "--user-config", "user_config.json", "--stack", "svc"],
    "settings": ["settings", "--stack", "dev", "--section", "no_such_section"],
    "fleet": ["fleet", "--source", "backend", "--previews", "out"],
    "fleet-check-destroy": ["fleet", "--check-destroy", "--stack", "dev", "--stack", "mooncake-ha"],
    "size": ["size", "--stack", "dev", "--lifetime", "-5"],
    "policy-pack-dir": ["policy-pack-dir", "--no-such-option"],
    "stack-schema": ["stack-schema", "--project-dir", "no-such-folder"],
    "component-package": ["component-package", "README.md"],
}


def test_every_command_has_its_refusal_case() -> None:
    assert {name.split("-usage")[0].split("-check-destroy")[0] for name in REFUSALS} == set(SUBCOMMANDS)


@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_a_refusal_exits_1_with_its_reason_on_stderr_only(case: str) -> None:
    result = kvpool(*REFUSALS[case])
    assert result.returncode == exit_codes.REFUSED, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr


def test_a_mandatory_policy_violation_exits_3_with_the_violations_on_stderr(tmp_path: Path) -> None:
    result = kvpool("preview", "--stack", "dev", "--project-dir", KV_DEMO, "--policy-pack", DEMO_PACK, "--out", tmp_path)
    assert result.returncode == exit_codes.POLICY_VIOLATION, result.stderr
    assert "mandatory" in result.stderr
    assert "mandatory" not in result.stdout  # stdout: the plan alone, as `pulumi preview` shows it beside them
    assert result.stdout.startswith("pulumi:pulumi:Stack  kv-demo-dev\n")
    assert not (tmp_path / "dev").exists()


@pytest.mark.parametrize("has_changes", [False, True], ids=["same", "changed"])
def test_diff_exit_code_exits_4_when_anything_changed(demo_previews: Path, has_changes: bool) -> None:
    new = demo_previews / ("new" if has_changes else "old")
    result = kvpool("diff", demo_previews / "old", new, "--stack", "dev", "--project-dir", KV_DEMO, "--exit-code")
    assert result.returncode == (exit_codes.HAS_CHANGES if has_changes else exit_codes.OK), result.stderr
    assert result.stderr == ""
    assert re.search(r"^Diff: 0 to create, 1 to update, 0 to delete" if has_changes else
                     r"^Diff: 0 to create, 0 to update, 0 to delete", result.stdout, flags=re.M), result.stdout
    # Without --exit-code the text alone says what changed: CI posts it whatever it holds.
    plain = kvpool("diff", demo_previews / "old", new, "--stack", "dev", "--project-dir", KV_DEMO)
    assert (plain.returncode, plain.stdout) == (exit_codes.OK, result.stdout)


def test_stack_schema_check_exits_4_when_the_schema_would_change_and_0_once_written(schema_project: Path) -> None:
    stale = kvpool("stack-schema", "--check", "--project-dir", schema_project)
    assert (stale.returncode, stale.stdout) == (exit_codes.HAS_CHANGES, "")
    assert "differs from the settings models" in stale.stderr
    assert kvpool("stack-schema", "--project-dir", schema_project).returncode == exit_codes.OK
    current = kvpool("stack-schema", "--check", "--project-dir", schema_project)
    assert (current.returncode, current.stdout, current.stderr) == (exit_codes.OK, "", "")


def test_each_code_means_one_thing_and_the_readme_lists_them() -> None:
    codes = {name: value for name, value in vars(exit_codes).items() if name.isupper() and isinstance(value, int)}
    assert sorted(codes.values()) == sorted(set(codes.values())) == sorted(exit_codes.TABLE)
    readme = (PROJECT_DIR / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n### Exit codes\n", 1)[1].split("\n#", 1)[0]
    rows = dict(re.findall(r"^\| (\d+) \| (.+?) \|$", section, flags=re.M))
    assert {int(code): meaning for code, meaning in rows.items()} == exit_codes.TABLE


def test_every_command_returns_a_named_code() -> None:
    """No command returns a bare number: each code comes from exit_codes, so its meaning is the table's."""
    for module in COMMANDS.glob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Return) and node.value is not None:
                value = node.value
                results = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
                numbers = [n for n in results if isinstance(n, ast.Constant) and type(n.value) is int]
                assert not numbers, f"{module.name}:{node.lineno} returns a literal exit code"


def test_stack_means_one_stack_in_every_command_that_reads_one() -> None:
    """--stack STACK, required, one value, wherever a command reads or writes one stack; fleet's --stack is a filter
    that may be repeated, and its --check-destroy takes the one stack from --stack."""
    parser = build_parser([])
    subparsers = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    single = {}
    for name, command in subparsers.choices.items():
        stack = next((action for action in command._actions if "--stack" in action.option_strings), None)
        if stack is None:
            continue
        if name == "fleet":
            assert isinstance(stack, argparse._AppendAction) and stack.metavar == "NAME"
            check_destroy = next(action for action in command._actions if "--check-destroy" in action.option_strings)
            assert (check_destroy.nargs, check_destroy.const) == ("?", "")  # its stack: --stack's
            continue
        single[name] = (stack.required, stack.nargs, stack.metavar)
        others = [option for action in command._actions if action is not stack and action.metavar in ("STACK", "NAME")
                  for option in action.option_strings]
        assert others == [], (name, others)  # no other flag takes the one stack's name
    assert single == {name: (True, None, "STACK") for name in ("preview", "diff", "import", "settings", "size")}


def test_check_destroy_takes_its_stack_from_stack_and_still_reads_the_older_spelling(tmp_path: Path) -> None:
    new = kvpool("fleet", "--check-destroy", "--stack", "dev")
    old = kvpool("fleet", "--check-destroy", "dev")
    assert (new.returncode, new.stdout, new.stderr) == (exit_codes.OK, "pulumi destroy of dev: no stack reads its KV store\n", "")
    assert (old.returncode, old.stdout) == (new.returncode, new.stdout)
    both = kvpool("fleet", "--check-destroy", "dev", "--stack", "dev")
    assert (both.returncode, both.stdout) == (exit_codes.REFUSED, "")
    assert "--check-destroy checks one stack" in both.stderr
