"""`python -m kvpool preview`: what `pulumi preview` would show, computed offline, plus the rendered manifests.

Steps: merge the stack's config -> run the program under mocks -> run the policy pack over the run (as
`pulumi preview --policy-pack` would; a mandatory violation stops here) -> build and strictly validate the
Kubernetes manifests -> write `<out>/<stack>/manifests/` and `<out>/<stack>/outputs.json`. Nothing is written
unless every step passed.

The policy pack is `<project-dir>/policies` when it has a PulumiPolicy.yaml, else none; --policy-pack DIR names
another, --no-policy runs none. --policy-config FILE is the CLI's `--policy-pack-config` file:
`{"all": "mandatory", "<policy>": "disabled", "<policy>": {"enforcementLevel": "advisory", "<property>": 3}}`.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
from collections import Counter
from collections.abc import Iterator
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from components.errors import KvpoolError
from components.units import integral_floats_to_ints
from kvpool.manifests import (
    DEFAULT_KUBERNETES_VERSION,
    ValidationReport,
    kubernetes_objects,
    validate_objects,
    write_manifests,
)
from kvpool.mock_engine import STACK_REFERENCE_TYPE, ProgramRun, RecordedResource, run_program
from kvpool.policy_config import load_policy_config_file
from kvpool.policy_runner import PolicyReport, StartedPolicyPack
from kvpool.property_values import mask_paths
from kvpool.stack_config import load_stack_config
from kvpool.stack_references import read_outputs_file
from kvpool.stack_references import resolve as resolve_references

DEFAULT_POLICY_PACK_DIR = "policies"
"""Below the project directory; the preview runs the pack there when it has a PulumiPolicy.yaml."""


class PolicyViolationError(KvpoolError):
    """The policy pack reported mandatory violations; the message lists every violation, as the preview would."""

    def __init__(self, report: PolicyReport, run: ProgramRun) -> None:
        self.report = report
        self.run = run  # the plan the violations are about, for the CLI to show as `pulumi preview` does
        count = len(report.mandatory)
        header = (
            f"policy pack {report.pack_name} {report.pack_version}: "
            f"{count} mandatory violation{'s' if count != 1 else ''}, nothing written"
        )
        super().__init__("\n".join([header, *policy_lines(report)]))


class OutputFolderError(KvpoolError):
    """--out cannot be written."""


class PolicyOptionsError(KvpoolError):
    """The command line's policy options contradict each other."""


@dataclass(frozen=True)
class PreviewResult:
    run: ProgramRun
    validation: ValidationReport
    manifest_files: list[Path]
    outputs_file: Path
    policy_report: PolicyReport | None = None
    """None when no policy pack ran."""


def preview(
    project_dir: Path,
    stack: str,
    out_dir: Path,
    k8s_version: str = DEFAULT_KUBERNETES_VERSION,
    stack_references: Mapping[str, dict] | None = None,
    policy_pack: Path | None = None,
    policy_config: Mapping[str, Any] | None = None,
) -> PreviewResult:
    """Preview `stack` of the program in `project_dir` and write `<out_dir>/<stack>/`. `stack_references`: outputs
    of referenced stacks that are not previewed here (--stack-outputs). With `policy_pack`, the
    pack analyzes the run first (`policy_config`: a `--policy-pack-config` file's content); mandatory
    violations raise PolicyViolationError, advisory ones come back in the result."""
    if policy_config is not None and policy_pack is None:
        raise ValueError("policy_config configures a policy pack, but no policy_pack was given")
    project_dir, out_dir = Path(project_dir).resolve(), Path(out_dir).resolve()
    config = load_stack_config(project_dir, stack)
    with _fewer_collections(), contextlib.ExitStack() as stack_of_pack:
        # The pack's process starts first: its imports overlap the program run; it analyzes the run while the
        # manifests are built and checked here. What it reports still comes first, as from `pulumi preview`.
        pack = None
        if policy_pack is not None:
            pack = stack_of_pack.enter_context(StartedPolicyPack(policy_pack, config))
        # Referenced stacks of this project are previewed first, so a consumer sees its provider's real outputs.
        references = resolve_references(project_dir, config, stack_references)
        run = run_program(project_dir, config, stack_references=references)
        analysis = pack.analyze_in_background(run, policy_config) if pack is not None else None
        objects = kubernetes_objects(run.resources)
        try:
            validation = validate_objects(objects, k8s_version)
        except Exception as error:  # noqa: BLE001 (raised below, after the pack's findings, which come first)
            validation_failure: Exception | None = error
        else:
            validation_failure = None
        policy_report = analysis.result() if analysis is not None else None
    if policy_report is not None and policy_report.mandatory:
        raise PolicyViolationError(policy_report, run)
    if validation_failure is not None:
        raise validation_failure
    stack_dir = out_dir / stack  # load_stack_config checked that `stack` is a stack name, not a path
    outputs_file = stack_dir / "outputs.json"
    try:
        manifest_files = write_manifests(objects, stack_dir / "manifests")
        outputs_file.write_text(_outputs_json(run), encoding="utf-8")
    except OSError as error:
        where = error.filename or stack_dir
        raise OutputFolderError(f"--out {out_dir}: cannot write {where}: {error.strerror or error}") from None
    return PreviewResult(run, validation, manifest_files, outputs_file, policy_report)


