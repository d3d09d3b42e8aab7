"""Pyflakes and bugbear findings (unused imports and names, loop variables captured late, raise without from):
none in the repository."""

from __future__ import annotations

import subprocess
import sys

from tests.program_runs import PROJECT_DIR


def test_no_pyflakes_or_bugbear_findings():
    done = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F,B", "--output-format", "concise",
         "."],  # ruff skips what .gitignore lists (venv, build)
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
