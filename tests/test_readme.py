"""The README says what the tool does: it links the reference pages instead of restating them (issue 25: those are
generated from their sources, tests/test_reference_docs.py), and the "Two commands" section says what `make test`
needs before it is run (issue 22 item 14)."""

from __future__ import annotations

import re

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
