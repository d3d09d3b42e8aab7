"""A project that uses the package under a name of its own (the settings stay in the `motor-kvpool:` namespace):
`kvpool preview` follows its stacks' references to each other, sizes their pool and refuses what two of its stacks
would clash on in one cluster, as for this repository's project."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.program_runs import PROJECT_DIR

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
