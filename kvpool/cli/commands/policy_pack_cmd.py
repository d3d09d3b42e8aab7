"""`kvpool policy-pack-dir`: the folder of motor-kvpool's policy pack, for the real CLI:

    pulumi preview --policy-pack "$(kvpool policy-pack-dir)"

The pack runs in the Python first on PATH (activate the virtualenv that has motor-kvpool installed)."""

from __future__ import annotations

import argparse

from kvpool.cli.commands import exit_codes
from kvpool.policies import PACK_DIR


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "policy-pack-dir", help="print the folder of the policy pack, for pulumi preview --policy-pack",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    print(PACK_DIR)
    return exit_codes.OK
