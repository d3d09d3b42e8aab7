"""`python -m kvpool size`: the smallest pool of a stack that reaches a block lifetime or a number of cached tokens,
printed ready to paste into the stack file (how each number is derived: docs/sizing.md).

Examples:
    python -m kvpool size --stack mooncake-layerwise --lifetime 10   # blocks stay at least 10 s
    python -m kvpool size --stack dev --tokens 200000                # the pool keeps 200000 tokens after eviction
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.offline import stack_settings
from kvpool.cli.views import sizing
from kvpool.cli.views.size_plan import plan, stack_lines


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "size", help="the smallest pool that reaches a block lifetime or a number of cached tokens",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--lifetime", type=float, metavar="SECONDS", help="the shortest block lifetime wanted")
    target.add_argument("--tokens", type=int, metavar="N", help="tokens the pool keeps after an eviction")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = load_stack_config(args.project_dir, args.stack)
    settings = stack_settings(config)
    result = plan(settings.pool_sizing(), args.lifetime, args.tokens)
    print(f"Smallest pool of {args.stack} (set by {result.decided_by}):")
    print("\n".join(sizing.table([sizing.row(args.stack, settings, result.pool)])))
    print()
    print("\n".join(stack_lines(result)))
    return 0
