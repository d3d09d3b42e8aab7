"""Read the service settings from the running stack's configuration (inside `pulumi up` / preview)."""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.runtime import config as runtime_config

from components.errors import SettingsError
from components.settings import ALIASES, PROJECT, PULUMI_CONFIG_KEYS, ServiceSettings, load_from_pulumi_config

_PREFIX = f"{PROJECT}:"
STRING_KEYS = ("motor_scripts_dir", "vllm_ascend_version")
# Read as a Pulumi secret by the program (components/secret_env.py), never into the settings model.
SECRET_ENV_KEY = "secret_env"
KNOWN_KEYS = (*PULUMI_CONFIG_KEYS, *ALIASES)


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
    values: dict[str, Any] = {}
    problems = []
    for key in _project_keys():
        full_key = f"{_PREFIX}{key}"
        # Where the language host put the secret keys: the runtime's set (set_all_config) or the environment.
        secret = runtime_config.is_config_secret(full_key) or full_key in runtime_config.get_config_secret_keys_env()
        if key == SECRET_ENV_KEY:
            if not secret and runtime_config.get_config(full_key) not in (None, "", "{}"):
                problems.append(
                    f"{full_key}: is stored in plain text; set each value with `pulumi config set --secret --path "
                    f"{SECRET_ENV_KEY}.NAME VALUE` so that it stays encrypted"
                )
            continue
        if secret:
            problems.append(
                f"{full_key}: is a secret, but settings are rendered into ConfigMaps and plain env; keep secrets "
                f"under {SECRET_ENV_KEY} (`pulumi config set --secret --path {SECRET_ENV_KEY}.NAME VALUE`)"
            )
            continue
        if key not in KNOWN_KEYS:
            values[key] = None  # the loader names it and suggests the nearest known key
            continue
        value, problem = _parse(key, runtime_config.get_config(full_key) or "")
        if problem:
            problems.append(problem)
        else:
            values[key] = value
    stack = pulumi.get_stack()
    source = f"stack {stack!r}"
    if problems:
        raise SettingsError(problems, source)
    return load_from_pulumi_config(values, stack, source)
