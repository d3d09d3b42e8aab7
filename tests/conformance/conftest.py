"""Conformance tests run Motor's own code against what this project renders; Motor's checkout is the suite's
`motor_checkout` fixture (tests/conftest.py: skips without it, fails under CI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.program_runs import Rendered


@pytest.fixture(scope="session")
def rendered(motor_checkout: Path) -> dict[str, Rendered]:
    """Every example stack the boot tests boot, rendered with Motor's scripts in motor-config; once per session,
    shared by the role boots and the role-script table's proof."""
    from tests.conformance.test_motor_boot import STACKS, rendered_with_motor

    return {stack: rendered_with_motor(stack, motor_checkout) for stack in STACKS}


@pytest.fixture(scope="session")
def motor_build(motor_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Motor's package with the protobuf modules its build generates (tests/conformance/motor_build.py), in a
    temporary folder to put first on sys.path: what the controller's and coordinator's own processes run from."""
    from tests.conformance.motor_build import build_motor

    return build_motor(motor_checkout, tmp_path_factory.mktemp("motor-build"))