@contextlib.contextmanager
def _fewer_collections() -> Iterator[None]:
    """The cyclic garbage collector walks every object the imports made (the SDK's and pydantic's classes) again and
    again while the program allocates, about a tenth of the run: during a preview, what exists before it is left
    out of collections (gc.freeze) and collections run 100 times less often; as before afterwards."""
    thresholds = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(thresholds[0], 1) * 100, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def default_policy_pack(project_dir: Path) -> Path | None:
    """`<project_dir>/policies` when it is a policy pack (has a PulumiPolicy.yaml), else None."""
    pack_dir = Path(project_dir) / DEFAULT_POLICY_PACK_DIR
    return pack_dir if (pack_dir / "PulumiPolicy.yaml").is_file() else None


def _outputs_json(run: ProgramRun) -> str:
    outputs = mask_paths(integral_floats_to_ints(run.outputs), run.secret_output_paths)
    return json.dumps(outputs, sort_keys=True, indent=2) + "\n"


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
    for reference in sorted(resource.resource_id for resource in run.resources if resource.type == STACK_REFERENCE_TYPE):
        lines.append(f"Stack reference: {reference} (its outputs read from its own preview or --stack-outputs)")
    secret_count = len({path[0] for path in run.secret_output_paths})
    lines.append(f"Outputs: {len(run.outputs)} ({secret_count} secret, written as \"[secret]\")")
    if run.log_messages:
        lines.append("Program log:")
        lines += [f"    {message}" for message in run.log_messages]
    manifest_dir = _display(result.outputs_file.parent / "manifests")
    lines.append(f"Wrote {manifest_dir}/ ({len(result.manifest_files)} files) and {_display(result.outputs_file)}")
    return lines


def policy_lines(report: PolicyReport) -> list[str]:
    """Each violation as `[level] policy  resource` over its indented detail, then a count line. Ordered as report.violations is, so the text is the same on every run."""
    lines: list[str] = []
    for violation in report.violations:
        lines.append(f"[{violation.enforcement_level}] {violation.policy_name}  {violation.resource_label}")
        lines += [f"    {line}" for line in (violation.detail or violation.description).splitlines()]
    advisory = len(report.violations) - len(report.mandatory)
    violations = "violation" if len(report.violations) == 1 else "violations"
    policies = f"{len(report.policies)} polic{'y' if len(report.policies) == 1 else 'ies'}"
    lines.append(
        f"Policies: {report.pack_name} {report.pack_version}: {len(report.mandatory)} mandatory, {advisory} advisory "
        f"{violations} ({policies})"
    )
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
    parser.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
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
        help=f"policy pack to run (default: <project-dir>/{DEFAULT_POLICY_PACK_DIR} when it has a PulumiPolicy.yaml)",
    )
    policy.add_argument("--no-policy", action="store_true", help="run no policy pack")
    parser.add_argument(
        "--policy-config", type=Path, metavar="FILE", help="policy pack config file (pulumi's --policy-pack-config)"
    )
    parser.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    policy_pack = None if args.no_policy else args.policy_pack or default_policy_pack(args.project_dir)
    if args.policy_config is not None and policy_pack is None:
        if args.no_policy:
            raise PolicyOptionsError("--policy-config configures a policy pack, but --no-policy turns the pack off")
        expected = Path(args.project_dir) / DEFAULT_POLICY_PACK_DIR / "PulumiPolicy.yaml"
        raise PolicyOptionsError(
            f"--policy-config configures a policy pack, but there is no policy pack (no {expected}; "
            "name one with --policy-pack DIR)"
        )
    policy_config = load_policy_config_file(args.policy_config) if args.policy_config is not None else None
    try:
        result = _preview_from_args(args, policy_pack, policy_config)
    except PolicyViolationError as error:
        print("\n".join(resource_tree(error.run.resources)))  # the plan, then the violations on stderr
        raise
    lines = [*resource_tree(result.run.resources), "", *summary(result)]
    if result.policy_report is not None:
        lines += ["", *policy_lines(result.policy_report)]
    print("\n".join(lines))
    return 0


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
