"""kvpool:index:Service: the whole inference service (KV store, control plane, engine pools, ...) as one component
that Pulumi programs in other languages declare through the component package (PulumiPlugin.yaml beside this file).

What the component provider host cannot express, and how the input works around it:
- the settings are pydantic models with discriminated unions (the store's `backend`), Literal and Annotated fields;
  the host infers a schema from plain types only (no unions, no Literal or Annotated, no string annotations, so this
  module has no `from __future__ import annotations`). So the one input, `settings`, is an untyped object keyed as
  the stack configuration's `motor-kvpool:*` keys, checked by the same loader as the Python program's settings, with
  every problem named at once;
- numbers arrive as floats through the host (protobuf): whole ones become ints again before the settings see them,
  and an object's keys arrive in no fixed order: they are sorted, as the CLI sorts a stack's object configuration
  (Motor's files keep the order they are given, so without it the same settings could render different files);
- components of this package cannot take one another as inputs (no resource references without a published
  schema), so the service is one component, not KVStore and EnginePools wired together.
A constructor cannot await, so what the Python program reads from stacks before building is not read here:
- `kv_cache_store_config.target_stack` (another stack's store) is refused by name;
- which engine instances ran before (the rollout's waves take only those): every instance is taken as running, so an
  update rolls in waves as the Python program's does, and a first deploy starts its waves one after another instead
  of all at once. The objects are the same either way.
"""

from pathlib import Path
from typing import Any, Optional, TypedDict

import pulumi

from kvpool.errors import SettingsError, user_errors_as_run_errors
from kvpool.internal.input_files import MAX_DEPTH, nesting_depth
from kvpool.internal.rollout import ENGINES_OUTPUT
from kvpool.internal.units import integral_floats_to_ints
from kvpool.program import build, engine_instances
from kvpool.settings.from_stack import read_stack_settings
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.service import ServiceSettings

TYPE = "kvpool:index:Service"
SOURCE = f"{TYPE} settings"


class ServiceArgs(TypedDict, total=False):
    settings: dict[str, Any]
    """The service's settings keyed as the stack configuration's motor-kvpool:* keys (motor_deploy_config,
    motor_engine_prefill_config, kv_cache_store_config, env, ...). Absent: the stack's motor-kvpool configuration,
    as the Python program reads it. Secrets stay in the stack configuration (motor-kvpool:secret_env)."""


def as_stack_config(value: Any) -> Any:
    """`value` with every object's keys in sorted order, as a stack's configuration reaches a program."""
    if isinstance(value, dict):
        return {key: as_stack_config(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [as_stack_config(item) for item in value]
    return value


def _settings_problems(given: Any) -> list[str]:
    """The input's shape, before any reader walks it: a mapping, text keys throughout, nested as deep as every other
    reader allows (a string, a number or non-text keys were a TypeError; 200 levels a RecursionError)."""
    if not isinstance(given, dict):
        return [f"settings: must be a mapping of motor-kvpool:* keys (motor_deploy_config, ...), found "
                f"{type(given).__name__}"]
    if nesting_depth(given) > MAX_DEPTH:
        return [f"settings: nested more than {MAX_DEPTH} levels deep"]
    pending, problems = [("settings", given)], []
    while pending:
        where, value = pending.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            if isinstance(value, dict) and not isinstance(key, str):
                problems.append(f"{where}: key {key!r} is not text; write every key as text")
            pending.append((f"{where}[{key}]" if isinstance(value, list) else f"{where}.{key}", child))
    return sorted(problems)


def service_settings(args: ServiceArgs) -> ServiceSettings:
    given = args.get("settings")
    if given is None:
        settings = read_stack_settings()
    elif problems := _settings_problems(given):
        raise SettingsError(problems, SOURCE)
    else:
        settings = load_from_pulumi_config(as_stack_config(integral_floats_to_ints(dict(given))), pulumi.get_stack(),
                                           SOURCE)
    store = settings.kv_cache_store_config
    if store is not None and store.target_stack:
        raise SettingsError(["kv_cache_store_config.target_stack: another stack's store is not available through "
                             "the component package yet; use the Python program (kvpool.program.run)"], SOURCE)
    return settings


class Service(pulumi.ComponentResource):
    """One MindIE Motor prefill/decode inference service with its KV-cache pool, as motor-kvpool's Python program
    builds it: the same objects for the same settings."""

    namespace: pulumi.Output[str]
    """The service's namespace (motor_deploy_config.job_id)."""
    coordinator: pulumi.Output[dict[str, Any]]
    """Where the coordinator serves inference: its Service's host name, and its NodePort when it has one."""
    kv_store: pulumi.Output[dict[str, Any]]
    """The store's contract for consumers (empty when the service has no pool)."""
    engines: pulumi.Output[dict[str, Any]]
    """The engine instances of each side."""

    def __init__(self, name: str, args: ServiceArgs, opts: Optional[pulumi.ResourceOptions] = None) -> None:
        super().__init__(TYPE, name, {}, opts)
        with user_errors_as_run_errors():
            settings = service_settings(args)
            every_instance = {ENGINES_OUTPUT: engine_instances(settings)}
            outputs = build(settings, Path.cwd(), previous=every_instance, opts=pulumi.ResourceOptions(parent=self),
                            name=name, renamed=True)
        self.namespace = pulumi.Output.from_input(outputs["namespace"])
        self.coordinator = pulumi.Output.from_input(outputs["coordinator"])
        self.kv_store = pulumi.Output.from_input(outputs.get("kv_store", {}))
        self.engines = pulumi.Output.from_input(outputs["engines"])
        self.register_outputs({"namespace": self.namespace, "coordinator": self.coordinator,
                               "kv_store": self.kv_store, "engines": self.engines})
