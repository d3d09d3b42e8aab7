"""`python -m kvpool preview`: what `pulumi preview` would show, computed offline, plus the rendered manifests.

Steps: merge the stack's config -> run the program under mocks -> run the checks (the policy pack plugs in
there) -> build and strictly validate the Kubernetes manifests -> write `<out>/<stack>/manifests/` and
`<out>/<stack>/outputs.json`. Nothing is written unless every step passed.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from components.errors import KvpoolError
from kvpool.manifests import (
    DEFAULT_KUBERNETES_VERSION,
    ValidationReport,
    kubernetes_objects,
    validate_objects,
    write_manifests,
)
from kvpool.mock_engine import ProgramRun, RecordedResource, run_program
from kvpool.property_values import integral_floats_to_ints, mask_paths
from kvpool.stack_config import load_stack_config

Check = Callable[[ProgramRun], list[str]]
"""Looks at a finished run and returns one message per violation; any message fails the preview."""


class PreviewCheckError(KvpoolError):
    """A check (for example the policy pack) reported violations."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        header = f"preview checks: {len(messages)} violation{'s' if len(messages) != 1 else ''}"
        super().__init__("\n".join([header, *(f"  - {message}" for message in messages)]))


@dataclass(frozen=True)
class PreviewResult:
    run: ProgramRun
    validation: ValidationReport
    manifest_files: list[Path]
    outputs_file: Path


def preview(
    project_dir: Path,
    stack: str,
    out_dir: Path,
    k8s_version: str = DEFAULT_KUBERNETES_VERSION,
    stack_references: Mapping[str, dict] | None = None,
    checks: Sequence[Check] = (),
) -> PreviewResult:
    """Preview `stack` of the program in `project_dir` and write `<out_dir>/<stack>/`."""
    project_dir, out_dir = Path(project_dir).resolve(), Path(out_dir).resolve()
    config = load_stack_config(project_dir, stack)
    run = run_program(project_dir, config, stack_references=stack_references)
    # Extension point between "program ran" and "files written": the policy pack (driven over its analyzer
    # gRPC protocol) comes in as one of these checks.
    violations = [message for check in checks for message in check(run)]
    if violations:
        raise PreviewCheckError(violations)
    objects = kubernetes_objects(run.resources)
    validation = validate_objects(objects, k8s_version)
    stack_dir = out_dir / stack
    manifest_files = write_manifests(objects, stack_dir / "manifests")
    outputs_file = stack_dir / "outputs.json"
    outputs_file.write_text(_outputs_json(run), encoding="utf-8")
    return PreviewResult(run, validation, manifest_files, outputs_file)


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
    parser.add_argument("--stack", required=True, help="stack name: reads <stackConfigDir>/Pulumi.<stack>.yaml")
    parser.add_argument("--out", type=Path, default=Path("out"), help="output folder (default: out)")
    parser.add_argument(
        "--k8s-version",
        default=DEFAULT_KUBERNETES_VERSION,
        help=f"Kubernetes version whose schema the manifests must match (default: {DEFAULT_KUBERNETES_VERSION})",
    )
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    result = preview(args.project_dir, args.stack, args.out, args.k8s_version)
    print("\n".join([*resource_tree(result.run.resources), "", *summary(result)]))
    return 0
