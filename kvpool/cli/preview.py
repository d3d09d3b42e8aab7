"""The offline preview as a library: what `pulumi preview` would show, computed offline, plus the rendered
manifests (`python -m kvpool preview` is kvpool/cli/commands/preview_cmd.py).

Steps: merge the stack's config -> run the program under mocks -> run the policy pack over the run (as
`pulumi preview --policy-pack` would; a mandatory violation stops here) -> build and strictly validate the
Kubernetes manifests -> write `<out>/<stack>/manifests/` and `<out>/<stack>/outputs.json`. Nothing is written
unless every step passed.
"""

from __future__ import annotations

import contextlib
import gc
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kvpool.cli.engine.mock_engine import ProgramRun, run_program
from kvpool.cli.engine.property_values import mask_paths
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_references import resolve as resolve_references
from kvpool.cli.policy_host.runner import PolicyReport, StartedPolicyPack
from kvpool.cli.views.manifests import (
    DEFAULT_KUBERNETES_VERSION,
    ValidationReport,
    kubernetes_objects,
    manifest_texts,
    validate_objects,
    write_manifests,
)
from kvpool.internal.written_files import write_file
from kvpool.errors import KvpoolError
from kvpool.internal.units import integral_floats_to_ints
from kvpool.policies import PACK_DIR

PROJECT_POLICY_PACK_DIR = "policies"
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
        # The pack's process starts first: its imports overlap the program run; it analyzes each resource as the
        # program registers it, and the stack while the manifests are built and checked here. What it reports still
        # comes first, as from `pulumi preview`.
        pack = None
        if policy_pack is not None:
            pack = stack_of_pack.enter_context(StartedPolicyPack(policy_pack, config))
        # Referenced stacks of this project are previewed first, so a consumer sees its provider's real outputs.
        references = resolve_references(project_dir, config, stack_references)
        # The pack analyzes each resource as the program registers it, and the stack once the run is over.
        analysis = pack.analyze_as_registered(policy_config) if pack is not None else None
        on_registered = analysis.registered if analysis is not None else None
        run = run_program(project_dir, config, stack_references=references, on_registered=on_registered)
        report = analysis.finished(run) if analysis is not None else None
        objects = kubernetes_objects(run.resources)
        try:
            validation = validate_objects(objects, k8s_version)
        except Exception as error:  # noqa: BLE001 (raised below, after the pack's findings, which come first)
            validation_failure: Exception | None = error
        else:
            validation_failure = None
        # The files' text is made while the pack may still be analyzing; written only once it has not refused.
        files = manifest_texts(objects) if validation_failure is None else {}
        policy_report = report.result() if report is not None else None
    if policy_report is not None and policy_report.mandatory:
        raise PolicyViolationError(policy_report, run)
    if validation_failure is not None:
        raise validation_failure
    stack_dir = out_dir / stack  # load_stack_config checked that `stack` is a stack name, not a path
    outputs_file = stack_dir / "outputs.json"
    try:
        manifest_files = write_manifests(files, stack_dir / "manifests", out_dir)
        write_file(outputs_file, _outputs_json(run), out_dir)
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


def default_policy_pack(project_dir: Path) -> Path:
    """`<project_dir>/policies` when the project has a policy pack of its own (a PulumiPolicy.yaml there), else
    motor-kvpool's."""
    pack_dir = Path(project_dir) / PROJECT_POLICY_PACK_DIR
    return pack_dir if (pack_dir / "PulumiPolicy.yaml").is_file() else PACK_DIR


def _outputs_json(run: ProgramRun) -> str:
    outputs = mask_paths(integral_floats_to_ints(run.outputs), run.secret_output_paths)
    return json.dumps(outputs, sort_keys=True, indent=2) + "\n"


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
