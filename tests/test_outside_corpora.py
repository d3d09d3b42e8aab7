"""An absent outside corpus is a visible skip on a developer's machine and a failure under CI (tests/outside.py): run
pytest itself on a test that needs Motor's examples and one that needs Motor's checkout, pointed at nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.program_runs import PROJECT_DIR

NEEDS_EXAMPLES = "tests/test_examples.py::test_motors_examples_are_all_there"
NEEDS_CHECKOUT = "tests/conformance/test_motor_rbac.py"


def run_pytest(target: str, tmp_path: Path, ci: bool) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    env.update(MOTOR_EXAMPLES=str(tmp_path / "no-examples"), MOTOR_CHECKOUT=str(tmp_path / "no-checkout"))
    if ci:
        env["CI"] = "true"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-rsf", "-p", "no:cacheprovider", target],
                          cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("target, reason", [
    (NEEDS_EXAMPLES, "no Motor examples at {tmp}/no-examples (set MOTOR_EXAMPLES to reference/motor-examples)"),
    (NEEDS_CHECKOUT, "no Motor checkout at {tmp}/no-checkout (set MOTOR_CHECKOUT to a njuyuan/PyMotor checkout)"),
])
def test_an_absent_corpus_skips_with_its_reason_but_fails_under_ci(target: str, reason: str, tmp_path: Path):
    reason = reason.format(tmp=tmp_path)
    local = run_pytest(target, tmp_path, ci=False)
    assert local.returncode == 0, local.stdout
    assert "SKIPPED" in local.stdout and reason in local.stdout, local.stdout
    ci = run_pytest(target, tmp_path, ci=True)
    assert ci.returncode == 1, ci.stdout
    assert "skipped" not in ci.stdout.splitlines()[-1], ci.stdout
    assert f"{reason} [CI is set: a missing outside corpus fails the run instead of skipping]" in ci.stdout, ci.stdout
