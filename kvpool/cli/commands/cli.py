"""The `python -m kvpool` command line: one module per subcommand, each with `register(subparsers)`.

Exit codes: exit_codes.py, one meaning each (0 ok, 1 refused input, 2 a bug in the tool, 3 a mandatory policy
violation, 4 has changes).
"""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from kvpool.cli.commands import exit_codes
from kvpool.errors import KvpoolError

SUBCOMMANDS = {
    "preview": "kvpool.cli.commands.preview_cmd",
    "diff": "kvpool.cli.commands.diff_cmd",
    "import": "kvpool.cli.commands.import_cmd",
    "settings": "kvpool.cli.commands.settings_cmd",
    "fleet": "kvpool.cli.commands.fleet_cmd",
    "size": "kvpool.cli.commands.size_cmd",
    "policy-pack-dir": "kvpool.cli.commands.policy_pack_cmd",
    "stack-schema": "kvpool.cli.commands.stack_schema_cmd",
    "component-package": "kvpool.cli.commands.component_package_cmd",
}
"""Each command's module, whose `register(subparsers)` adds the subparser of that name with a `handler(args) -> int`
default. Only the command given is imported (the others' imports cost `kvpool preview` a tenth of its start and
some MiB); without a known command, all are, for the usage and the list of commands."""


PROG = "kvpool" if Path(sys.argv[0]).name == "kvpool" else "python -m kvpool"
"""As the user typed it: the installed command, or the module from a checkout."""


class UsageError(KvpoolError):
    """The command line itself is wrong (unknown option, missing argument)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse would exit with 2, which this tool keeps for its own bugs: a usage error is refused input.
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of `argv`'s command (the first argument not an option: the top level has only flags), or of
    every command."""
    parser = _Parser(
        prog=PROG, usage=f"{PROG} [--project-dir DIR] COMMAND [options]",
        description="The offline tooling of a motor-kvpool project (no Pulumi CLI needed): it runs the project's program "
                    "and policy pack, in the project's folder or on the one --project-dir DIR names. "
                    f"`{PROG} COMMAND --help` shows a command's options.",
    )
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    subparsers = parser.add_subparsers(metavar="COMMAND", required=True, prog=PROG)
    command = next((arg for arg in (sys.argv[1:] if argv is None else argv) if not arg.startswith("-")), None)
    for name in [command] if command in SUBCOMMANDS else SUBCOMMANDS:
        importlib.import_module(SUBCOMMANDS[name]).register(subparsers)
    for subparser in subparsers.choices.values():
        # Accept --debug after the subcommand too; SUPPRESS keeps a --debug given before it.
        subparser.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an internal error"
        )
    return parser


def _project_dir_after_the_command(argv: Sequence[str]) -> list[str]:
    """`--project-dir DIR COMMAND ...` as `COMMAND --project-dir DIR ...`: every command that reads a project takes
    the option, so it may come first too."""
    arguments = list(argv)
    if arguments[:1] == ["--project-dir"] and len(arguments) >= 3:
        return [arguments[2], *arguments[:2], *arguments[3:]]
    if arguments[:1] and arguments[0].startswith("--project-dir=") and len(arguments) >= 2:
        return [arguments[1], arguments[0], *arguments[2:]]
    return arguments


def _shown(path: object, limit: int = 200) -> str:
    text = str(path)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def main(argv: Sequence[str] | None = None) -> int:
    debug = False
    argv = _project_dir_after_the_command(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser(argv).parse_args(argv)
        debug = args.debug
        return int(args.handler(args))
    except KvpoolError as error:
        print(f"error: {error}", file=sys.stderr)
        return exit_codes.of_error(error)
    except OSError as error:  # a path the user gave or the project names: refused input, not a bug of the tool
        print(f"error: {_shown(error.filename)}: {error.strerror or error}", file=sys.stderr)
        return exit_codes.REFUSED
    except Exception as error:  # noqa: BLE001 (anything else is a bug; say so briefly)
        if debug:
            traceback.print_exc()
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if not debug:
            print("run with --debug for the traceback", file=sys.stderr)
        return exit_codes.INTERNAL_ERROR
