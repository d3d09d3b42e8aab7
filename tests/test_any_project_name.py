"""A project that uses the package under a name of its own (the settings stay in the `motor-kvpool:` namespace):
`kvpool preview` follows its stacks' references to each other, sizes their pool, refuses what two of its stacks
would clash on in one cluster and a plain value among secret ones, and `kvpool import` names its stacks, as for this
repository's project."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.program_runs import PROJECT_DIR
from tests.service_configs import as_motor_files, memcache_pool

NAME = "llm-infra"


def kvpool(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", *args, "--project-dir", str(project)], cwd=PROJECT_DIR,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text(f"name: {NAME}\nruntime: python\n")
    (tmp_path / "__main__.py").write_text("from kvpool.program import run\n\nrun()\n")
    for stack in ("service-a", "service-b"):
        text = (PROJECT_DIR / "stacks" / f"Pulumi.{stack}.yaml").read_text()
        (tmp_path / f"Pulumi.{stack}.yaml").write_text(text.replace("organization/motor-kvpool/", f"organization/{NAME}/"))
    return tmp_path


def test_a_consumer_previews_its_owner_first_and_is_sized_with_it(project: Path, tmp_path: Path) -> None:
    done = kvpool(project, "preview", "--stack", "service-b", "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"Stack reference: organization/{NAME}/service-a (its outputs read from its own preview or --stack-outputs)" in lines
    assert any(line.startswith(f"service-b  memcache  into organization/{NAME}/service-a's pool") for line in lines)
    fleet = kvpool(project, "fleet")
    assert fleet.returncode == 0, fleet.stderr
    assert "  service-a (memcache, namespace service-a): 8GiB in 4 engine pods; consumers: service-b" in fleet.stdout
    # READS names the owner by its stack name, as for this repository's project
    assert re.search(r"^service-b +default +consumer +service-b +memcache +service-a +- ", fleet.stdout, re.MULTILINE)
    assert fleet.stdout.splitlines()[-1] == "Problems: none"


def test_two_of_its_stacks_asking_one_cluster_for_one_namespace_are_refused(project: Path, tmp_path: Path) -> None:
    text = (project / "Pulumi.service-b.yaml").read_text()
    (project / "Pulumi.service-c.yaml").write_text(text.replace("motor_deploy_config:\n",
                                                                 "motor_deploy_config:\n    job_id: service-b\n", 1))
    done = kvpool(project, "preview", "--stack", "service-c", "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert done.stderr.startswith("error: stack service-c asks cluster 'default' for what stack service-b of the "
                                  "project holds there")


def test_a_plain_secret_env_value_beside_secure_ones_is_refused(project: Path, tmp_path: Path) -> None:
    stack_file = project / "Pulumi.service-a.yaml"
    stack_file.write_text(stack_file.read_text().replace(
        "config:\n", "config:\n  motor-kvpool:secret_env:\n    HF_TOKEN: {secure: v1:abc}\n    DB_PASS: hunter2\n", 1))
    done = kvpool(project, "preview", "--stack", "service-a", "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (f"error: {stack_file}: motor-kvpool:secret_env.DB_PASS: is plain text beside secure values; "
                           "every secret_env value must be encrypted: `pulumi config set --secret --path "
                           "motor-kvpool:secret_env.DB_PASS VALUE`\n")


def test_an_imported_target_job_id_names_a_stack_of_this_project(project: Path, tmp_path: Path) -> None:
    service = memcache_pool()
    service["motor_deploy_config"].update(deploy_mode="multi_deployment", job_id="service-c")
    service["kv_cache_store_config"]["target_job_id"] = "service-a"
    user_config, env = as_motor_files(service)
    (tmp_path / "user_config.json").write_text(json.dumps(user_config))
    (tmp_path / "env.json").write_text(json.dumps(env))
    done = kvpool(project, "import", "--config-dir", str(tmp_path), "--stack", "service-c")
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load((project / "Pulumi.service-c.yaml").read_text())["config"]
    assert config["motor-kvpool:kv_cache_store_config"]["target_stack"] == f"organization/{NAME}/service-a"


def test_a_target_stack_naming_the_stack_itself_is_refused_and_another_projects_is_not_taken_for_it(
    project: Path, tmp_path: Path
) -> None:
    stack_file = project / "Pulumi.service-b.yaml"
    text = stack_file.read_text()
    stack_file.write_text(text.replace(f"organization/{NAME}/service-a", f"organization/{NAME}/service-b"))
    done = kvpool(project, "preview", "--stack", "service-b", "--out", str(tmp_path / "out"))
    assert (done.returncode, done.stdout) == (1, "")
    assert (f"  - kv_cache_store_config.target_stack 'organization/{NAME}/service-b' is this stack itself; remove "
            "target_stack to own the store here, or name the stack that owns it") in done.stderr.splitlines()
    # the same stack name in another project (motor-kvpool's own) is another stack: looked up, not refused as itself
    stack_file.write_text(text.replace(f"organization/{NAME}/service-a", "organization/motor-kvpool/service-b"))
    done = kvpool(project, "preview", "--stack", "service-b", "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert "is this stack itself" not in done.stderr
    assert "organization/motor-kvpool/service-b" in done.stderr


@pytest.mark.parametrize(("written", "advice"), [
    ("target_job_id: service-a",
     f"write `target_stack: organization/{NAME}/service-a` (the stack of the service that owns the store)"),
    ("target_stack: service-a",
     f"write organization/{NAME}/service-a for this project's stack service-a on the local backend (or "
     f"<organization>/{NAME}/service-a on Pulumi Cloud)"),
])
def test_a_store_named_by_its_short_name_is_advised_as_a_stack_of_this_project(
    project: Path, tmp_path: Path, written: str, advice: str
) -> None:
    stack_file = project / "Pulumi.service-b.yaml"
    stack_file.write_text(stack_file.read_text().replace(f"target_stack: organization/{NAME}/service-a", written))
    done = kvpool(project, "preview", "--stack", "service-b", "--out", str(tmp_path / "out"))
    assert done.returncode == 1
    assert advice in done.stderr, done.stderr
