"""Read the service settings from the running stack's configuration (inside `pulumi up` / preview)."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from components.errors import SettingsError
from components.settings import PROJECT, ServiceSettings, load_from_pulumi_config

_PREFIX = f"{PROJECT}:"
STRING_KEYS = ("motor_scripts_dir", "vllm_ascend_version")
# Read as a Pulumi secret by the program (components/secret_env.py), never into the settings model.
SECRET_ENV_KEY = "secret_env"


def _project_keys() -> list[str]:
    """Every motor-kvpool:* key the stack sets: the SDK exposes no listing, so read both places it stores them."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    return sorted(key.removeprefix(_PREFIX) for key in keys if key.startswith(_PREFIX))


def _parse(key: str, text: str) -> tuple[Any, str | None]:
    if key in STRING_KEYS:
        return text or None, None  # Pulumi.yaml's default "" means unset
    if key == "create_namespace":
        if text not in ("true", "false"):
            return None, f"{_PREFIX}{key}: {text!r} is not a boolean; write true or false"
        return text == "true", None
    try:
        return json.loads(text), None
    except json.JSONDecodeError:
        return None, f"{_PREFIX}{key}: {text!r} is not an object; write the section as a YAML mapping"


def read_stack_settings() -> ServiceSettings:
    config = pulumi.Config(PROJECT)
    values: dict[str, Any] = {}
    problems = []
    for key in _project_keys():
        if key == SECRET_ENV_KEY:
            continue
        value, problem = _parse(key, config.get(key) or "")
        if problem:
            problems.append(problem)
        else:
            values[key] = value
    stack = pulumi.get_stack()
    source = f"stack {stack!r}"
    if problems:
        raise SettingsError(problems, source)
    return load_from_pulumi_config(values, stack, source)
