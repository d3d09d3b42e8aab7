"""Offline resolution of target_stack: local stacks are previewed first; others come from --stack-outputs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_references import (
    StackReferenceResolutionError,
    read_outputs_file,
    resolve,
)
from tests.program_runs import PROJECT_DIR

A = "organization/motor-kvpool/service-a"


def test_a_local_target_is_previewed_first():
    references = resolve(PROJECT_DIR, load_stack_config(PROJECT_DIR, "service-b"))
    assert list(references) == [A]
    assert references[A]["kv_store"]["host"] == "mindie-motor-kvs-master.service-a.svc.cluster.local"


def test_a_stack_without_target_references_nothing():
    assert resolve(PROJECT_DIR, load_stack_config(PROJECT_DIR, "dev")) == {}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of this program whose stacks/ the test writes."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, tmp_path / name)
    shutil.copytree(PROJECT_DIR / "kvpool", tmp_path / "kvpool", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "stacks").mkdir()
    return tmp_path


def write_consumer(project: Path, stack: str, target: str) -> None:
    config = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.service-b.yaml").read_text())
    config["config"]["motor-kvpool:kv_cache_store_config"]["target_stack"] = target
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config))


def test_a_cycle_is_refused(project):
    write_consumer(project, "left", "organization/motor-kvpool/right")
    write_consumer(project, "right", "organization/motor-kvpool/left")
    with pytest.raises(StackReferenceResolutionError) as caught:
        resolve(project, load_stack_config(project, "left"))
    assert str(caught.value) == (
        "organization/motor-kvpool/right: target_stack organization/motor-kvpool/left leads back to itself "
        "(organization/motor-kvpool/left -> organization/motor-kvpool/right -> organization/motor-kvpool/left)"
    )


def test_a_missing_local_stack_is_named(project):
    write_consumer(project, "consumer", "organization/motor-kvpool/nowhere")
    with pytest.raises(StackReferenceResolutionError) as caught:
        resolve(project, load_stack_config(project, "consumer"))
    stacks = project / "stacks"
    assert str(caught.value) == (
        f"organization/motor-kvpool/consumer: target_stack organization/motor-kvpool/nowhere: no stack file "
        f"{stacks}/Pulumi.nowhere.yaml for stack 'nowhere' (stacks in {stacks}: consumer)"
    )


def test_another_organizations_stack_needs_an_outputs_file(project, tmp_path):
    write_consumer(project, "consumer", "acme/motor-kvpool/shared-pool")
    config = load_stack_config(project, "consumer")
    with pytest.raises(StackReferenceResolutionError) as caught:
        resolve(project, config)
    assert str(caught.value) == (
        "organization/motor-kvpool/consumer: target_stack acme/motor-kvpool/shared-pool is not a stack of this "
        "project on the local backend (organization/motor-kvpool/<stack>), so it cannot be previewed here; give its "
        "outputs with --stack-outputs FILE"
    )
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps({"acme/motor-kvpool/shared-pool": {"kv_store": {"schema": 1}}}))
    assert resolve(project, config, read_outputs_file(outputs)) == {"acme/motor-kvpool/shared-pool": {"kv_store": {"schema": 1}}}


def test_a_malformed_outputs_file_is_refused(tmp_path):
    path = tmp_path / "outputs.json"
    path.write_text('["not", "a", "map"]')
    with pytest.raises(StackReferenceResolutionError) as caught:
        read_outputs_file(path)
    assert str(caught.value) == f'--stack-outputs {path}: expected {{"<org>/<project>/<stack>": {{<outputs>}}}}'


def test_cli_previews_the_consumer_against_the_providers_outputs(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "kvpool", "preview", "--stack", "service-b", "--out", str(tmp_path)],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert f"Stack reference: {A} (its outputs read from its own preview or --stack-outputs)" in done.stdout.splitlines()
    env = (tmp_path / "service-b" / "manifests" / "configmap-service-b-motor-config.yaml").read_text()
    assert "tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50088" in env


def test_the_older_section_name_is_resolved_too(project):
    config = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.service-b.yaml").read_text())["config"]
    config["motor-kvpool:kv_cache_pool_config"] = config.pop("motor-kvpool:kv_cache_store_config")
    (project / "stacks" / "Pulumi.old-name.yaml").write_text(yaml.safe_dump({"config": config}))
    shutil.copy(PROJECT_DIR / "stacks" / "Pulumi.service-a.yaml", project / "stacks" / "Pulumi.service-a.yaml")
    assert list(resolve(project, load_stack_config(project, "old-name"))) == [A]


def test_the_stacks_own_last_outputs_come_only_from_the_outputs_file():
    """A stack reads its own last `engines` output (kvpool/internal/rollout.py): given, it is passed on; not given, the
    stack is never previewed from within itself (the offline engine answers no outputs)."""
    config = load_stack_config(PROJECT_DIR, "dev")
    own = {"engines": {"prefill": ["vllm-p0"], "decode": ["vllm-d0"]}}
    assert resolve(PROJECT_DIR, config, {"organization/motor-kvpool/dev": own}) == {"organization/motor-kvpool/dev": own}
    assert resolve(PROJECT_DIR, config) == {}
