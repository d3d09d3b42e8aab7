"""The service settings from a stack's configuration: inside the program (`read_stack_settings`), and from a stack
file offline (`settings_from_config`, used by `python -m kvpool settings`)."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any

import pulumi

from kvpool.errors import SettingsError
from kvpool.internal import sdk_internals
from kvpool.internal.input_files import InputFileError, NotJsonError, loads_json
from kvpool.internal.motor_env import CONTROL_PLANE_INTERNAL_ENV, unfollowed_message, unfollowed_references
from kvpool.policies import rules
from kvpool.settings.loader import ALIASES, PULUMI_CONFIG_KEYS, load_from_pulumi_config
from kvpool.settings.service import PROJECT, ServiceSettings

_PREFIX = f"{PROJECT}:"
STRING_KEYS = ("motor_deployer_dir", "vllm_ascend_version", "cluster_domain", "cluster")
# Read as a Pulumi secret by the program (kvpool/internal/secret_env.py), never into the settings model.
SECRET_ENV_KEY = "secret_env"
SECRET_ENV_DESCRIPTION = (
    "Secret environment for Motor's pods, one Kubernetes Secret they load with envFrom: `pulumi config set --secret "
    f"--path {SECRET_ENV_KEY}.HF_TOKEN VALUE`. A plain-text {SECRET_ENV_KEY}, or a secret under any other key, is "
    "refused."
)
KNOWN_KEYS = (*PULUMI_CONFIG_KEYS, *ALIASES)
# Kubernetes' rule for an environment variable name (envFrom skips a Secret key that breaks it, silently).
_ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")


def _parse(key: str, text: str) -> tuple[Any, str | None]:
    if key in STRING_KEYS:
        return text or None, None  # Pulumi.yaml's default "" means unset
    if key == "create_namespace":
        if text not in ("true", "false"):
            return None, f"{_PREFIX}{key}: {text!r} is not a boolean; write true or false"
        return text == "true", None
    try:
        return loads_json(text, f"{_PREFIX}{key}"), None
    except NotJsonError:
        return None, f"{_PREFIX}{key}: {_shorten(text)!r} is not an object; write the section as a YAML mapping"
    except InputFileError as error:
        return None, str(error)


def _shorten(text: str) -> str:
    return text if len(text) <= 80 else f"{text[:80]}..."


def _secret_env_problems(full_key: str, text: str) -> tuple[list[str], list[str]]:
    """(problems, names): secret_env must be a mapping of environment variable names to plain values (each becomes
    one key of the Secret loaded with envFrom). Whole-object ciphertext, which cannot be decrypted offline, is taken
    as it is (no names known)."""
    try:
        value = loads_json(text, full_key)
    except NotJsonError:
        return [], []  # ciphertext of the whole object: its shape is checked where it is decrypted
    except InputFileError as error:
        return [str(error)], []
    if not isinstance(value, dict):
        return [f"{full_key}: must be a mapping of environment variable names to values, found a {_kind(value)}; set "
                f"each value with `pulumi config set --secret --path {SECRET_ENV_KEY}.NAME VALUE`"], []
    problems = []
    for name, item in value.items():
        if not _ENV_NAME.fullmatch(name):
            problems.append(f"{full_key}.{name}: not an environment variable name (letters, digits, '_', '-', '.'; "
                            f"not starting with a digit)")
        if isinstance(item, (dict, list)):
            problems.append(f"{full_key}.{name}: must be one value, found a {_kind(item)}")
    return problems, list(value)


def _kind(value: Any) -> str:
    return {dict: "mapping", list: "list"}.get(type(value), type(value).__name__)


def settings_from_config(
    texts: Mapping[str, str], secret_keys: Collection[str], stack: str, project: str = PROJECT,
    project_dir: Path | None = None,
) -> ServiceSettings:
    """The settings from a stack's config as the CLI hands it to a program: full keys -> text; of stack `stack` of
    project `project` in `project_dir` (None: the working folder, as inside the program)."""
    values: dict[str, Any] = {}
    problems: list[str] = []
    secret_names: list[str] = []
    for full_key in sorted(k for k in texts if k.startswith(_PREFIX)):
        key, text, secret = full_key.removeprefix(_PREFIX), texts[full_key], full_key in secret_keys
        if key == SECRET_ENV_KEY:
            if not secret and text not in ("", "{}"):
                problems.append(
                    f"{full_key}: is stored in plain text; set each value with `pulumi config set --secret --path "
                    f"{SECRET_ENV_KEY}.NAME VALUE` so that it stays encrypted"
                )
            elif secret:
                secret_problems, secret_names = _secret_env_problems(full_key, text)
                problems += secret_problems
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
        value, problem = _parse(key, text)
        if problem:
            problems.append(problem)
        else:
            values[key] = value
    source = f"stack {stack!r}"
    if problems:
        raise SettingsError(problems, source)
    settings = load_from_pulumi_config(values, stack, source, project, project_dir)
    sections = settings.env.model_dump(mode="json")
    refused = [*rules.check_shell_env_names({SECRET_ENV_KEY: secret_names}),
               *rules.check_secret_env_shadowing(secret_names, sections),
               *(rules.Finding(f"env.{section}.{variable}", unfollowed_message(name, settings.namespace, secret_names))
                 for section, variable, name in unfollowed_references(sections, secret_names) if name in secret_names)]
    problems = [str(finding) for finding in refused] + [
        # Every pod that loads the Secret is a Motor pod (the controller's, the coordinator's, the engines').
        f"{SECRET_ENV_KEY}.{name}: motor-kvpool sets {name} itself for Motor's processes, and its value beats the "
        f"Secret's; remove it: `pulumi config rm --path {SECRET_ENV_KEY}.{name}`"
        for name in secret_names if name in CONTROL_PLANE_INTERNAL_ENV
    ]
    if problems:
        raise SettingsError(problems, source)
    return settings


def read_stack_settings() -> ServiceSettings:
    """Inside the program: the running stack's config, read where the SDK keeps it (it offers no listing)."""
    texts = sdk_internals.config_texts(_PREFIX)
    # Where the language host put the secret keys: the runtime's set (set_all_config) or the environment.
    secret_keys = sdk_internals.secret_config_keys(set(texts))
    return settings_from_config(texts, secret_keys, pulumi.get_stack(), pulumi.get_project())
