"""stacks/stack-file.schema.json: generated from the settings models, committed as generated, named by every example
stack's modeline, and what a real JSON Schema validator (jsonschema) holds the example stacks to: all valid, a typo
flagged where an editor shows it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kvpool.engine.stack_schema import MODELINE, SCHEMA_FILE, schema_text
from tests.program_runs import PROJECT_DIR

STACK_FILES = sorted((PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(validator, document) -> list[tuple[list, str]]:
    return sorted((list(error.absolute_path), error.message) for error in validator.iter_errors(document))


def test_the_committed_schema_is_what_the_generator_writes() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), "run python -m kvpool.engine.stack_schema"
    check = subprocess.run([sys.executable, "-m", "kvpool.engine.stack_schema", "--check"], cwd=PROJECT_DIR,
                           capture_output=True, text=True, timeout=120)
    assert (check.returncode, check.stderr) == (0, "")


def test_the_generator_check_fails_on_a_stale_schema(tmp_path: Path, monkeypatch) -> None:
    from kvpool.engine import stack_schema

    stale = tmp_path / SCHEMA_FILE.name
    stale.write_text(schema_text().replace('"integer"', '"string"', 1))
    monkeypatch.setattr(stack_schema, "SCHEMA_FILE", stale)
    assert stack_schema.main(["--check"]) == 1


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
        (["config"], "'motor-kvpool:kv_cache_stor_config' does not match any of the regexes: '^(?!motor-kvpool:)'"),
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
