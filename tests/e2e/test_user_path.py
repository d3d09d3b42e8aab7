"""Issue 22: the README's path from deploy.py to the cluster in one sitting, each step the command a user types:
`kvpool import` of Motor's example -> `kvpool preview` -> a change -> `kvpool diff --base HEAD` -> `pulumi stack init`
and `pulumi config set` -> `pulumi preview --policy-pack kvpool/policies` -> `pulumi up`, on the real CLI and
cluster."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_stacks import deployments_not_ready, manifests, up_stack
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace
from tests.e2e.views import live_differences, offline_in_copy_to

pytestmark = pytest.mark.e2e
STACK = "from-deploy-py"


def kvpool(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", *map(str, args)], cwd=project,
                          capture_output=True, text=True, timeout=600)


def git(project: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=e2e", "-c", "user.email=e2e@localhost", *args], cwd=project, check=True,
                   capture_output=True, timeout=60)


def test_from_deploy_py_to_pulumi_up(workspace: PulumiWorkspace, cluster: Cluster, motor_examples: Path,
                                     tmp_path: Path) -> None:
    project = workspace.project
    imported = kvpool(project, "import", "--config-dir", motor_examples / "vllm", "--stack", STACK,
                      "--set", "motor_deploy_config.image_name=registry.local/mindie-motor-vllm:3.0.0",
                      "--set", "motor_deploy_config.deploy_mode=multi_deployment")
    assert imported.returncode == 0, imported.stderr
    assert f"wrote stacks/Pulumi.{STACK}.yaml" in imported.stdout
    hint = imported.stdout.splitlines()[-1]  # the Python that ran, here the repository's venv's
    assert hint.startswith("next: ") and hint.endswith(f"/venv/bin/python -m kvpool preview --stack {STACK}"), hint

    previewed = kvpool(project, "preview", "--stack", STACK, "--out", tmp_path / "first")
    assert previewed.returncode == 0, previewed.stderr

    # A reviewed change: the imported file is committed, then decode grows by one instance.
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "import deploy.py's configuration")
    stack_file = project / "stacks" / f"Pulumi.{STACK}.yaml"
    document = yaml.safe_load(stack_file.read_text())
    deploy = document["config"]["motor-kvpool:motor_deploy_config"]
    deploy["d_instances_num"] += 1
    namespace = deploy["job_id"]  # Motor's example names its own (mindie-motor)
    stack_file.write_text(yaml.safe_dump(document, sort_keys=False))
    added = f"vllm-d{deploy['d_instances_num'] - 1}"
    diffed = kvpool(project, "diff", "--base", "HEAD", "--stack", STACK, "--out", tmp_path / "out")
    assert diffed.returncode == 0, diffed.stderr
    lines = diffed.stdout.splitlines()
    assert f"+ manifests/deployment-{namespace}-{added}.yaml (to create)" in lines
    assert f"~ manifests/configmap-{namespace}-motor-config.yaml (to update)" in lines
    assert any(line.startswith("Blast radius: ") for line in lines)

    workspace.stack_init(STACK)  # `pulumi stack init` and `pulumi config set motor_deployer_dir ...`
    workspace.run("preview", "--policy-pack", "kvpool/policies", "-s", STACK).check()
    up_stack(workspace, cluster, STACK, tmp_path / "out")  # `pulumi up`, on nodes its pods can run on
    as_up = offline_in_copy_to(workspace, STACK, tmp_path / "as-up")
    assert as_up.returncode == 0, as_up.stderr
    objects = manifests(tmp_path / "as-up", STACK)
    assert added in {obj["metadata"]["name"] for obj in objects if obj["kind"] == "Deployment"}
    assert live_differences(cluster, objects) == []
    assert deployments_not_ready(cluster, namespace) == []
