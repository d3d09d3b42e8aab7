"""What tests need from outside the repository, and the one rule for when it is absent.

Motor's checkout (MOTOR_CHECKOUT), Motor's example configurations (MOTOR_EXAMPLES), the two product seeds
(SEEDS_DIR), cargo (Motor's Rust conductor), the real engine's binaries and the workflow linter: each test that needs
one calls `absent(reason)` when it is missing. On a developer's machine that is a skip with the reason shown (`-ra`);
under CI (`CI` set: `.ci/run`, GitHub Actions) it fails the test, so a green CI run ran every test and none passed by
skipping.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPOSITORY = Path(__file__).resolve().parent.parent
STRICT = bool(os.environ.get("CI"))
MOTOR_CHECKOUT = Path(os.environ.get("MOTOR_CHECKOUT") or REPOSITORY.parent / "shared" / "reference" / "motor-8919e55")
MOTOR_EXAMPLES = Path(os.environ.get("MOTOR_EXAMPLES") or REPOSITORY.parent / "shared" / "reference" / "motor-examples")
SEEDS = Path(os.environ.get("SEEDS_DIR") or REPOSITORY.parent / "shared" / "reference" / "seeds")


def absent(reason: str) -> NoReturn:
    """Skip with `reason`, or fail with it under CI."""
    if STRICT:
        pytest.fail(f"{reason} [CI is set: a missing outside corpus fails the run instead of skipping]", pytrace=False)
    pytest.skip(reason)
