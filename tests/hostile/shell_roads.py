"""Issue 45 §1's shell roads: the value payloads an env value may hold that would run a command if any shell
evaluated it rather than copied it, and the users real bash runs them as. The corpus checks the settings accept each
payload as data (tests/hostile/test_corpus.py §1); real bash gets each in every Motor container's env and env
function, as root and as an unprivileged user, and must create no marker (tests/test_motor_env_shell.py); so must
every Motor container's own command, exec probes and preStop, booted as its pod would boot it
(tests/conformance/test_container_commands_with_hostile_env.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest

NOBODY = 65534
needs_root_and_setpriv = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                                            reason="running as nobody needs root and setpriv")


def as_user(unprivileged: bool, groups: Sequence[int] = ()) -> list[str]:
    """The argv prefix that runs a command as root (this test process) or as nobody, with `groups` as its
    supplementary groups (none by default; a pod's fsGroup, as the kubelet adds it)."""
    if not unprivileged:
        return []
    supplementary = f"--groups={','.join(map(str, groups))}" if groups else "--clear-groups"
    return ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", supplementary]


def shell_payloads(marker: str) -> tuple[str, ...]:
    """Each form running `touch <marker>` where a shell would run it."""
    run = f"touch {marker}"
    return (f"$({run})", f"`{run}`", f"$$({run})", f"'; {run}; '", f'"; {run}; "', "${IFS}" + run.replace(" ", "${IFS}"),
            f"\\$({run})", "$((1+1))", "$(</etc/passwd)", f"a;{run}|c&d>e<f", "~root/*", "!!", f"() {{ :; }}; {run}",
            "%s%n%x")


@contextmanager
def folder_both_can_write() -> Iterator[Path]:
    """A folder root and nobody can both create a marker in. Not under pytest's tmp_path: its parents are 0700
    root's, so a marker nobody's payload would create there fails with EACCES and the run would look inert."""
    folder = Path(tempfile.mkdtemp(prefix="kvpool-shell-roads-", dir="/tmp"))
    try:
        folder.chmod(0o777)
        canary = folder / "canary"
        subprocess.run([*as_user(True), "touch", str(canary)], check=True, capture_output=True)
        assert canary.exists(), "nobody cannot create a file in the marker folder: its runs would prove nothing"
        canary.unlink()
        yield folder
    finally:
        shutil.rmtree(folder)
