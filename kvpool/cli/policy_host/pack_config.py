"""A policy pack's configuration, reconciled the way the Pulumi CLI does it before it calls the pack's `Configure`.

Order (pulumi `pkg/resource/analyzer/config.go`, ReconcilePolicyPackConfig): each policy's own enforcement level
and its config schema's `default`s -> the pack's `initial_config` -> the user's file (`--policy-pack-config`) ->
every policy's properties validated against its JSON schema. The file's format::

    {"all": "mandatory",
     "<policy>": "disabled",
     "<policy>": {"enforcementLevel": "advisory", "<property>": <value>}}

Stricter than the CLI, which passes both on silently (so a typo changes nothing and says nothing): a policy name
the pack does not have, and a property the policy's schema does not declare, are errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from kvpool.cli.engine.property_values import format_path
from kvpool.errors import KvpoolError, problem_report
from kvpool.internal.input_files import loads_json, read_text
from kvpool.internal.units import integral_floats_to_ints

ENFORCEMENT_LEVELS = ("advisory", "mandatory", "remediate", "disabled")
ALL_POLICIES = "all"
"""The file's key for every policy of the pack (only an enforcement level)."""
_LEVEL_KEY = "enforcementLevel"


class PolicyConfigError(KvpoolError):
    """The policy config (file or values) is unreadable or does not fit the pack. One line per problem."""

    def __init__(self, problems: list[str], source: str = "policy config") -> None:
        self.problems = list(problems)
        super().__init__(problem_report(source, self.problems))


@dataclass(frozen=True)
class PolicyInfo:
    """One policy as its pack describes it (GetAnalyzerInfo)."""

    name: str
    description: str
    enforcement_level: str
    """The policy's own level, else the pack's default: one of ENFORCEMENT_LEVELS."""
    kind: str
    """"resource" (runs per resource) or "stack" (runs once over all resources)."""
    config_properties: dict[str, Any] = field(default_factory=dict)
    """Property name -> its JSON schema."""
    config_required: tuple[str, ...] = ()


@dataclass(frozen=True)
class PolicyConfig:
    """One policy's configuration. Reconciled configs always have a level; a partial one (the pack's initial
    config, one entry of the user's file) has None where it leaves the level as it is."""

    enforcement_level: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)


def load_policy_config_file(path: Path) -> dict[str, Any]:
    """The JSON object of a `--policy-pack-config` file (an empty file is an empty config, as in the CLI)."""
    text = read_text(path, "--policy-config")  # InputFileError names the flag and the file
    if not text.strip():
        return {}
    document = loads_json(text, f"--policy-config {path}")
    if not isinstance(document, dict):
        raise PolicyConfigError([f"expected a JSON object, found {type(document).__name__}"], source=str(path))
    return document


def reconcile_policy_config(
    policies: list[PolicyInfo],
    initial_config: Mapping[str, PolicyConfig],
    user_config: Mapping[str, Any] | None = None,
    source: str = "policy config",
) -> dict[str, PolicyConfig]:
    """Every policy's level and properties, as the CLI hands them to `Configure`; PolicyConfigError lists all
    problems of `user_config` (file format, see above) and of the resulting properties."""
    reconciled = {
        policy.name: PolicyConfig(
            policy.enforcement_level,
            {key: schema["default"] for key, schema in policy.config_properties.items() if "default" in schema},
        )
        for policy in policies
    }
    reconciled = _apply(reconciled, initial_config)
    user_entries, problems = _parse_user_config(user_config or {}, [policy.name for policy in policies])
    reconciled = _apply(reconciled, user_entries)
    problems += [problem for policy in policies for problem in _schema_problems(policy, reconciled[policy.name])]
    if problems:
        raise PolicyConfigError(problems, source)
    return reconciled


def _parse_user_config(
    raw: Mapping[str, Any], known_policies: list[str]
) -> tuple[dict[str, PolicyConfig], list[str]]:
    """The file format, read as the CLI's parsePolicyPackConfig reads it (entries that set nothing are dropped);
    the entries that could be read, and a problem for each that could not."""
    problems: list[str] = []
    parsed: dict[str, PolicyConfig] = {}
    for name, value in raw.items():
        if name != ALL_POLICIES and name not in known_policies:
            problems.append(f"{name}: no such policy in this pack (policies: {', '.join(sorted(known_policies))})")
            continue
        if isinstance(value, str):
            value = {_LEVEL_KEY: value}
        if not isinstance(value, dict):
            problems.append(f"{name}: expected an enforcement level or an object, found {json.dumps(value)}")
            continue
        properties = {key: item for key, item in value.items() if key != _LEVEL_KEY}
        level = value.get(_LEVEL_KEY)
        if level is not None and level not in ENFORCEMENT_LEVELS:
            levels = ", ".join(ENFORCEMENT_LEVELS)
            problems.append(f"{name}: enforcementLevel {json.dumps(level)} is not one of {levels}")
            continue
        if name == ALL_POLICIES and properties:
            problems.append(f"{ALL_POLICIES}: takes only an enforcement level, found {', '.join(sorted(properties))}")
            continue
        if level is not None or properties:
            parsed[name] = PolicyConfig(level, properties)
    return parsed, problems


def _apply(reconciled: dict[str, PolicyConfig], overrides: Mapping[str, PolicyConfig]) -> dict[str, PolicyConfig]:
    """One layer on top of another, as the CLI's applyConfig: "all" sets every level first, then each policy's
    own entry sets its level (when given) and adds its properties to those already there."""
    result = dict(reconciled)
    everything = overrides.get(ALL_POLICIES)
    if everything is not None and everything.enforcement_level is not None:
        level = everything.enforcement_level
        result = {name: PolicyConfig(level, config.properties) for name, config in result.items()}
    for name, override in overrides.items():
        if name not in result:  # "all", or a policy the pack's initial config names but the pack does not have
            continue
        current = result[name]
        result[name] = PolicyConfig(
            override.enforcement_level or current.enforcement_level, {**current.properties, **override.properties}
        )
    return result


def _schema_problems(policy: PolicyInfo, config: PolicyConfig) -> list[str]:
    declared = ", ".join(sorted(policy.config_properties)) or "none"
    problems = [
        f"{policy.name}: {key}: not a config property of this policy (properties: {declared})"
        for key in sorted(set(config.properties) - set(policy.config_properties))
    ]
    schema: dict[str, Any] = {"type": "object"}
    if policy.config_properties:
        schema["properties"] = policy.config_properties
    if policy.config_required:
        schema["required"] = list(policy.config_required)
    validator_class = jsonschema.validators.validator_for(schema, default=jsonschema.Draft7Validator)
    # Numbers arrive as floats (protobuf); a whole 3.0 is the integer 3 for the schema, as in the CLI's Go validator.
    errors = validator_class(schema).iter_errors(integral_floats_to_ints(config.properties))
    schema_problems = []
    for error in errors:
        path = list(error.absolute_path)
        where = f"{path[0]}{format_path(tuple(path[1:]))[1:]}: " if path else ""
        schema_problems.append(f"{policy.name}: {where}{error.message}")
    return problems + sorted(schema_problems)
