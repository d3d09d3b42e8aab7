"""Settings and fixtures for the whole suite.

The outside corpora (tests/outside.py): Motor's checkout and examples as fixtures that skip with a reason, or fail
under CI. Property tests are deterministic in CI (`CI` set, as `.ci/run` and GitHub Actions do): hypothesis derives its examples
from each test's name, so a landing never depends on a random draw. Elsewhere they explore randomly, where a new
failure informs and cannot block a landing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.outside import MOTOR_CHECKOUT, MOTOR_EXAMPLES, absent

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


# Folders whose tests run whole on one worker (see pytest_xdist_make_scheduler).
SHARED_FOLDERS = ("tests/e2e/", "tests/live/")


def work_unit(nodeid: str) -> str:
    """What one pytest-xdist worker runs whole, in order: a test module, so its module fixtures run once; or every
    test of a shared folder. The e2e tests share one cluster and one CLI workspace (session fixtures), and the tests
    that change the shared stacks run last. The live backends each run in their own network namespace but on the
    host's files, and MemCache's MetaService locks /tmp/mmc_meta_service*.lock, so two at once refuse to start
    ("meta service is already running")."""
    module = nodeid.split("::", 1)[0]
    return next((folder for folder in SHARED_FOLDERS if module.startswith(folder)), module)


@pytest.hookimpl(optionalhook=True)  # `-p no:xdist` runs the suite without xdist and its hooks
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`make test` runs two pytest-xdist workers, scheduled by `work_unit`. Not xdist's `--dist loadgroup`: its
    worker writes the group into `item._nodeid`, which pytest 9 no longer reads, so the groups were silently lost."""
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnits(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnits(config, log)
