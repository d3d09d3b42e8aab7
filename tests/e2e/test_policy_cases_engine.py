"""Issue 21 §4: every policy case of tests/test_policies_in_process.py under
`pulumi preview --policy-pack kvpool/policies`, with the same policy, enforcement level, resource and message as the offline pack runner (kvpool/cli/policy_host/runner.py).

A case changes what the real program rendered, so the engine previews a replay of the changed run (tests/e2e/replay:
each resource registered as recorded) with the case's stack config. Cases on the same example stack share one
preview (one CLI run for several cases) when they change different policies and different config keys; offline and
engine see the same combined run, and each case's policy must be among the violations (or the case goes again in
a preview of its own).
"""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvpool.cli.engine.mock_engine import STACK_TYPE, ProgramRun
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.policy_host.runner import run_policy_pack
from tests.e2e.realengine import REPO, PulumiWorkspace
from tests.e2e.views import split_urn
from tests.policy_fixtures import with_config
from tests.test_policies_in_process import CASES, Case, example

pytestmark = pytest.mark.e2e

COLOR_MARKUP = re.compile(r"<\{%[^%]*%\}>")
Reported = tuple[str, str, str, str]  # (policy, enforcement level, "type::name" or "stack", message)


@dataclasses.dataclass
class Group:
    stack: str
    cases: list[Case]

    @property
    def name(self) -> str:
        return f"policy-cases-{self.stack}-{'-'.join(str(CASES.index(case)) for case in self.cases)}"

    def accepts(self, case: Case) -> bool:
        return case.stack == self.stack and all(
            other.policy != case.policy and not set(other.config) & set(case.config) for other in self.cases
        )


def groups() -> list[Group]:
    found: list[Group] = []
    for case in CASES:
        group = next((group for group in found if group.accepts(case)), None)
        if group is None:
            found.append(Group(case.stack, [case]))
        else:
            group.cases.append(case)
    return found


def combined(stack: str, cases: list[Case], name: str) -> tuple[ProgramRun, StackConfig]:
    """The example run with every change of the cases, and its config with theirs, as stack `name`."""
    run, config = example(stack)
    changes: dict[str, Any] = {}
    for case in cases:
        run = case.change(run)
        changes.update(case.config)
    return run, dataclasses.replace(with_config(config, **changes), stack=name)


def offline_reports(run: ProgramRun, config: StackConfig) -> list[Reported]:
    labels = {resource.urn: f"{resource.type}::{resource.name}" for resource in run.resources}
    return sorted(
        (v.policy_name, v.enforcement_level, labels.get(v.resource, "stack"), _message(v.description, v.detail))
        for v in run_policy_pack(REPO / "kvpool" / "policies", run, config).violations
    )


def _message(description: str, detail: str) -> str:
    return " ".join(f"{description}\n{detail}".split())


def replay_files(folder: Path, run: ProgramRun, config: StackConfig) -> None:
    """The replay program beside run.json, and the stack file holding the config as the program got it."""
    resources = [r for r in run.resources if r.type != STACK_TYPE]
    by_urn = {r.urn: r for r in run.resources}

    def depth(resource: Any) -> int:
        parent = by_urn.get(resource.parent_urn or "")
        return 0 if parent is None or parent.type == STACK_TYPE else 1 + depth(parent)

    resources.sort(key=depth)  # parents before their children
    (folder / "run.json").write_text(json.dumps({
        "resources": [{**dataclasses.asdict(r), "secret_paths": [list(p) for p in r.secret_paths]} for r in resources],
        "outputs": run.outputs,
    }))
    values = {key: json.loads(text) if text[:1] in ("{", "[") else text for key, text in config.values.items()}
    # JSON is YAML whose every string is quoted: nothing for the CLI's YAML to read as another type.
    (folder / f"Pulumi.{config.stack}.yaml").write_text(json.dumps({"config": values}, indent=1))


def engine_reports(workspace: PulumiWorkspace, folder: Path, stack: str) -> tuple[list[Reported], str]:
    """The policy events of `pulumi preview --policy-pack` on the replay, from the engine's event log."""
    workspace.run("stack", "init", stack, cwd=folder).check()
    events = folder / f"{stack}.events.jsonl"
    # --event-log is among the CLI's debugging flags (PULUMI_DEBUG_COMMANDS); `preview --json` leaves policy out.
    result = workspace.run("preview", "-s", stack, "--policy-pack", str(workspace.project / "kvpool" / "policies"),
                           "--event-log", str(events), cwd=folder, extra_env={"PULUMI_DEBUG_COMMANDS": "true"})
    assert events.is_file(), result.output[-3000:]
    reports = []
    for line in events.read_text().splitlines():
        event = json.loads(line).get("policyEvent")
        if event:
            urn = event.get("resourceUrn") or ""
            resource = "::".join(split_urn(urn)) if urn else "stack"
            resource = "stack" if resource.startswith(STACK_TYPE + "::") else resource
            message = COLOR_MARKUP.sub("", event["message"])  # the event log keeps the engine's raw color tags
            reports.append((event["policyName"], event["enforcementLevel"], resource, " ".join(message.split())))
    return sorted(reports), result.output


@pytest.fixture(scope="module")
def replay(offline_workspace: PulumiWorkspace) -> Path:
    folder = offline_workspace.root / "policy-cases"
    folder.mkdir()
    shutil.copy(REPO / "tests" / "e2e" / "replay" / "__main__.py", folder / "__main__.py")
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "motor-kvpool",
        "runtime": {"name": "python", "options": {"toolchain": "pip", "virtualenv": str(REPO / "venv")}},
    }))
    return folder


GROUPS = groups()


@pytest.mark.parametrize("group", GROUPS, ids=[group.name for group in GROUPS])
def test_the_engine_reports_each_policy_case_as_offline(offline_workspace: PulumiWorkspace, replay: Path,
                                                       group: Group) -> None:
    """One preview of the group's cases together; a case whose violation another case's change hides (both edit
    one field) goes again in a preview of the cases hidden so."""
    pending, round_ = group.cases, 0
    while pending:
        run, config = combined(group.stack, pending, f"{group.name}-{round_}")
        replay_files(replay, run, config)
        offline = offline_reports(run, config)
        hidden = [case for case in pending if case.policy not in {report[0] for report in offline}]
        assert hidden != pending, f"no case's policy reports: {[case.policy for case in pending]}"
        engine, output = engine_reports(offline_workspace, replay, config.stack)
        assert engine == offline, f"only offline: {sorted(set(offline) - set(engine))}\n" \
                                  f"only the engine: {sorted(set(engine) - set(offline))}\n{output[-3000:]}"
        pending, round_ = hidden, round_ + 1
