"""kvpool/internal/sdk_internals.py reaches into the Pulumi SDK's non-public modules: pin the SDK version it was
written for, so that an upgrade fails here first and the internals are checked again."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

from kvpool.internal import sdk_internals
from tests.program_runs import PROJECT_DIR


def test_the_installed_sdk_is_the_one_the_internals_were_written_for() -> None:
    assert version("pulumi") == sdk_internals.SDK_VERSION


def test_the_pinned_requirement_is_that_version() -> None:
    pins = (PROJECT_DIR / "requirements.txt").read_text().splitlines()
    assert f"pulumi=={sdk_internals.SDK_VERSION}" in pins


def test_no_other_module_imports_the_sdks_runtime_internals() -> None:
    internals = ("pulumi.runtime.stack", "pulumi.runtime import rpc", "pulumi.runtime import settings",
                 "pulumi.runtime import config", "runtime_config.")
    offenders = [
        str(path.relative_to(PROJECT_DIR))
        for folder in ("kvpool", "tests", "bench")
        for path in sorted((PROJECT_DIR / folder).rglob("*.py"))
        if path.name != "sdk_internals.py" and path != Path(__file__) and any(marker in path.read_text() for marker in internals)
    ]
    assert offenders == []


def test_the_offline_engine_resets_what_set_mocks_leaves() -> None:
    sdk_internals.reset_state()
    assert sdk_internals.leftover_state() == (None, {}, 0)
