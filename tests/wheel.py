"""The wheel of this checkout, as CI builds it: the package's tests install it, and the template's e2e test makes a
project that requires it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.program_runs import PROJECT_DIR

VERSION = "0.2.0"


def build_wheel(out: Path) -> Path:
    """Offline (no build isolation: setuptools is the venv's), from a copy: building writes build/ and *.egg-info
    beside the sources."""
    source = out / "src"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "requirements.txt"):
        shutil.copy2(PROJECT_DIR / name, source / name)
    shutil.copytree(PROJECT_DIR / "kvpool", source / "kvpool", ignore=shutil.ignore_patterns("__pycache__"))
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", "--wheel-dir", str(out / "dist"), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = (out / "dist").glob("*.whl")
    return wheel
