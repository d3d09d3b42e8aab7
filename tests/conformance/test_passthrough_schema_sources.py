"""kvpool/settings/passthrough_schema.json is what tools/passthrough-schema/generate.py makes of its sources: Motor's
checkout and the vLLM / vllm-ascend sdists (cached beside the user's pip cache; downloaded from PyPI when absent)."""

from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

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
