"""Files a stack names, read at preview/up time: only inside the project folder, and never echoed in errors.

A stack's configuration is data; whoever can edit it must not be able to make the program read (and publish in a
ConfigMap or a stack output) a file of the machine that runs `pulumi up`, such as /proc/self/environ or
~/.pulumi/credentials.json. So every path a stack names resolves (symlinks and `..` followed) inside the project
folder, or is refused naming the field. `motor_deployer_dir` is the one exception (it names Motor's checkout,
usually beside the project): it may point anywhere, but only the fixed list of deploy.py's files under it is read
(kvpool/internal/motor_config.py MOTOR_FILES), each of which must resolve inside that folder (`inside_folder`).

Errors name the field and the path, never the file's content.
"""

from __future__ import annotations

from pathlib import Path

from kvpool.errors import KvpoolError
from kvpool.internal.input_files import InputFileError, read_text


class ProjectFileError(KvpoolError):
    """A file a stack names lies outside the folder it may be read from, or cannot be read."""


def inside_folder(folder: Path, relative: str | Path, field: str, folder_name: str) -> Path:
    """`folder / relative` with symlinks and `..` resolved, refused unless it stays inside `folder` (resolved too)."""
    root = folder.resolve()
    path = (root / relative).resolve()
    if path != root and root not in path.parents:
        raise ProjectFileError(
            f"{field}: {relative} resolves to {path}, outside {folder_name} {root}; motor-kvpool reads only files "
            f"inside it (a symlink or `..` may not lead out). Copy the file into {folder_name}."
        )
    return path


def read_project_file(project_dir: Path, relative: str, field: str) -> tuple[Path, str]:
    """(resolved path, UTF-8 text, at most 1 MiB) of a file the stack names, relative to the project folder."""
    path = inside_folder(project_dir, relative, field, "the project folder")
    try:
        return path, read_text(path)
    except InputFileError as error:
        raise ProjectFileError(f"{field}: {error}") from None
