"""Fixtures of the hostile-input tests."""

from __future__ import annotations

from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project running this repository's program, with an empty stacks/ folder."""
    folder = tmp_path / "project"
    (folder / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "components", "policies"):
        (folder / name).symlink_to(REPOSITORY / name)
    return folder
