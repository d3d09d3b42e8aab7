"""The options several commands share, declared once so that each means one thing everywhere: `--stack STACK` is one
stack, the one whose stack file is <stackConfigDir>/Pulumi.STACK.yaml (`fleet --stack`, a filter, may be repeated)."""

from __future__ import annotations

import argparse

STACK_HELP = "the stack: <stackConfigDir>/Pulumi.STACK.yaml"


def add_stack(parser: argparse.ArgumentParser, help: str = STACK_HELP) -> None:  # noqa: A002 (argparse's own name)
    """The one stack a command reads (or, for import, writes)."""
    parser.add_argument("--stack", required=True, metavar="STACK", help=help)
