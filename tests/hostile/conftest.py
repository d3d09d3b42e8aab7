"""Fixtures of the hostile-input tests."""

from __future__ import annotations

import resource
from collections.abc import Iterator
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project running this repository's program, with an empty stacks/ folder."""
    folder = tmp_path / "project"
    (folder / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "kvpool"):
        (folder / name).symlink_to(REPOSITORY / name)
    return folder


MEMORY_HEADROOM = 3 * 1024**3
"""What a hostile-input test may add to the process's address space: an input that takes more fails the test with
MemoryError instead of taking the machine's memory (a one-field mutation once grew pytest to 23 GiB)."""


def _address_space() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmSize in /proc/self/status")


@pytest.fixture
def bounded_memory() -> Iterator[int]:
    """Lowers the soft address-space limit to the current size plus MEMORY_HEADROOM for one test, then restores it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = _address_space() + MEMORY_HEADROOM
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        yield limit
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
