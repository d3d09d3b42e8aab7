"""`python -m kvpool preview`: what `pulumi preview` would show, computed offline, plus the rendered manifests.

Steps: merge the stack's config -> run the program under mocks -> run the policy pack over the run (as
`pulumi preview --policy-pack` would; a mandatory violation stops here) -> build and strictly validate the
Kubernetes manifests -> write `<out>/<stack>/manifests/` and `<out>/<stack>/outputs.json`. Nothing is written
unless every step passed. First of all, the stack is refused when it asks its cluster for a NodePort or a namespace
that another stack file of the project deploying to the same cluster asks for (`cluster`; kvpool/cli/fleet/clashes.py).

The policy pack is `<project-dir>/policies` when it has a PulumiPolicy.yaml, else none; --policy-pack DIR names
another, --no-policy runs none. --policy-config FILE is the CLI's `--policy-pack-config` file:
`{"all": "mandatory", "<policy>": "disabled", "<policy>": {"enforcementLevel": "advisory", "<property>": 3}}`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kvpool.cli.commands import exit_codes, options
from kvpool.cli.engine.mock_engine import STACK_REFERENCE_TYPE, RecordedResource
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.cli.engine.stack_references import read_outputs_file
from kvpool.cli.fleet.offline import (
    check_cluster_clashes,
    is_service_stack,
    stack_settings,
)
from kvpool.cli.policy_host.pack_config import load_policy_config_file
from kvpool.cli.preview import (
    PROJECT_POLICY_PACK_DIR,
    PolicyOptionsError,
    PolicyViolationError,
    PreviewResult,
    default_policy_pack,
    policy_lines,
    preview,
)
from kvpool.cli.views import sizing
from kvpool.cli.views.manifests import DEFAULT_KUBERNETES_VERSION
from kvpool.internal.local_backend import local_stack_reference


def resource_tree(resources: list[RecordedResource]) -> list[str]:
    """`type  name` lines, children indented under their parent and sorted by (type, name)."""
    urns = {resource.urn for resource in resources}
    children: dict[str | None, list[RecordedResource]] = {}
    for resource in resources:
        parent = resource.parent_urn if resource.parent_urn in urns else None
        children.setdefault(parent, []).append(resource)
    lines: list[str] = []

    def add(parent: str | None, depth: int) -> None:
        for resource in sorted(children.get(parent, []), key=lambda r: (r.type, r.name)):
            lines.append(f"{'    ' * depth}{resource.type}  {resource.name}")
            add(resource.urn, depth + 1)

    add(None, 0)
    return lines


def summary(result: PreviewResult) -> list[str]:
    run, validation = result.run, result.validation
    counts = Counter(resource.type for resource in run.resources)
    lines = [f"Resources: {len(run.resources)}"]
    lines += [f"    {count:>3}  {type_}" for type_, count in sorted(counts.items())]
    lines.append(
        f"Manifests: {len(validation.validated)} validated against Kubernetes {validation.kubernetes_version} "
        f"(strict), {len(validation.not_schema_checked)} not schema-checked"
    )
    lines += [f"    {line}" for line in validation.not_schema_checked]
    own = local_stack_reference(run.project, run.stack)
    for reference in sorted(resource.resource_id for resource in run.resources if resource.type == STACK_REFERENCE_TYPE):
        source = ("this stack's last outputs: which engine instances run and roll in waves; none unless "
                  "--stack-outputs gives them" if reference == own else "its outputs read from its own preview or "
                  "--stack-outputs")
        lines.append(f"Stack reference: {reference} ({source})")
    secret_count = len({path[0] for path in run.secret_output_paths})
    lines.append(f"Outputs: {len(run.outputs)} ({secret_count} secret, written as \"[secret]\")")
    if run.log_messages:
        lines.append("Program log:")
        lines += [f"    {message}" for message in run.log_messages]
    manifest_dir = _display(result.outputs_file.parent / "manifests")
    lines.append(f"Wrote {manifest_dir}/ ({len(result.manifest_files)} files) and {_display(result.outputs_file)}")
    return lines


def _display(path: Path) -> str:
    """Relative to the current directory when below it: shorter, and the same on every machine."""
    return os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "preview",
        help="run the program offline, validate its manifests, write <out>/<stack>/",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    options.add_stack(parser)
    parser.add_argument("--out", type=Path, default=Path("out"), help="output folder (default: out)")
    parser.add_argument(
        "--k8s-version",
        default=DEFAULT_KUBERNETES_VERSION,
        help=f"Kubernetes version whose schema the manifests must match (default: {DEFAULT_KUBERNETES_VERSION})",
    )
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.add_argument(
        "--stack-outputs",
        type=Path,
        metavar="FILE",
        help='outputs of referenced stacks not in this project: {"<org>/<project>/<stack>": {<outputs>}}',
    )
    policy = parser.add_mutually_exclusive_group()
    policy.add_argument(
        "--policy-pack",
        type=Path,
        metavar="DIR",
        help=f"policy pack to run (default: <project-dir>/{PROJECT_POLICY_PACK_DIR} when it has a PulumiPolicy.yaml, "
             "else motor-kvpool's)",
    )
    policy.add_argument("--no-policy", action="store_true", help="run no policy pack")
    parser.add_argument(
        "--policy-config", type=Path, metavar="FILE", help="policy pack config file (pulumi's --policy-pack-config)"
    )
    parser.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    policy_pack = None if args.no_policy else args.policy_pack or default_policy_pack(args.project_dir)
    if args.policy_config is not None and policy_pack is None:
        raise PolicyOptionsError("--policy-config configures a policy pack, but --no-policy turns the pack off")
    policy_config = load_policy_config_file(args.policy_config) if args.policy_config is not None else None
    # What `pulumi up` of this stack would meet in its cluster from the project's other stacks, refused first.
    config = load_stack_config(args.project_dir, args.stack)
    for line in check_cluster_clashes(args.project_dir, config):
        print(f"note: {line}", file=sys.stderr)
    try:
        result = _preview_from_args(args, policy_pack, policy_config)
    except PolicyViolationError as error:
        print("\n".join(resource_tree(error.run.resources)))  # the plan, then the violations on stderr
        raise
    lines = [*resource_tree(result.run.resources), "", *summary(result), *sizing_lines(config)]
    if result.policy_report is not None:
        lines += ["", *policy_lines(result.policy_report)]
    print("\n".join(lines))
    return exit_codes.OK


def sizing_lines(config: StackConfig) -> list[str]:
    """The stack's KV pool sizing; none for a program that is not a motor-kvpool service."""
    if not is_service_stack(config):
        return []
    settings = stack_settings(config)
    return ["", "KV pool sizing (docs/sizing.md):", *sizing.table([sizing.row(config.stack, settings)])]


def _preview_from_args(
    args: argparse.Namespace, policy_pack: Path | None, policy_config: Mapping[str, Any] | None
) -> PreviewResult:
    return preview(
        args.project_dir,
        args.stack,
        args.out,
        args.k8s_version,
        stack_references=read_outputs_file(args.stack_outputs) if args.stack_outputs else None,
        policy_pack=policy_pack,
        policy_config=policy_config,
    )
