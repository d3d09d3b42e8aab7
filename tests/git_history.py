"""A throw-away git repository holding the project's tracked files, for tests of what runs on a git history (the
pull request workflow, `kvpool diff --base`)."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from tests.program_runs import PROJECT_DIR


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True,
        text=True,
    ).stdout.strip()


def commit_all(repo: Path, message: str) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def project_repository(root: Path) -> Path:
    """`root/repo`: the project's tracked files, committed once."""
    repo = root / "repo"
    for name in git(PROJECT_DIR, "ls-files").splitlines():
        if (PROJECT_DIR / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT_DIR / name, repo / name)
    git(repo, "init", "-q")
    commit_all(repo, "base")
    return repo


def history(root: Path, change: Callable[[Path], None]) -> tuple[Path, str]:
    """A git repository holding the project (base commit), then `change(repo)` committed on top."""
    repo = project_repository(root)
    base = git(repo, "rev-parse", "HEAD")
    change(repo)
    commit_all(repo, "head")
    return repo, base


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path.name} no longer holds {old!r}"
    path.write_text(text.replace(old, new))
