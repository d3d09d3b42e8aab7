"""stacks/stack-file.schema.json: generated from the settings models, committed as generated, named by every example
stack's modeline, and what a real JSON Schema validator (jsonschema) holds the example stacks to: all valid, a typo
flagged where an editor shows it."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_schema import MODELINE, SCHEMA_NAME, schema_text
from kvpool.errors import SettingsError
from kvpool.settings import passthrough
from kvpool.settings.from_stack import settings_from_config
from kvpool.settings.loader import ALIASES, PULUMI_CONFIG_KEYS
from kvpool.settings.service import PROJECT
from tests.program_runs import PROJECT_DIR

STACK_FILES = sorted((PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))
SCHEMA_FILE = PROJECT_DIR / "stacks" / SCHEMA_NAME


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(validator, document) -> list[tuple[list, str]]:
    return sorted((list(error.absolute_path), error.message) for error in validator.iter_errors(document))


def kvpool(*args: str, cwd: Path = PROJECT_DIR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)})


def test_the_committed_schema_is_what_the_generator_writes() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), "run python -m kvpool stack-schema"
    check = kvpool("stack-schema", "--check")
    assert (check.returncode, check.stderr) == (0, "")


def test_the_generator_writes_beside_any_projects_stack_files_and_checks_them(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: llm-infra\nruntime: python\nstackConfigDir: config\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stale = kvpool("stack-schema", "--check", "--project-dir", str(tmp_path), cwd=elsewhere)
    target = tmp_path / "config" / SCHEMA_NAME
    assert (stale.returncode, stale.stderr) == (4, f"{target} differs from the settings models; run kvpool stack-schema\n")
    written = kvpool("--project-dir", str(tmp_path), "stack-schema", cwd=elsewhere)
    assert (written.returncode, written.stdout) == (0, f"wrote {target}\n")
    assert target.read_text() == schema_text()
    assert kvpool("stack-schema", "--check", "--project-dir", str(tmp_path), cwd=elsewhere).returncode == 0
    target.write_text(schema_text().replace('"integer"', '"string"', 1))
    assert kvpool("stack-schema", "--check", "--project-dir", str(tmp_path), cwd=elsewhere).returncode == 4


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda path: path.name)
def test_every_example_stack_names_the_schema_and_is_valid(validator, stack_file: Path) -> None:
    text = stack_file.read_text()
    assert text.splitlines()[0] == MODELINE
    assert (stack_file.parent / MODELINE.rpartition("=")[2]).resolve() == SCHEMA_FILE
    assert problems(validator, yaml.safe_load(text)) == []


def test_typos_and_wrong_types_are_flagged_where_they_are(validator) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    config = document["config"]
    config["motor-kvpool:kv_cache_stor_config"] = {"backend": "mooncake"}
    deploy = config["motor-kvpool:motor_deploy_config"]
    deploy["p_instance_num"] = deploy.pop("p_instances_num")
    deploy["d_pod_npu_num"] = "2"
    config["kubernetes:enableSecretMutable"] = True  # another namespace's key: not ours to judge
    assert problems(validator, document) == [
        (["config"], "Unevaluated properties are not allowed ('motor-kvpool:kv_cache_stor_config' was unexpected)"),
        (["config", "motor-kvpool:motor_deploy_config"],
         "Additional properties are not allowed ('p_instance_num' was unexpected)"),
        (["config", "motor-kvpool:motor_deploy_config", "d_pod_npu_num"], "'2' is not of type 'integer'"),
    ]


def test_a_secret_must_be_ciphertext(validator) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    document["config"]["motor-kvpool:secret_env"] = {"HF_TOKEN": {"secure": "v1:abc"}}
    assert problems(validator, document) == []
    document["config"]["motor-kvpool:secret_env"] = {"HF_TOKEN": "hf_plain"}
    assert [path for path, _ in problems(validator, document)] == [["config", "motor-kvpool:secret_env"]]


def test_an_unknown_top_level_key_is_named_as_unexpected(validator) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    config = document["config"]
    config["motor-kvpool:motor_deploy_confg"] = config.pop("motor-kvpool:motor_deploy_config")
    assert problems(validator, document) == [
        (["config"], "'motor-kvpool:motor_deploy_config' is a required property"),
        (["config"], "Unevaluated properties are not allowed ('motor-kvpool:motor_deploy_confg' was unexpected)"),
    ]


def test_what_a_stack_file_holds_beside_our_keys_is_left_alone_and_a_short_key_is_ours(validator) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    document["encryptionsalt"] = "v1:abc"
    document["config"].update({"kubernetes:context": "kind", "pulumi:tags": {"team": "infer"},
                               "motor-kvpool:secret_env": {"secure": "v1:xyz"}})
    assert problems(validator, document) == []
    # The CLI reads a key without `<namespace>:` as the project's: ours under its short name, once.
    document["config"]["motor_deploy_config"] = document["config"].pop("motor-kvpool:motor_deploy_config")
    assert problems(validator, document) == []
    document["config"]["motor-kvpool:motor_deploy_config"] = document["config"]["motor_deploy_config"]
    assert [(path, message[:30]) for path, message in problems(validator, document)] == [
        (["config"], "False schema does not allow {'"),  # motor_deploy_config written both ways
    ]
    del document["config"]["motor-kvpool:motor_deploy_config"]
    # A section key dedented out of its section is motor-kvpool:engine_config for the CLI: no key of ours.
    document["config"]["engine_config"] = {"served_model_name": "qwen3-8B"}
    assert problems(validator, document) == [
        (["config"], "Unevaluated properties are not allowed ('engine_config' was unexpected)"),
    ]


def test_a_typo_in_a_pass_through_section_is_flagged_where_it_is(validator) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    config = document["config"]
    config["motor-kvpool:motor_engine_prefill_config"]["engine_config"]["served_model_nam"] = "qwen3-8B"
    config["motor-kvpool:motor_engine_decode_config"]["health_check_config"] = {"max_failure_cont": 6}
    config["motor-kvpool:motor_coordinator_config"] = {"scheduler_config": {"scheduler_typ": "round_robin"}}
    assert problems(validator, document) == [
        (["config", "motor-kvpool:motor_coordinator_config", "scheduler_config"],
         "Additional properties are not allowed ('scheduler_typ' was unexpected)"),
        (["config", "motor-kvpool:motor_engine_decode_config", "health_check_config"],
         "Additional properties are not allowed ('max_failure_cont' was unexpected)"),
        (["config", "motor-kvpool:motor_engine_prefill_config", "engine_config"],
         "Unevaluated properties are not allowed ('served_model_nam' was unexpected)"),
    ]


# Where near misses go: (path in the stack file's config, the known keys they are made from). A sample of vLLM's
# options (every 9th, plus those written in the examples) keeps the preview runs few.
_MOTOR = passthrough.SCHEMA["motor"]
_OPTIONS = sorted(passthrough.SCHEMA["vllm_serve_options"])
_SECTIONS = {
    "top level": ((), [*PULUMI_CONFIG_KEYS, *(alias for alias in ALIASES if "." not in alias)]),
    "engine_config": (("motor_engine_prefill_config", "engine_config"),
                      [*_OPTIONS[::9], "served_model_name", "max_model_len", "kv_transfer_config", "model"]),
    "coordinator": (("motor_coordinator_config",),
                    [*_MOTOR["classes"]["motor/config/coordinator.py:CoordinatorConfig"]["fields"], "aigw"]),
    "controller api_config": (("motor_controller_config", "api_config"),
                              list(_MOTOR["classes"]["motor/config/controller.py:ApiConfig"]["fields"])),
    "engine nodemanager": (("motor_engine_decode_config", "motor_nodemanger_config"),
                           list(_MOTOR["classes"]["motor/config/node_manager.py:NodeManagerConfig"]["fields"])),
    "health_check_config": (("motor_engine_decode_config", "health_check_config"),
                            list(_MOTOR["classes"]["motor/config/endpoint.py:HealthCheckConfig"]["fields"])),
}


def near_misses(key: str) -> set[str]:
    """What a hand may write for `key`: itself, the other separator (all or one), `key.field`, typos, capitals."""
    variants = {key, key[:-1], f"{key}s", key.upper(), f"{key}.field", key[:2] + key[3:2:-1] + key[2] + key[4:]}
    for separator, other in (("-", "_"), ("_", "-")):
        variants |= {key.replace(separator, other), key.replace(separator, other, 1)}
    return variants


def _with(document: dict, path: tuple[str, ...], keys: set[str]) -> dict:
    """`document` with `keys` added where `path` leads, keys already there left as they are. The value is a mapping:
    the preview drops a null engine option before it checks the keys, and its plain-text-secret rule speaks instead of
    "unknown key" about text under a key like API_KEY_CONFIG."""
    document = copy.deepcopy(document)
    holder = document["config"]
    for step, name in enumerate(path):
        holder = holder.setdefault(f"{PROJECT}:{name}" if step == 0 else name, {})
    for key in keys:
        holder.setdefault(f"{PROJECT}:{key}" if not path else key, {})
    return document


def _preview_flags(document: dict, path: tuple[str, ...], tmp_path: Path) -> set[str]:
    """The keys under `path` the preview calls unknown: the stack file read as the CLI reads it, then the settings."""
    (tmp_path / "stacks").mkdir(exist_ok=True)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", tmp_path / "Pulumi.yaml")
    (tmp_path / "stacks" / "Pulumi.near.yaml").write_text(yaml.safe_dump(document))
    config = load_stack_config(tmp_path, "near")
    try:
        settings_from_config(config.values, set(config.secret_keys), "near")
    except SettingsError as error:
        where = "".join(f"{name}." for name in path)
        flagged = set()
        for field, _, reason in (line.partition(": ") for line in error.problems):
            field = field.removeprefix(f"{PROJECT}:")  # a top-level key is named with or without its namespace
            if field.startswith(where) and reason.startswith("unknown"):
                flagged.add(field.removeprefix(where))
        return flagged
    return set()


def _schema_flags(validator, document: dict, path: tuple[str, ...], keys: set[str]) -> set[str]:
    where = ["config", *(f"{PROJECT}:{name}" if step == 0 else name for step, name in enumerate(path))]
    return {key for key in keys if any(
        list(error.absolute_path) == where and error.validator in ("additionalProperties", "unevaluatedProperties")
        for error in validator.iter_errors(_with(document, path, {key})))}


@pytest.mark.parametrize("section", _SECTIONS)
def test_the_schema_flags_a_near_miss_key_exactly_when_the_preview_does(validator, tmp_path, section) -> None:
    path, known = _SECTIONS[section]
    base = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    keys = set().union(*map(near_misses, known))
    # The CLI refuses a known top-level key of the wrong type before the preview reads the keys: left out there.
    flagged_by_preview = _preview_flags(_with(base, path, keys - set(known) if not path else keys), path, tmp_path)
    flagged_by_schema = _schema_flags(validator, base, path, keys)
    assert flagged_by_schema == flagged_by_preview
    assert flagged_by_preview and keys - flagged_by_preview  # each side of the line is exercised


@pytest.mark.parametrize("stack_file", STACK_FILES, ids=lambda path: path.name)
def test_the_preview_accepts_every_example_stack_the_schema_accepts(stack_file: Path) -> None:
    config = load_stack_config(PROJECT_DIR, stack_file.name.removeprefix("Pulumi.").removesuffix(".yaml"))
    settings_from_config(config.values, set(config.secret_keys), config.stack)  # raises SettingsError on a problem
