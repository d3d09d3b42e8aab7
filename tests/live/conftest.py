"""Live tests: the real backend binaries (PyPI wheels, Debian etcd) run with what our component renders.

Needs `tests/live/install_backends.sh` first (the Makefile's test target and .ci/run call it). Each scenario
runs in a private network namespace (`unshare -n`), so it needs root, as on the developers' machines and CI.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.live.rendered import BACKENDS

LIVE = Path(__file__).resolve().parent


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test here is `live` (root and the backends' binaries): `pytest -m "not live"` leaves them out."""
    for item in items:
        if LIVE in item.path.parents:
            item.add_marker(pytest.mark.live)


@pytest.fixture(scope="session", autouse=True)
def backends_installed() -> None:
    missing = [name for name in ("mooncake", "memcache", "yuanrong") if not (BACKENDS / name / ".installed").is_file()]
    if missing or not shutil.which("etcd"):
        pytest.fail(f"live backends not installed ({missing or 'etcd'}): run tests/live/install_backends.sh")


@pytest.fixture(scope="module")
def work() -> Path:
    """A short folder (Unix socket paths must stay under 108 bytes), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="kvl-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)
