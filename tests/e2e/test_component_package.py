"""Issue 36: a Pulumi YAML program declares motor-kvpool's service through the component package
(`kvpool component-package`, the Python SDK's component provider host) and `pulumi up` creates exactly the objects the
Python program creates for the same settings: those of the Python project's offline preview, which the other e2e tests
prove equal to its own `pulumi up`. The YAML language host is built from its Go module (tools/real-engine/build.sh)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.cluster_stacks import deployments_not_ready, ensure_nodes, manifests
from tests.e2e.realengine import (
    MOTOR_DEPLOYER,
    REPO,
    Cluster,
    PulumiWorkspace,
)
from tests.e2e.views import live_differences
from tests.wheel import VERSION, build_wheel, install_requirements

pytestmark = pytest.mark.e2e
NAME = "yaml-svc"  # the namespace too, of both programs


def settings(namespace: str = NAME) -> dict[str, Any]:
    """The template's service, in its own namespace, with Motor's scripts."""
    text = (REPO / "templates" / "motor-kvpool" / "Pulumi.dev.yaml").read_text().replace("${PROJECT}", namespace)
    config = yaml.safe_load(text)["config"]
    sections = {key.removeprefix("motor-kvpool:"): value for key, value in config.items()}
    return {**sections, "motor_deployer_dir": str(MOTOR_DEPLOYER)}


def kubernetes_objects(deployment: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of every Kubernetes object of a stack (`pulumi stack export`'s deployment)."""
    found = []
    for resource in deployment["resources"]:
        if resource["type"].startswith("kubernetes:") and resource["type"] != "pulumi:providers:kubernetes":
            metadata = resource["outputs"]["metadata"]
            found.append((resource["outputs"]["kind"], metadata.get("namespace", ""), metadata["name"]))
    return sorted(found)


def test_a_yaml_program_goes_up_with_the_objects_of_the_python_program(workspace: PulumiWorkspace, cluster: Cluster,
                                                                       tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path / "wheel")

    # The Python program: a project of the package with these settings as its stack file, previewed offline.
    python = tmp_path / "python"
    python.mkdir()
    (python / "requirements.txt").write_text(f"motor-kvpool=={VERSION}\n")
    (python / "Pulumi.yaml").write_text(f"name: {NAME}\nruntime: python\nconfig:\n"
                                        "  kubernetes:enableConfigMapMutable:\n    value: true\n")
    (python / "__main__.py").write_text("from kvpool.program import run\n\nrun()\n")
    (python / "Pulumi.dev.yaml").write_text(yaml.safe_dump(
        {"config": {f"motor-kvpool:{key}": value for key, value in settings().items()}}))
    venv = install_requirements(python, wheel.parent)
    offline = subprocess.run([str(venv / "bin" / "kvpool"), "preview", "--stack", "dev", "--out", str(tmp_path / "out")],
                             cwd=python, capture_output=True, text=True, timeout=600)
    assert offline.returncode == 0, offline.stderr
    objects = manifests(tmp_path / "out", "dev")

    # The YAML program: the service declared with the same settings as its input, the package beside it.
    program = tmp_path / NAME
    written = subprocess.run([str(venv / "bin" / "kvpool"), "component-package", str(program / "kvpool-package")],
                             capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    assert "virtualenv: ../../python/venv\n" in (program / "kvpool-package" / "PulumiPlugin.yaml").read_text()
    (program / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": NAME, "runtime": "yaml",
        "packages": {"kvpool": "./kvpool-package"},
        "config": {"kubernetes:enableConfigMapMutable": {"value": True}},
        "resources": {"service": {"type": "kvpool:index:Service", "properties": {"settings": settings()}}},
        "outputs": {"namespace": "${service.namespace}", "engines": "${service.engines}"},
    }, sort_keys=False))
    workspace.run("stack", "init", "dev", cwd=program).check()
    preview = workspace.run("preview", "-s", "dev", cwd=program).check()
    assert "kvpool:index:Service" in preview.output

    ensure_nodes(cluster, objects)
    workspace.run("up", "--yes", "--skip-preview", "-s", "dev", cwd=program, timeout=1200).check()
    assert live_differences(cluster, objects) == []
    exported = workspace.run("stack", "export", "-s", "dev", cwd=program).check()
    deployed = kubernetes_objects(json.loads(exported.stdout)["deployment"])
    previewed = sorted((obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]) for obj in objects)
    assert deployed == previewed
    assert deployments_not_ready(cluster, NAME) == []
    outputs = json.loads(workspace.run("stack", "output", "--json", "-s", "dev", cwd=program).check().stdout)
    assert outputs == {"namespace": NAME, "engines": {"prefill": ["vllm-p0"], "decode": ["vllm-d0"]}}
    workspace.run("destroy", "--yes", "-s", "dev", cwd=program, timeout=1200).check()


