"""The wheel of this checkout, as CI builds it, and a project's virtualenv with it installed from the project's
requirements.txt (the template's and the component package's e2e tests)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from tests.program_runs import PROJECT_DIR

VERSION = "0.3.0"


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


def install_requirements(project: Path, wheels: Path) -> Path:
    """`python3 -m venv venv && venv/bin/pip install -r requirements.txt` in `project`, offline: pip finds motor-kvpool
    in `wheels` and its dependencies already installed, this repository's venv's, through a .pth file."""
    venv = project / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = Path(sysconfig.get_paths(vars={"base": str(venv), "platbase": str(venv)})["purelib"])
    (purelib / "repository-venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index",
         "--find-links", str(wheels), "-r", "requirements.txt"],
        cwd=project, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return venv
