"""Every file the command writes, truncates or deletes, never through a symbolic link it did not make.

A repository is input like any other: a committed link at `out/<stack>/manifests`, `stacks/stack-file.schema.json`
or a stack file would make a preview or an import write into (or delete from) wherever it points. So below the
folder the user named (`--out`, `--stacks-dir`, DIR, the project), every folder on the way and the file itself must
be real; the file is opened with O_NOFOLLOW, so a link made between the check and the write is refused too.
"""

from __future__ import annotations

import os
from pathlib import Path

from kvpool.errors import KvpoolError


class LinkRefusedError(KvpoolError):
    """A path the command would write or delete through is a symbolic link."""


def _refused(path: Path) -> LinkRefusedError:
    return LinkRefusedError(
        f"{path} is a symbolic link (to {os.readlink(path)!r}); kvpool writes no file through a link it did not make: "
        f"remove the link, or name the real folder"
    )


def real_folder(folder: Path, below: Path) -> Path:
    """`folder`, created where missing, after checking that no component of it below `below` is a link."""
    current = below  # a folder outside `below` was named by the user (or Pulumi.yaml) as it is
    for step in folder.relative_to(below).parts if folder.is_relative_to(below) else ():
        current = current / step
        if current.is_symlink():
            raise _refused(current)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def write_file(path: Path, data: str | bytes, below: Path) -> Path:
    """Write `path` anew (text as UTF-8) inside `below`, refusing a link on the way or at the file itself."""
    real_folder(path.parent, below)
    if path.is_symlink():
        raise _refused(path)
    content = data.encode("utf-8") if isinstance(data, str) else data
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o666)
    except OSError:
        if path.is_symlink():  # made after the check above
            raise _refused(path) from None
        raise
    with os.fdopen(descriptor, "wb") as file:
        file.write(content)
    return path

