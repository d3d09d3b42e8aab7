"""kvpool/settings/passthrough_schema.json is what tools/passthrough-schema/generate.py makes of its sources: Motor's
checkout and the vLLM / vllm-ascend sdists (cached beside the user's pip cache; downloaded from PyPI when absent)."""

from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

from kvpool.settings.passthrough import BUNDLED, SCHEMA, deployed_motor
from tests.program_runs import PROJECT_DIR

GENERATOR = PROJECT_DIR / "tools" / "passthrough-schema" / "generate.py"
COMMITTED = PROJECT_DIR / "kvpool" / "settings" / "passthrough_schema.json"
# A cold run downloads 36 MB of sdists; a warm one parses them in seconds.
TIMEOUT_S = 900


def test_the_committed_schema_is_what_its_sources_generate(motor_checkout, tmp_path):
    out = tmp_path / "passthrough_schema.json"
    run = subprocess.run(
        [sys.executable, str(GENERATOR), "--motor-checkout", str(motor_checkout), "--out", str(out)],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    if run.returncode == 2:  # the sdists are neither cached nor downloadable
        pytest.skip(run.stderr.strip())
    assert run.returncode == 0, run.stderr
    generated, committed = out.read_text(encoding="utf-8"), COMMITTED.read_text(encoding="utf-8")
    drift = "".join(list(difflib.unified_diff(
        committed.splitlines(keepends=True), generated.splitlines(keepends=True), "committed", "generated", n=1
    ))[:60])
    assert not drift, f"run tools/passthrough-schema/generate.py and commit the result:\n{drift}"


def test_motor_deployer_dir_of_the_bundled_motor_derives_the_bundled_schema(motor_checkout):
    """A stack deploying Motor 8919e55 is checked as without motor_deployer_dir: the settings' reader of Motor's
    config classes is the generator's, so a derived schema differs from the bundled one only where Motor does."""
    motor = deployed_motor(str(motor_checkout / "examples" / "deployer"), PROJECT_DIR)
    assert motor.schema == SCHEMA["motor"]
    assert motor.name == f"Motor at {motor_checkout.resolve()}"
    assert BUNDLED.name == "Motor 8919e55"
