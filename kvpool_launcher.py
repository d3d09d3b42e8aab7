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


USAGE = f"""usage: kvpool [{PROJECT_DIR_OPTION} DIR] COMMAND [options]

The offline tooling of a motor-kvpool project (no Pulumi CLI needed): it runs the project's own program and policy
pack, so it works in a project folder, or on the project {PROJECT_DIR_OPTION} DIR names.

commands:
  preview    offline preview of a stack: the plan, the manifests, the policy pack's findings
  diff       what a change of a stack does, against a base commit or the live cluster
  import     write a stack file from deploy.py's user_config.json and env.json
  settings   a stack's settings with every default filled in
  fleet      the stacks of the project: who uses whose KV store, clashes in a cluster
  size       the smallest KV pool that keeps blocks a given time or holds a given number of tokens

`kvpool {PROJECT_DIR_OPTION} DIR COMMAND --help` shows a command's options."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    project = project_dir(argv).resolve()
    if not (project / "kvpool" / "commands" / "cli.py").is_file():
        if not argv or argv[0] in ("-h", "--help"):
            print(USAGE)
            return 0
        print(f"error: {project} is not a motor-kvpool project (no kvpool/commands/cli.py there); run kvpool in the project "
              f"folder or pass {PROJECT_DIR_OPTION} DIR", file=sys.stderr)
        return 1
    sys.path.insert(0, str(project))  # the project's own kvpool, found first
    from kvpool.commands.cli import main as kvpool_main

    return kvpool_main(argv)
