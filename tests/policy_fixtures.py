"""Real program runs of the example stacks, and one change at a time to what they rendered: the fixtures of the
policy-pack tests (in-process and over gRPC)."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any, Callable

from kvpool.cli.engine.mock_engine import ProgramRun, run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.policies.catalog import POLICIES
from tests.program_runs import PROJECT_DIR

POLICY_COUNT = len(POLICIES)  # what every preview's closing line counts

PACK = PROJECT_DIR / "kvpool" / "policies"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE_SET = "kubernetes:mindcluster.huawei.com/v1:InferServiceSet"
STACK_REFERENCE = "pulumi:pulumi:StackReference"


def program(stack: str, **config_changes: Any) -> tuple[ProgramRun, StackConfig]:
    """The stack's run, and its config with `config_changes` (which the run does not see: flags the pack reads)."""
    config = load_stack_config(PROJECT_DIR, stack)
    return run_program(PROJECT_DIR, config), with_config(config, **config_changes)


def with_config(config: StackConfig, **changes: Any) -> StackConfig:
    values = dict(config.values)
    for key, change in changes.items():
        full = f"motor-kvpool:{key}"
        values[full] = change(json.loads(values[full])) if callable(change) else change
        values[full] = values[full] if isinstance(values[full], str) else json.dumps(values[full])
    return dataclasses.replace(config, values=values)


def edit(run: ProgramRun, type_: str, name: str, change: Callable[[dict], None]) -> ProgramRun:
    """The run with one resource's inputs changed, as if the program had rendered them so. `name` is its Pulumi name
    (a component's child: `<component>-<Kubernetes name>`); no such resource is an error, not an unchanged run."""
    resources = []
    found = False
    for resource in run.resources:
        if resource.type == type_ and resource.name == name:
            inputs = copy.deepcopy(resource.inputs)
            change(inputs)
            resource = dataclasses.replace(resource, inputs=inputs)
            found = True
        resources.append(resource)
    if not found:
        raise KeyError(f"no {type_} named {name!r} in the run")
    return dataclasses.replace(run, resources=resources)


def edit_user_config(run: ProgramRun, change: Callable[[dict], None]) -> ProgramRun:
    def rewrite(inputs: dict) -> None:
        user_config = json.loads(inputs["data"]["user_config.json"])
        change(user_config)
        inputs["data"]["user_config.json"] = json.dumps(user_config)

    return edit(run, CONFIGMAP, "control-plane-motor-config", rewrite)


def engine_env(variable: str, value: str) -> Callable[[dict], None]:
    """Set one variable of a Deployment's engine container (containers[0])."""
    def change(inputs: dict) -> None:
        env = inputs["spec"]["template"]["spec"]["containers"][0]["env"]
        env[:] = [entry for entry in env if entry["name"] != variable] + [{"name": variable, "value": value}]

    return change


def pod_spec(change: Callable[[dict], None]) -> Callable[[dict], None]:
    return lambda inputs: change(inputs["spec"]["template"]["spec"])


def kv(user_config: dict, side: str) -> dict:
    return user_config[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"]


def connectors(user_config: dict, side: str) -> list[dict]:
    return kv(user_config, side)["kv_connector_extra_config"]["connectors"]
