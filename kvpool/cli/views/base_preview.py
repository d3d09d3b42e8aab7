"""The preview of a stack as a git commit has it (`python -m kvpool diff --base REF`): the commit is checked out in a
temporary `git worktree` and previewed there with its own program, policies and tooling, so a diff against the
working tree covers committed and uncommitted changes alike and leaves the working tree and the stash alone."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from kvpool.cli.engine.stack_config import has_stack
from kvpool.errors import KvpoolError


class BasePreviewError(KvpoolError):
    """The base commit cannot be checked out or does not preview."""


def _git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], check=False, cwd=cwd, capture_output=True, text=True)
    if result.returncode != 0:
        raise BasePreviewError(f"git {' '.join(args)} in {cwd}: {result.stderr.strip()}")
    return result.stdout.strip()


def preview_commit(project_dir: Path, ref: str, stack: str, out_dir: Path) -> bool:
    """Preview `stack` of commit `ref` of the repository holding `project_dir` into `<out_dir>/<stack>/`.
    False (nothing written) when that commit has no such stack: the stack is new."""
    project_dir = Path(project_dir).resolve()
    _git(project_dir, "rev-parse", "--show-toplevel")  # says clearly when the project is in no git repository
    try:
        commit = _git(project_dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except BasePreviewError:
        raise BasePreviewError(f"--base {ref!r}: not a commit of the repository holding {project_dir}") from None
    prefix = _git(project_dir, "rev-parse", "--show-prefix")  # the project's folder inside the repository
    with tempfile.TemporaryDirectory(prefix="kvpool-base-") as temporary:
        worktree = Path(temporary) / "worktree"
        _git(project_dir, "worktree", "add", "--detach", "--quiet", str(worktree), commit)
        try:
            base_project = worktree / prefix
            if not (base_project / "Pulumi.yaml").is_file() or not has_stack(base_project, stack):
                return False
            # `-m kvpool` from the worktree: the base commit's own tooling and program, not this process's modules.
            result = subprocess.run(
                [sys.executable, "-m", "kvpool", "preview", "--stack", stack, "--out", str(Path(out_dir).resolve())],
                check=False, cwd=base_project, capture_output=True, text=True,
            )
            if result.returncode != 0:
                raise BasePreviewError(
                    f"--base {ref} ({commit[:12]}): stack {stack!r} does not preview there:\n{result.stderr.strip()}"
                )
            return True
        finally:
            _git(project_dir, "worktree", "remove", "--force", str(worktree))
