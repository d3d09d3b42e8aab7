"""`python -m kvpool fleet`: which services share which KV pool, and what is wrong between them.

Examples:
    python -m kvpool fleet                              # the table, the pools, the problems
    python -m kvpool fleet --json                       # the same as JSON
    python -m kvpool fleet --svg fleet.svg --png fleet.png
    python -m kvpool fleet --previews out               # owners' outputs from `kvpool preview --out out`
    python -m kvpool fleet --source backend             # the stacks as they are up, from the Pulumi backend
    python -m kvpool fleet --stack service-a --stack service-b   # only these stacks
    python -m kvpool fleet --check-destroy --stack service-a   # before `pulumi destroy` (make destroy runs it)
    python -m kvpool fleet --source backend --kubeconfig ~/.kube/config   # and each cluster's capacity, each pool's readiness

Two sources, one model. offline (the default): every stack file of the project; an owner's `kv_store` output
comes from its offline preview (the stacks' programs run in one process per core, or --jobs N). backend: every
stack of the project in the backend the `pulumi` CLI is logged in to, its config, its outputs and its objects as
its last `pulumi up` left them (through the SDK's Automation API). Checks each consumer against its owner with
the consumer's own contract checks (not admitted, compatibility key, no such stack, no kv_store output, any other
mismatch), and, between the stacks of one cluster (top-level setting `cluster`), what the cluster allocates once:
NodePorts, namespaces, objects, host ports (kvpool/cli/fleet/clashes.py; on what each stack's preview renders or its
state holds, on its settings where the source has neither). Exit 1 when there is any problem.
--kubeconfig FILE also reads each cluster's nodes (the context named as the stacks' `cluster` setting; the current
context for the default cluster) and warns, without failing, when the engine pods the stacks of a cluster ask for
do not fit on its Ready nodes that carry their hardware labels (kvpool/cli/fleet/capacity.py); and, in each
owner's cluster, whether its store serves: the Endpoints of the Service its `kv_store` output names and the
workload behind it (kvpool/cli/fleet/pools.py), one line per pool, never changing the exit code.
--check-destroy --stack STACK checks only that no stack file's target_stack names STACK (exit 1 naming each that
does, on stderr). Exit codes: kvpool/cli/commands/exit_codes.py.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kvpool.cli.commands import exit_codes
from kvpool.cli.fleet import graph as fleet_graph
from kvpool.cli.fleet import report as fleet_report
from kvpool.cli.fleet.backend import backend_facts
from kvpool.cli.fleet.model import build_fleet, destroy_problems
from kvpool.cli.fleet.nodes import cluster_nodes
from kvpool.cli.fleet.offline import consumers_of, offline_facts
from kvpool.cli.fleet.pools import pool_readiness
from kvpool.errors import KvpoolError

SOURCES = ("offline", "backend")
CHECK_DESTROY_OF_STACK = ""
"""--check-destroy without a value: the stack is --stack's, as in every other command that names one stack."""


class UsageError(KvpoolError):
    """Options that do not go together."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "fleet", help="the owners and consumers of KV pools across the project's stacks, checked",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.add_argument("--source", choices=SOURCES, default="offline",
                        help="offline: the stack files and their previews (default); backend: the stacks' config"
                             ", outputs and state in the Pulumi backend, through the Pulumi CLI")
    parser.add_argument("--stack", action="append", default=[], metavar="NAME",
                        help="only this stack (repeat for several; default: every stack of the source)")
    parser.add_argument("--previews", type=Path, metavar="DIR",
                        help="offline: read owners' outputs from DIR/<stack>/outputs.json (kvpool preview --out DIR)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="offline: run the stacks' programs in N processes (default: one per core; 1: in this one)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--svg", type=Path, metavar="FILE", help="draw the fleet into FILE (SVG)")
    parser.add_argument("--png", type=Path, metavar="FILE", help="draw the fleet into FILE (PNG)")
    parser.add_argument("--kubeconfig", type=Path, metavar="FILE",
                        help="read each cluster's nodes through FILE and warn when its stacks' engine pods do not fit, "
                             "and whether each owner's store has ready pods (context: the `cluster` setting's name, "
                             "else the current one for the default cluster)")
    parser.add_argument("--check-destroy", nargs="?", const=CHECK_DESTROY_OF_STACK, metavar="STACK",
                        help="only this check, of the one --stack: exit 1 when `pulumi destroy` of it would leave a "
                             "consumer without a pool (reads the stack files only); `--check-destroy STACK` is the "
                             "older spelling")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.check_destroy is not None:
        return check_destroy(args.project_dir, destroyed_stack(args))
    if args.source == "backend":
        if args.previews is not None:
            raise UsageError("--previews: the backend source reads each stack's outputs from the backend; drop "
                             "--previews or --source backend")
        facts = backend_facts(args.project_dir, args.stack)
    else:
        facts = offline_facts(args.project_dir, args.previews, args.stack, args.jobs)
    nodes = cluster_nodes(args.kubeconfig, {f.settings.cluster for f in facts}) if args.kubeconfig else ()
    readiness = pool_readiness(args.kubeconfig, facts) if args.kubeconfig else None
    fleet = build_fleet(facts, nodes, readiness)
    for path in (args.svg, args.png):
        if path is not None:
            fleet_graph.render(fleet, path)
    if args.json:
        print(json.dumps(fleet_report.as_json(fleet), indent=2))
    else:
        print("\n".join(fleet_report.report(fleet)))
    return exit_codes.REFUSED if fleet.problems else exit_codes.OK


def destroyed_stack(args: argparse.Namespace) -> str:
    """The one stack --check-destroy checks: --stack's, or the value of the older `--check-destroy STACK`."""
    stacks = [*args.stack, *([args.check_destroy] if args.check_destroy != CHECK_DESTROY_OF_STACK else [])]
    if len(stacks) != 1:
        raise UsageError(f"--check-destroy checks one stack: give it as --stack NAME (got {len(stacks)})")
    return stacks[0]


def check_destroy(project_dir: Path, stack: str) -> int:
    problems = destroy_problems(*consumers_of(project_dir, stack))
    if problems:  # a refusal: on stderr, as every command's
        lines = [f"pulumi destroy of {stack}: refused", *fleet_report.problem_lines(problems)]
        print("\n".join(lines), file=sys.stderr)
        return exit_codes.REFUSED
    print(f"pulumi destroy of {stack}: no stack reads its KV store")
    return exit_codes.OK
