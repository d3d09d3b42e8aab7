"""Issue 46's upgrade path: a stack that went up with the children's old Pulumi names (their Kubernetes names alone,
as before kvpool/internal/child_names.py) is taken over by today's program with no object created, deleted or
replaced: the aliases of the default-named components' children carry each old URN to its new one.

The old program is the project's kvpool package at OLD_NAMING, the last main commit before the renaming, taken from
git into the test's own copy of the project; the stacks are the examples whose components cover the aliases (a
KVStore, the ControlPlane and EnginePools, a UCMStorage, an InferServiceSet that also moved from the stack's root),
each in a namespace of its own so that they never meet the session's stacks. The component package's path too: a
Pulumi YAML program with one kvpool:index:Service goes up with OLD_NAMING's package (its parts named as the Python
program's, before the Service named them after itself) and is taken over by today's the same way."""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_stacks import ensure_crds, ensure_nodes, ensure_volumes, manifests
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace
from tests.e2e.test_component_package import settings as service_settings
from tests.e2e.views import offline_in_copy_to, preview_json
from tests.outside import absent
from tests.wheel import VERSION, build_wheel, install_requirements

pytestmark = pytest.mark.e2e

OLD_NAMING = "fc8fcd616a95772f9846c0ea69f5e3ec9db79ef0"  # main before issue 46: children named by Kubernetes name
STACKS = ("dev", "ucm", "service-set")


def old_package(project: Path) -> None:
    """Replaces the copy's kvpool package with the one at OLD_NAMING."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", "--format=tar", OLD_NAMING, "kvpool"],
                             capture_output=True, timeout=120)
    if archive.returncode != 0:
        absent(f"commit {OLD_NAMING} is not in this checkout (a shallow clone?): {archive.stderr.decode()[-300:]}")
    shutil.rmtree(project / "kvpool")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(project, filter="data")


def new_package(project: Path) -> None:
    shutil.rmtree(project / "kvpool")
    shutil.copytree(REPO / "kvpool", project / "kvpool", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


def child_names(workspace: PulumiWorkspace, stack: str, cwd: Path | None = None) -> set[str]:
    """The Pulumi names of the stack's Kubernetes objects, as its state holds them."""
    exported = workspace.run("stack", "export", "-s", stack, cwd=cwd).check().stdout
    resources = json.loads(exported)["deployment"]["resources"]
    return {r["urn"].split("::")[-1] for r in resources if r["type"].startswith("kubernetes:")
            and r["type"] != "pulumi:providers:kubernetes"}


def test_stacks_up_with_the_old_child_names_update_with_no_object_created_deleted_or_replaced(
    own_workspace: PulumiWorkspace, cluster: Cluster, e2e_tmp: Path
) -> None:
    workspace = own_workspace
    old_package(workspace.project)
    before: dict[str, set[str]] = {}
    try:
        for stack in STACKS:
            workspace.stack_init(stack)
            workspace.run("config", "set", "--path", "motor_deploy_config.job_id", f"renamed-{stack}", "-s",
                          stack).check()
            out = e2e_tmp / "renamed-old" / stack
            result = offline_in_copy_to(workspace, stack, out)
            assert result.returncode == 0, result.stderr
            objects = manifests(out, stack)
            ensure_nodes(cluster, objects)
            ensure_volumes(cluster, objects)
            ensure_crds(cluster, objects)
            workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()
            before[stack] = child_names(workspace, stack)

        new_package(workspace.project)
        for stack in STACKS:
            data, result = preview_json(workspace, stack, "--diff")
            assert result.returncode == 0, result.output[-4000:]
            ops = sorted({step["op"] for step in data["steps"]})
            changed = sorted((step["op"], step["urn"]) for step in data["steps"]
                             if step["op"] not in ("same", "read"))
            assert changed == [], (stack, ops, changed)
            workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()
            after = child_names(workspace, stack)
            assert len(after) == len(before[stack]), stack
            assert after != before[stack], f"{stack}: no child was renamed, so no alias was exercised"
            again, result = preview_json(workspace, stack)
            assert result.returncode == 0, result.output[-4000:]
            assert {step["op"] for step in again["steps"]} <= {"same", "read"}, stack
    finally:
        for stack in reversed(STACKS):
            workspace.run("destroy", "--yes", "-s", stack, timeout=1200)


YAML_NAMESPACE = "renamed-yaml"


