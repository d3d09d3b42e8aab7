"""`python -m kvpool size`: the smallest pool of a stack that reaches a block lifetime or a number of cached tokens,
printed ready to paste into the stack file (how each number is derived: docs/sizing.md).

Examples:
    python -m kvpool size --stack mooncake-layerwise --lifetime 10   # blocks stay at least 10 s
    python -m kvpool size --stack dev --tokens 200000                # the pool keeps 200000 tokens after eviction
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from kvpool.cli.commands import exit_codes, options
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.offline import stack_settings
from kvpool.cli.views import sizing
from kvpool.cli.views.size_plan import plan, stack_lines


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "size", help="the smallest pool that reaches a block lifetime or a number of cached tokens",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    options.add_stack(parser)
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--lifetime", type=_seconds, metavar="SECONDS", help="the shortest block lifetime wanted")
    target.add_argument("--tokens", type=_tokens, metavar="N", help="tokens the pool keeps after an eviction")
    parser.set_defaults(handler=run)


def _seconds(text: str) -> float:
    """A lifetime is a finite number of seconds above 0 (float() also reads nan, inf and -5)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds, e.g. 10") from None
    if not math.isfinite(seconds) or seconds <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a lifetime: write a number of seconds above 0, e.g. 10")
    return seconds


def _tokens(text: str) -> int:
    try:
        tokens = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of tokens, e.g. 200000") from None
    if tokens <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of tokens: write a whole number above 0")
    return tokens


def run(args: argparse.Namespace) -> int:
    config = load_stack_config(args.project_dir, args.stack)
    settings = stack_settings(config)
    result = plan(settings.pool_sizing(), args.lifetime, args.tokens)
    print(f"Smallest pool of {args.stack} (set by {result.decided_by}):")
    print("\n".join(sizing.table([sizing.row(args.stack, settings, result.pool)])))
    print()
    print("\n".join(stack_lines(result)))
    return exit_codes.OK
