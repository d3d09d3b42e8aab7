"""Issue 36: a project that `pulumi new` makes from templates/motor-kvpool, outside this repository, with the wheel
this checkout builds installed from its requirements.txt: `kvpool preview` offline, `pulumi preview` with the
installed policy pack, and `pulumi up` on the e2e cluster, which then holds exactly the offline preview's objects."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.policy_fixtures import POLICY_COUNT
from tests.e2e.cluster_stacks import deployments_not_ready, ensure_nodes, manifests
from tests.e2e.realengine import MOTOR_DEPLOYER, REPO, Cluster, PulumiWorkspace
from tests.e2e.views import live_differences
from tests.wheel import VERSION, build_wheel, install_requirements

pytestmark = pytest.mark.e2e
PROJECT = "llm-infra"  # not motor-kvpool: the package works in a project of any name


def test_a_project_from_the_template_previews_offline_and_goes_up(workspace: PulumiWorkspace, cluster: Cluster,
                                                                   tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheel")
    project = tmp_path / PROJECT
    workspace.run("new", str(REPO / "templates" / "motor-kvpool"), "--dir", str(project), "--generate-only", "--yes",
                  "--name", PROJECT, "--description", "Our Qwen service", cwd=tmp_path).check()
    assert sorted(path.name for path in project.iterdir()) == [
        ".gitignore", "Pulumi.dev.yaml", "Pulumi.yaml", "__main__.py", "requirements.txt"]
    assert (project / "requirements.txt").read_text() == f"motor-kvpool=={VERSION}\n"
    venv = install_requirements(project, wheel.parent)
    # `source venv/bin/activate`: the policy pack runs in the Python first on PATH.
    active = {"PATH": f"{venv / 'bin'}:{workspace.env()['PATH']}", "VIRTUAL_ENV": str(venv)}

    def kvpool(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(venv / "bin" / "kvpool"), *args], cwd=project, capture_output=True, text=True,
                              timeout=600)

    schema = kvpool("stack-schema")
    assert (schema.returncode, schema.stdout) == (0, "wrote stack-file.schema.json\n")
    workspace.run("stack", "init", "dev", cwd=project).check()
    workspace.run("config", "set", "motor-kvpool:motor_deployer_dir", str(MOTOR_DEPLOYER), "-s", "dev",
                  cwd=project).check()

    offline = kvpool("preview", "--stack", "dev", "--out", str(tmp_path / "out"))
    assert offline.returncode == 0, offline.stderr
    assert f"Policies: motor-kvpool {VERSION}: 0 mandatory, 0 advisory violations ({POLICY_COUNT} policies)" in offline.stdout
    objects = manifests(tmp_path / "out", "dev")
    # The service in its own namespace; kube-system holds only the Role to read what Motor reads there.
    assert {obj["metadata"].get("namespace") for obj in objects} == {PROJECT, "kube-system", None}

    pack = kvpool("policy-pack-dir").stdout.strip()
    assert pack == str(venv.resolve() / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}"
                       / "site-packages" / "kvpool" / "policies")
    preview = workspace.run("preview", "--policy-pack", pack, "-s", "dev", cwd=project, extra_env=active).check()
    assert f"motor-kvpool@v{VERSION}" in preview.output

    ensure_nodes(cluster, objects)
    workspace.run("up", "--yes", "--skip-preview", "--policy-pack", pack, "-s", "dev", cwd=project, extra_env=active,
                  timeout=1200).check()
    assert live_differences(cluster, objects) == []
    assert deployments_not_ready(cluster, PROJECT) == []
    workspace.run("destroy", "--yes", "-s", "dev", cwd=project, extra_env=active, timeout=1200).check()