def yaml_program(program: Path, services: dict[str, str]) -> None:
    """The YAML program declaring a kvpool:index:Service per Pulumi name -> namespace, as the README shows it."""
    (program / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "renamed-yaml", "runtime": "yaml",
        "packages": {"kvpool": "./kvpool-package"},
        "config": {"kubernetes:enableConfigMapMutable": {"value": True}},
        "resources": {name: {"type": "kvpool:index:Service", "properties": {"settings": service_settings(namespace)}}
                      for name, namespace in services.items()},
    }, sort_keys=False))


def steps_changed(data: dict) -> list[tuple[str, str]]:
    return sorted((step["op"], step["urn"]) for step in data["steps"] if step["op"] not in ("same", "read"))


def test_a_yaml_service_up_with_the_old_package_updates_with_no_object_created_deleted_or_replaced(
    own_workspace: PulumiWorkspace, cluster: Cluster, e2e_tmp: Path
) -> None:
    workspace, root = own_workspace, e2e_tmp / "renamed-yaml"
    wheel = build_wheel(root / "wheel")
    python = root / "python"  # the virtualenv the package names (../../python/venv), and the offline preview's project
    python.mkdir()
    (python / "requirements.txt").write_text(f"motor-kvpool=={VERSION}\n")
    (python / "Pulumi.yaml").write_text("name: renamed-yaml-python\nruntime: python\n")
    (python / "__main__.py").write_text("from kvpool.program import run\n\nrun()\n")
    (python / "Pulumi.dev.yaml").write_text(yaml.safe_dump(
        {"config": {f"motor-kvpool:{key}": value for key, value in service_settings(YAML_NAMESPACE).items()}}))
    venv = install_requirements(python, wheel.parent)
    offline = subprocess.run([str(venv / "bin" / "kvpool"), "preview", "--stack", "dev", "--out", str(root / "out")],
                             cwd=python, capture_output=True, text=True, timeout=600)
    assert offline.returncode == 0, offline.stderr
    program = root / "program"
    written = subprocess.run([str(venv / "bin" / "kvpool"), "component-package", str(program / "kvpool-package")],
                             capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    (installed,) = {path.parent for path in venv.glob("lib/python*/site-packages/kvpool/__init__.py")}
    yaml_program(program, {"service": YAML_NAMESPACE})
    old_package(installed.parent)
    workspace.run("stack", "init", "dev", cwd=program).check()
    try:
        ensure_nodes(cluster, manifests(root / "out", "dev"))
        workspace.run("up", "--yes", "--skip-preview", "-s", "dev", cwd=program, timeout=1200).check()
        before = child_names(workspace, "dev", program)

        new_package(installed.parent)
        # A second Service in the upgrade's update would claim the same old URNs: the engine refuses it.
        yaml_program(program, {"service": YAML_NAMESPACE, "second": f"{YAML_NAMESPACE}-b"})
        twice = workspace.run("preview", "-s", "dev", cwd=program)
        assert twice.returncode != 0, twice.output[-4000:]
        assert "aliased to the same" in twice.output or "Duplicate resource alias" in twice.output, twice.output[-4000:]

        yaml_program(program, {"service": YAML_NAMESPACE})
        result = workspace.run("preview", "--json", "--diff", "-s", "dev", cwd=program)
        data = json.loads(result.stdout)
        assert result.returncode == 0, result.output[-4000:]
        assert steps_changed(data) == [], sorted({step["op"] for step in data["steps"]})
        workspace.run("up", "--yes", "--skip-preview", "-s", "dev", cwd=program, timeout=1200).check()
        after = child_names(workspace, "dev", program)
        assert len(after) == len(before)
        assert after != before, "no child was renamed, so no alias was exercised"
        again = json.loads(workspace.run("preview", "--json", "-s", "dev", cwd=program).check().stdout)
        assert steps_changed(again) == []
        # Once no resource of the stack has an old URN, a second Service is only created.
        yaml_program(program, {"service": YAML_NAMESPACE, "second": f"{YAML_NAMESPACE}-b"})
        added = json.loads(workspace.run("preview", "--json", "-s", "dev", cwd=program).check().stdout)
        assert {op for op, _ in steps_changed(added)} == {"create"}
    finally:
        workspace.run("destroy", "--yes", "-s", "dev", cwd=program, timeout=1200)
