"""Issue 33 §9 against the real CLI: the stack file `kvpool import` writes is read by `pulumi config --json` as
exactly the values the import read: text stays that text (`1e3`, `0o17`, `0X1F`, `0B11`, dates), numbers and
switches keep their type. The values: tests/test_import_round_trip.py's tricky texts and 400 seeded random texts
made of the characters yaml.v3's numbers, dates and keywords are made of, all in one stack file (one CLI call);
the few the CLI cannot keep are refused by the import (tests/test_import_round_trip.py).
"""

from __future__ import annotations

import json
import random

import pytest

from kvpool.cli.engine.stack_yaml import lost_in_the_clis_reencoding
from kvpool.cli.views.importer import convert, stack_file_text
from tests.e2e.realengine import PulumiWorkspace
from tests.service_configs import as_motor_files, mooncake_pool
from tests.test_import_round_trip import TRICKY_TEXTS

pytestmark = pytest.mark.e2e

ALPHABET = "0123456789+-._eExXoObBtTzZ: nuly~<#'\"\\\n\t\x85\u2028é"
NUMBERS = {"INT": 9223372036854775807, "NEG": -12, "TINY": 1e-07, "HUGE": 1e21, "HALF": 0.5, "ON": True, "NONE": None}


def random_texts(count: int, seed: int = 33) -> list[str]:
    chooser = random.Random(seed)
    return ["".join(chooser.choice(ALPHABET) for _ in range(chooser.randint(0, 8))) for _ in range(count)]


def test_what_import_writes_the_cli_reads_back_unchanged(offline_workspace: PulumiWorkspace) -> None:
    texts = [text for text in TRICKY_TEXTS + random_texts(400) if not lost_in_the_clis_reencoding(text)]
    written = {**{f"T{index}": text for index, text in enumerate(texts)}, **NUMBERS}
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = written
    project = offline_workspace.root / "import-round-trip"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: motor-kvpool\nruntime: python\n")

    cli, error = offline_workspace.config_json(
        project, "import-round-trip", stack_file_text(convert(user_config, env), "a/user_config.json + a/env.json"))

    assert cli is not None, error
    read_back = json.loads(cli["motor-kvpool:env"])["motor_common_env"]
    differing = {key: (value, read_back.get(key)) for key, value in written.items()
                 if (type(read_back.get(key)), read_back.get(key)) != (type(value), value)}
    assert differing == {}
    assert len(texts) == len(TRICKY_TEXTS) + 400 - 7  # 7 random texts start with a line break: import refuses them
