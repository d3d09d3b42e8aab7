"""Pulumi.yaml and requirements.txt are what the Pulumi CLI accepts and `pulumi up` needs."""

from __future__ import annotations

import re

import yaml

from kvpool.settings.from_stack import SECRET_ENV_KEY, STRING_KEYS
from kvpool.settings.loader import ALIASES, PULUMI_CONFIG_KEYS
from tests.program_runs import PROJECT_DIR

# The CLI's project schema (sdk/go/common/workspace/project.json): a declaration may hold only these fields,
# and `type` only these values; object-valued keys therefore carry no type.
DECLARATION_FIELDS = {"type", "items", "description", "secret", "default", "value"}
DECLARATION_TYPES = {"string", "integer", "boolean", "array"}


def project() -> dict:
    return yaml.safe_load((PROJECT_DIR / "Pulumi.yaml").read_text())


def test_project_runtime_and_stack_folder():
    data = project()
    assert data["name"] == "motor-kvpool"
    assert data["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": "venv"}}
    assert data["stackConfigDir"] == "stacks"


# Provider settings the project sets for every stack (a value, no declaration).
PROVIDER_CONFIG = {"kubernetes:enableConfigMapMutable": {"value": True}}


def test_every_top_level_key_is_declared_with_a_description_in_the_cli_format():
    config = dict(project()["config"])
    assert {key: config.pop(key) for key in PROVIDER_CONFIG} == PROVIDER_CONFIG
    assert set(config) == {*PULUMI_CONFIG_KEYS, SECRET_ENV_KEY, *(key for key in ALIASES if "." not in key)}
    for key, declaration in config.items():
        assert set(declaration) <= DECLARATION_FIELDS, key
        assert declaration["description"], key
        assert declaration.get("type", "string") in DECLARATION_TYPES, key


def test_typed_declarations_are_the_keys_the_program_parses_as_text_or_a_boolean():
    """The program reads a typed key as the CLI hands it (plain text, true/false) and every other key as JSON."""
    typed = {key: declaration["type"] for key, declaration in project()["config"].items() if "type" in declaration}
    assert typed == {**dict.fromkeys(STRING_KEYS, "string"), "create_namespace": "boolean"}


def test_required_sections_have_no_default_so_the_cli_reports_them_missing():
    config = project()["config"]
    required = {key for key, declaration in config.items() if "default" not in declaration and "value" not in declaration}
    assert required == {"motor_deploy_config", "motor_engine_prefill_config", "motor_engine_decode_config"}


def test_runtime_requirements_are_pinned():
    lines = [line for line in (PROJECT_DIR / "requirements.txt").read_text().splitlines() if line and not line.startswith("#")]
    # grafana-foundation-sdk builds the pool's dashboard in the program (kvpool/components/kv_store/monitoring.py).
    assert {re.split("==", line)[0].lower() for line in lines} == {
        "pulumi", "pulumi-kubernetes", "pydantic", "grafana-foundation-sdk"}
    assert all(re.fullmatch(r"[A-Za-z0-9_.-]+==([0-9]+!)?[0-9][0-9A-Za-z.]*", line) for line in lines)
