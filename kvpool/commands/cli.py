"""The `python -m kvpool` command line: one module per subcommand, each with `register(subparsers)`.

Exit codes: 0 success, 1 invalid input (any KvpoolError, usage errors), 2 a bug in the tool or the program.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from components.errors import KvpoolError
from kvpool.commands import diff_cmd, fleet_cmd, import_cmd, preview_cmd, settings_cmd

SUBCOMMANDS = (preview_cmd, diff_cmd, import_cmd, settings_cmd, fleet_cmd)
"""Modules whose `register(subparsers)` adds one subparser with a `handler(args) -> int` default."""


class UsageError(KvpoolError):
    """The command line itself is wrong (unknown option, missing argument)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse would exit with 2, which this tool keeps for its own bugs.
        raise UsageError(f"{message}\n{self.format_usage().rstrip()}")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m kvpool", description="Offline tooling of motor-kvpool (no Pulumi CLI needed).")
    parser.add_argument("--debug", action="store_true", help="show the traceback of an internal error")
    subparsers = parser.add_subparsers(metavar="COMMAND", required=True)
    for subcommand in SUBCOMMANDS:
        subcommand.register(subparsers)
    for subparser in subparsers.choices.values():
        # Accept --debug after the subcommand too; SUPPRESS keeps a --debug given before it.
        subparser.add_argument(
            "--debug", action="store_true", default=argparse.SUPPRESS, help="show the traceback of an internal error"
        )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    debug = False
    try:
        args = build_parser().parse_args(argv)
        debug = args.debug
        return int(args.handler(args))
    except KvpoolError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    except Exception as error:  # noqa: BLE001 (anything else is a bug; say so briefly)
        if debug:
            traceback.print_exc()
        print(f"internal error: {type(error).__name__}: {error}", file=sys.stderr)
        if not debug:
            print("run with --debug for the traceback", file=sys.stderr)
        return 2
