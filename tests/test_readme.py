"""The README says what the tool does: it links the reference pages instead of restating them (issue 25: those are
generated from their sources, tests/test_reference_docs.py), and the "Two commands" section says what `make test`
needs before it is run (issue 22 item 14)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.e2e.stack_objects import REMOVE_EMPTY_SIDECAR
from tests.program_runs import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_each_reference_page_is_linked_from_its_section_and_not_restated() -> None:
    for title, page in (("Stack configuration", "configuration.md"), ("Components", "restarts.md"),
                        ("Policy pack", "policies.md")):
        assert f"[docs/{page}](docs/{page})" in section(title), title
    tables = [line for line in README.splitlines()
              if line.startswith(("| `kvpool-", "| `motor_deploy_config`", "| identical re-run"))]
    assert tables == []


def test_two_commands_says_what_make_test_needs_up_front():
    text = " ".join(section("Two commands").split("### ")[0].split())
    assert "make test # the whole test suite: needs root, Go 1.26 and, once, a ~30-minute build (below)" in text
    for needed in ("**root**", "**Go 1.26**", "27 minutes once on 2 idle cores with empty Go caches", "**`MOTOR_CHECKOUT`**: the path of "
                   "your checkout of Motor", '`venv/bin/python -m pytest -m "not live"` runs without root'):
        assert needed in text, needed


def test_every_picture_the_readme_shows_is_a_committed_png_and_the_dashboards_section_shows_the_pool_dashboard():
    pictures = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README)
    assert "docs/pool-dashboard.png" in re.findall(r"\]\(([^)]+)\)", section("Seeing the pool: dashboard and alerts"))
    for picture in pictures:
        assert (PROJECT_DIR / picture).read_bytes().startswith(b"\x89PNG\r\n"), picture


def test_an_interrupted_update_names_the_command_the_e2e_test_runs_for_an_emptied_sidecar():
    """tests/e2e/test_interrupted_updates.py runs this line, with its stack for `dev`."""
    text = section("When an update is interrupted")
    assert REMOVE_EMPTY_SIDECAR.format(stack="dev") in text.splitlines()
    assert "error: failed to load checkpoint: EOF" in text


def deploy_py_flags(deploy_py: Path) -> set[str]:
    """Every option string deploy.py's argument parser declares (its add_argument calls' literal arguments)."""
    tree = ast.parse(deploy_py.read_text(encoding="utf-8"))
    return {
        argument.value
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"
        for argument in call.args
        if isinstance(argument, ast.Constant) and str(argument.value).startswith("--")
    }


def test_every_deploy_py_flag_has_its_row_and_the_update_flags_become_pulumi_up(motor_checkout):
    flags = deploy_py_flags(motor_checkout / "examples" / "deployer" / "deploy.py")
    heading = "### deploy.py's flags, here\n"
    table = section("With the Pulumi CLI and a cluster").split(heading, 1)[1].split("\n\n")[0].strip()
    rows = [line.split(" | ")[0] for line in table.splitlines()[2:]]
    named = {flag for row in rows for flag in re.findall(r"`(--[\w-]+)", row)}
    assert named == flags
    updates = " ".join(section("With the Pulumi CLI and a cluster").split(
        "### deploy.py's `--update_config` and `--update_instance_num`", 1)[1].split())
    for said in ("edit the stack file (or `pulumi config set --path ...`), look at `kvpool preview` or `kvpool diff`, "
                 "then `pulumi up`", "`kv_cache_store_config.target_stack` is resolved again on every `kvpool "
                 "preview` and `pulumi up`"):
        assert said in updates, said
