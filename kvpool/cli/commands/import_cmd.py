"""`python -m kvpool import`: write stacks/Pulumi.NAME.yaml from a deploy.py configuration.

Examples:
    python -m kvpool import --config-dir ../infer_engines/vllm --stack service-a
    python -m kvpool import --user-config user_config.json --env-config env.json --stack service-b \
        --set motor_deploy_config.image_name=registry.local/mindie-motor-vllm:3.0.0
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from kvpool.cli.commands import exit_codes, options
from kvpool.cli.engine.stack_config import stack_config_dir
from kvpool.cli.views.importer import ConversionError, import_pair, project_of
from kvpool.internal.input_files import InputFileError, loads_yaml


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser("import", help="convert a deploy.py user_config.json + env.json into a stack file")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--config-dir", type=Path, help="folder holding user_config.json and env.json")
    source.add_argument("--user-config", type=Path, help="user_config.json (with --env-config)")
    parser.add_argument("--env-config", type=Path, help="env.json (with --user-config)")
    options.add_stack(parser, help="the stack to write: STACKS_DIR/Pulumi.STACK.yaml")
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.add_argument("--stacks-dir", type=Path,
                        help="where stack files live (default: the project's stack folder, stacks/ without Pulumi.yaml)")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="PATH=VALUE",
        help="set a user_config field while importing (VALUE read as YAML), e.g. to fill Motor's placeholders",
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing stack file")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    if args.config_dir is not None:
        user_config, env_config = args.config_dir / "user_config.json", args.config_dir / "env.json"
    elif args.env_config is None:
        raise ConversionError("--user-config needs --env-config")
    else:
        user_config, env_config = args.user_config, args.env_config
    overrides = {}
    for assignment in args.set:
        path, separator, value = assignment.partition("=")
        if not separator or not path:
            raise ConversionError(f"--set {assignment!r}: write PATH=VALUE")
        try:
            overrides[path] = loads_yaml(value, "VALUE")
        except InputFileError as error:
            detail = str(error).removeprefix("VALUE").removeprefix(":")
            raise ConversionError(f"--set {assignment!r}: VALUE is read as YAML: {detail}") from None
    stacks_dir = args.stacks_dir or stack_config_dir(args.project_dir) or args.project_dir / "stacks"
    target, conversion = import_pair(user_config, env_config, args.stack, stacks_dir, overrides, args.force)
    print(f"wrote {target}")
    for note in conversion.notes:
        print(f"  - {note}")
    print(next_step(target, args.stack))
    return exit_codes.OK


def next_step(target: Path, stack: str) -> str:
    """The preview command that reads `target`: preview finds a stack file in its project's stackConfigDir only."""
    command = f"{_interpreter()} -m kvpool preview --stack {stack}"
    folder = target.parent.resolve()
    project = project_of(folder)
    if project is not None:
        where = "" if project == Path.cwd().resolve() else f" --project-dir {_shown(project)}"
        return f"next: {command}{where}"
    home = stack_config_dir(Path.cwd())
    into = f"into {_shown(home.resolve())}/ " if home is not None else "into the stack folder of a Pulumi project "
    return (f"next: {_shown(folder)} is no project's stack folder, so preview cannot read it there; copy "
            f"{target.name} {into}and run {command}")


def _interpreter() -> str:
    """This Python as the user can type it again: relative to the current folder when inside it (venv/bin/python)."""
    return _shown(Path(sys.executable))


def _shown(path: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(Path.cwd())) or "."
    except ValueError:
        return str(absolute)
