"""Settings and fixtures for the whole suite.

The outside corpora (tests/outside.py): Motor's checkout and examples as fixtures that skip with a reason, or fail
under CI. Property tests are deterministic in CI (`CI` set, as `.ci/run` and GitHub Actions do): hypothesis derives its examples
from each test's name, so a landing never depends on a random draw. Elsewhere they explore randomly, where a new
failure informs and cannot block a landing.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.outside import MOTOR_CHECKOUT, MOTOR_EXAMPLES, absent

E2E = Path(__file__).resolve().parent / "e2e"

settings.register_profile("ci", derandomize=True, database=None)
if os.environ.get("CI"):
    settings.load_profile("ci")


@pytest.fixture(scope="session")
def motor_checkout() -> Path:
    """Motor's checkout (MOTOR_CHECKOUT, default ../shared/reference/motor-8919e55), the conformance target."""
    if not (MOTOR_CHECKOUT / "motor").is_dir():
        absent(f"no Motor checkout at {MOTOR_CHECKOUT} (set MOTOR_CHECKOUT to a njuyuan/PyMotor checkout)")
    return MOTOR_CHECKOUT


@pytest.fixture(scope="session")
def motor_examples() -> Path:
    """Motor's example configurations (MOTOR_EXAMPLES, default ../shared/reference/motor-examples)."""
    if not any(MOTOR_EXAMPLES.glob("**/user_config.json")):
        absent(f"no Motor examples at {MOTOR_EXAMPLES} (set MOTOR_EXAMPLES to reference/motor-examples)")
    return MOTOR_EXAMPLES


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`make test` runs two pytest-xdist workers with `--dist loadgroup`; a group runs whole on one worker, in order.
    A module is a group, so its module fixtures (a live backend under load) run once. The e2e tests are one group:
    they share one cluster and one CLI workspace (session fixtures), and the tests that change the shared stacks
    run last."""
    for item in items:
        group = "e2e" if E2E in item.path.parents else str(item.path)
        item.add_marker(pytest.mark.xdist_group(group))
