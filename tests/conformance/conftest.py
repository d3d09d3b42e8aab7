"""Conformance tests run Motor's own code against what this project renders. The Motor checkout comes from one
setting, MOTOR_CHECKOUT (default ../shared/reference/motor-8919e55 beside the repository); without it these tests
skip and say why."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.program_runs import PROJECT_DIR

DEFAULT_MOTOR_CHECKOUT = PROJECT_DIR.parent / "shared" / "reference" / "motor-8919e55"


@pytest.fixture(scope="session")
def motor_checkout() -> Path:
    path = Path(os.environ.get("MOTOR_CHECKOUT") or DEFAULT_MOTOR_CHECKOUT)
    if not (path / "motor").is_dir():
        pytest.skip(f"no Motor checkout at {path} (set MOTOR_CHECKOUT to a njuyuan/PyMotor checkout)")
    return path
