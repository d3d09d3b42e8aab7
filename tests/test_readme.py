"""The README says what the tool does: its configuration table names exactly the keys the settings take, and the
"Two commands" section says what `make test` needs before it is run (issue 22 item 14)."""

from __future__ import annotations

import re

from components.pulumi_settings import SECRET_ENV_KEY
from components.settings_loader import MIGRATIONS, PULUMI_CONFIG_KEYS
from tests.program_runs import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text(encoding="utf-8")


def section(title: str) -> str:
    return README.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def test_the_configuration_table_names_exactly_the_keys_the_settings_take():
    table = [line for line in section("Stack configuration").splitlines() if line.startswith("| `")]
    named = {key for line in table for key in re.findall(r"`([a-z_]+)`", line.split(" | ")[0])}
    assert named == {*PULUMI_CONFIG_KEYS, SECRET_ENV_KEY}
    assert not named & set(MIGRATIONS)  # e.g. motor_scripts_dir, which the settings refuse


def test_two_commands_says_what_make_test_needs_up_front():
    text = " ".join(section("Two commands").split("### ")[0].split())
    assert "make test # the whole test suite: needs root, Go 1.26 and, once, a ~35-minute build (below)" in text
    for needed in ("**root**", "**Go 1.26**", "about 35 minutes once on 2 cores", "**`MOTOR_CHECKOUT`**: the path of "
                   "your checkout of Motor", '`venv/bin/python -m pytest -m "not live"` runs without root'):
        assert needed in text, needed
