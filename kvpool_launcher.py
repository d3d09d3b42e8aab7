"""The `kvpool` command that `pip install .` puts on PATH: the offline tooling of a motor-kvpool project, from any
directory (`kvpool preview --project-dir ~/motor-kvpool --stack dev`).

The tooling runs the project's own program and policy pack, so the command runs the project's own kvpool/ too, as
`python -m kvpool` does from the project folder, never a copy frozen at install time: the project is --project-dir
when given, else the current directory.
"""

from __future__ import annotations

import sys
from pathlib import Path

PROJECT_DIR_OPTION = "--project-dir"


def project_dir(argv: list[str]) -> Path:
    for index, argument in enumerate(argv):
        if argument == PROJECT_DIR_OPTION and index + 1 < len(argv):
            return Path(argv[index + 1])
        if argument.startswith(f"{PROJECT_DIR_OPTION}="):
            return Path(argument.partition("=")[2])
    return Path.cwd()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    project = project_dir(argv).resolve()
    if not (project / "kvpool" / "commands" / "cli.py").is_file():
        print(f"error: {project} is not a motor-kvpool project (no kvpool/commands/cli.py there); run kvpool in the project "
              f"folder or pass {PROJECT_DIR_OPTION} DIR", file=sys.stderr)
        return 1
    sys.path.insert(0, str(project))  # the project's own kvpool, found first
    from kvpool.commands.cli import main as kvpool_main

    return kvpool_main(argv)
