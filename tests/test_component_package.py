"""The component package's kvpool:index:Service (kvpool/component_package/) builds exactly what the Python program
builds for the same settings, read from the stack's configuration or given as its `settings` input with every number
a float (as the component provider host hands them over); what it cannot do it refuses by name; and the schema the
host infers from it is the one documented. tests/e2e/test_component_package.py proves the same through a Pulumi YAML
program on the real CLI and cluster."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pulumi
import pytest
import yaml
from pulumi.provider.experimental.component import ComponentProvider

from kvpool import __version__
from kvpool.component_package.service import Service, service_settings
from kvpool.errors import SettingsError
from tests.program_runs import PROJECT_DIR

STACK = "mooncake-ha"


def floats(value: Any) -> Any:
    """Every number a float, as protobuf carries it, and every object's keys in reverse order."""
    if isinstance(value, bool) or not isinstance(value, (int, float, dict, list)):
        return value
    if isinstance(value, dict):
        return {key: floats(value[key]) for key in sorted(value, reverse=True)}
    if isinstance(value, list):
        return [floats(item) for item in value]
    return float(value)


def project(root: Path, program: str, config: dict[str, Any] | None = None) -> Path:
    """A project of its own (Pulumi.yaml declares none of the settings) with the example stack's file (or `config` as
    its stack file)."""
    root.mkdir(parents=True)
    (root / "Pulumi.yaml").write_text("name: llm-infra\nruntime: python\nstackConfigDir: stacks\nconfig:\n"
                                      "  kubernetes:enableConfigMapMutable:\n    value: true\n")
    (root / "stacks").mkdir()
    stack_file = root / "stacks" / f"Pulumi.{STACK}.yaml"
    if config is None:
        shutil.copy(PROJECT_DIR / "stacks" / f"Pulumi.{STACK}.yaml", stack_file)
    else:
        stack_file.write_text(yaml.safe_dump({"config": config}))
    (root / "__main__.py").write_text(program)
    return root


def preview(project_dir: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", "preview", "--stack", STACK, "--project-dir", str(project_dir),
                           "--out", str(out), "--no-policy"], cwd=PROJECT_DIR, capture_output=True, text=True,
                          timeout=300)


def manifests(out: Path) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted((out / STACK / "manifests").glob("*.yaml"))}


@pytest.fixture(scope="module")
def program_manifests(tmp_path_factory) -> dict[str, str]:
    out = tmp_path_factory.mktemp("program")
    done = preview(PROJECT_DIR, out)
    assert done.returncode == 0, done.stderr
    return manifests(out)


def test_from_the_stack_configuration_it_builds_what_the_program_builds(program_manifests, tmp_path: Path) -> None:
    facade = project(tmp_path / "facade", 'from kvpool.component_package.service import Service\n'
                                          'Service("service", {})\n')
    done = preview(facade, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["pulumi:pulumi:Stack  llm-infra-mooncake-ha", "    kvpool:index:Service  service"]
    assert "        kubernetes:core/v1:Namespace  mooncake-ha" in lines  # every object under the component
    assert manifests(tmp_path / "out") == program_manifests
    assert len(program_manifests) > 30


def test_from_its_settings_input_with_float_numbers_and_keys_in_any_order_it_builds_what_the_program_builds(program_manifests,
                                                                                    tmp_path: Path) -> None:
    config = yaml.safe_load((PROJECT_DIR / "stacks" / f"Pulumi.{STACK}.yaml").read_text())["config"]
    settings = {key.removeprefix("motor-kvpool:"): value for key, value in config.items()
                if key.startswith("motor-kvpool:")}
    assert json.dumps(floats(settings), sort_keys=True) != json.dumps(settings, sort_keys=True)  # numbers to convert
    program = ("import json\nfrom kvpool.component_package.service import Service\n"
               f"Service('service', {{'settings': json.loads({json.dumps(json.dumps(floats(settings)))})}})\n")
    facade = project(tmp_path / "facade", program, config={})
    done = preview(facade, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert manifests(tmp_path / "out") == program_manifests


def test_another_stacks_store_is_refused_by_name(tmp_path: Path) -> None:
    config = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.service-b.yaml").read_text())["config"]
    settings = {key.removeprefix("motor-kvpool:"): value for key, value in config.items()}
    program = ("import json\nfrom kvpool.component_package.service import Service\n"
               f"Service('service', {{'settings': json.loads({json.dumps(json.dumps(settings))})}})\n")
    done = preview(project(tmp_path / "facade", program, config={}), tmp_path / "out")
    assert done.returncode == 1
    assert ("error: kvpool:index:Service settings: 1 problem\n  - kv_cache_store_config.target_stack: another stack's store "
            "is not available through the component package yet; use the Python program (kvpool.program.run)"
            ) in done.stderr


def test_the_schema_the_host_infers() -> None:
    schema = json.loads(ComponentProvider([Service], "kvpool", version=__version__).schema)
    assert (schema["name"], schema["version"]) == ("kvpool", __version__)
    service = schema["resources"]["kvpool:index:Service"]
    assert service["isComponent"] is True
    assert list(service["inputProperties"]) == ["settings"]
    assert service["inputProperties"]["settings"]["additionalProperties"]["$ref"] == "pulumi.json#/Any"
    assert service["requiredInputs"] == []
    assert sorted(service["properties"]) == service["required"] == ["coordinator", "engines", "kvStore", "namespace"]


def _deep(levels: int) -> dict:
    root = current = {}
    for _ in range(levels):
        current["a"] = {}
        current = current["a"]
    return root


@pytest.mark.parametrize(("given", "problems"), [
    ("motor_deploy_config", ["settings: must be a mapping of motor-kvpool:* keys (motor_deploy_config, ...), found str"]),
    (3.0, ["settings: must be a mapping of motor-kvpool:* keys (motor_deploy_config, ...), found float"]),
    ({1: "x", "env": {2.5: 1}}, ["settings.env: key 2.5 is not text; write every key as text",
                                 "settings: key 1 is not text; write every key as text"]),
    (_deep(200), ["settings: nested more than 64 levels deep"]),
])
def test_a_settings_input_of_the_wrong_shape_is_refused_naming_it(monkeypatch, given, problems):
    """Issue 45 §3: a string or number was a TypeError from dict(), non-text keys one from sorted(), 200 levels a
    RecursionError: internal errors, not the input's refusal."""
    monkeypatch.setattr(pulumi, "get_stack", lambda: "dev")
    with pytest.raises(SettingsError) as caught:
        service_settings({"settings": given})
    assert caught.value.problems == problems