TWINS = {"svc-a": "yaml-twin-a", "svc-b": "yaml-twin-b"}  # Pulumi name -> namespace


def test_a_yaml_program_declares_the_service_twice(workspace: PulumiWorkspace, cluster: Cluster, tmp_path: Path) -> None:
    """Issue 46: two kvpool:index:Services in one YAML program, in two namespaces, go up side by side: each child is
    named after its own component (no URN is shared) and each namespace gets the same objects, which are those a
    single service's program creates."""
    wheel = build_wheel(tmp_path / "wheel")
    python = tmp_path / "python"
    python.mkdir()
    (python / "requirements.txt").write_text(f"motor-kvpool=={VERSION}\n")
    (python / "Pulumi.yaml").write_text("name: yaml-twins\nruntime: python\n")
    (python / "__main__.py").write_text("from kvpool.program import run\n\nrun()\n")
    (python / "Pulumi.dev.yaml").write_text(yaml.safe_dump(
        {"config": {f"motor-kvpool:{key}": value for key, value in settings(TWINS["svc-a"]).items()}}))
    venv = install_requirements(python, wheel.parent)
    offline = subprocess.run([str(venv / "bin" / "kvpool"), "preview", "--stack", "dev", "--out", str(tmp_path / "out")],
                             cwd=python, capture_output=True, text=True, timeout=600)
    assert offline.returncode == 0, offline.stderr
    single = manifests(tmp_path / "out", "dev")  # one service's objects, in yaml-twin-a
    program = tmp_path / "yaml-twins"
    written = subprocess.run([str(venv / "bin" / "kvpool"), "component-package", str(program / "kvpool-package")],
                             capture_output=True, text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    (program / "Pulumi.yaml").write_text(yaml.safe_dump({
        "name": "yaml-twins", "runtime": "yaml",
        "packages": {"kvpool": "./kvpool-package"},
        "config": {"kubernetes:enableConfigMapMutable": {"value": True}},
        "resources": {name: {"type": "kvpool:index:Service", "properties": {"settings": settings(namespace)}}
                      for name, namespace in TWINS.items()},
        "outputs": {f"{name}-namespace": f"${{{name}.namespace}}" for name in TWINS},
    }, sort_keys=False))
    workspace.run("stack", "init", "dev", cwd=program).check()
    preview = json.loads(workspace.run("preview", "--json", "-s", "dev", cwd=program).check().stdout)
    children = {name: [step["urn"] for step in preview["steps"] if f"kvpool:index:Service::{name}" not in step["urn"]
                       and step["urn"].split("::")[-1].startswith(f"{name}-")] for name in TWINS}
    assert all(children.values()), children
    urns = [step["urn"] for step in preview["steps"]]
    assert len(urns) == len(set(urns))

    ensure_nodes(cluster, single)
    workspace.run("up", "--yes", "--skip-preview", "-s", "dev", cwd=program, timeout=1800).check()
    try:
        deployment = json.loads(workspace.run("stack", "export", "-s", "dev", cwd=program).check().stdout)["deployment"]
        objects = kubernetes_objects(deployment)
        per_namespace = {namespace: sorted((kind, name) for kind, ns, name in objects if ns == namespace)
                         for namespace in TWINS.values()}
        assert per_namespace["yaml-twin-a"] == per_namespace["yaml-twin-b"] == sorted(
            (obj["kind"], obj["metadata"]["name"]) for obj in single if obj["metadata"].get("namespace") == "yaml-twin-a")
        for namespace in TWINS.values():
            assert deployments_not_ready(cluster, namespace) == []
        outputs = json.loads(workspace.run("stack", "output", "--json", "-s", "dev", cwd=program).check().stdout)
        assert outputs == {f"{name}-namespace": namespace for name, namespace in TWINS.items()}
    finally:
        workspace.run("destroy", "--yes", "-s", "dev", cwd=program, timeout=1800).check()
