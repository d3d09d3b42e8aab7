"""`kvpool fleet --source backend` checks the cluster's clashes on each stack's state as `pulumi stack export
--show-secrets` prints it (kvpool/cli/fleet/backend.py state_objects), as the offline source checks them on what a preview
renders: the objects and host ports, not the settings alone. The Automation API drives a stand-in `pulumi` first on
PATH that answers the commands it runs from a folder of JSON and records them; the real CLI and backend are
tests/e2e/test_stack_reference_fleet.py's."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from kvpool.cli.commands.cli import main
from kvpool.cli.fleet.backend import state_objects
from tests.program_runs import project_with_stacks, stack_values

SECRET = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270"}
STACKS = ("svc-1", "svc-2")

STAND_IN = '''
import json, sys
from pathlib import Path
answers = Path(__file__).parent / "answers"
args = [arg for arg in sys.argv[1:] if arg != "--non-interactive"]  # the Automation API adds it to every command
with open(answers.parent / "calls", "a") as calls:
    calls.write(" ".join(args) + "\\n")
stack = args[args.index("--stack") + 1] if "--stack" in args else None
if args == ["version"]:
    print("v3.272.0")
elif args[:1] == ["whoami"]:
    print(json.dumps({"user": "tester", "url": "file:///state"}))
elif args[:2] == ["stack", "ls"]:
    print(json.dumps([{"name": name, "current": False} for name in %r]))
elif args[:2] == ["stack", "output"]:
    print(json.dumps({"namespace": stack}))
elif args[:1] == ["config"]:
    print((answers / f"{stack}.config.json").read_text())
elif args[:2] == ["stack", "export"]:
    print((answers / f"{stack}.state.json").read_text())
else:
    sys.exit(f"error: the stand-in does not answer {args}")
''' % (STACKS,)


def _deployment(stack: str) -> dict:
    """A stack's state as `pulumi stack export --show-secrets` prints it, the provider's checkpoint of each object
    (pulumi-kubernetes provider.go checkpointObject: the live object, its `__inputs`, `__fieldManager`)."""
    worker = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "host-agent", "namespace": stack},
        "spec": {"template": {"spec": {"hostNetwork": True, "containers": [{
            "name": "agent", "ports": [{"name": "agent", "containerPort": 9400, "hostPort": 9400}],
            "env": [{"name": "TOKEN", "value": {**SECRET, "plaintext": json.dumps("s3cret")}}],
        }]}}},
        "status": {"readyReplicas": 1},
    }
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "node-reader"}}
    gone = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "old", "namespace": "kube-system"}}
    # A consumer reads its owner's store Endpoints at `pulumi up` (kv_store/shared.py store_serves): not its object.
    read = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "mindie-motor-kvs-master", "namespace": "owner"}}
    urn = f"urn:pulumi:{stack}::motor-kvpool"
    return {"manifest": {}, "resources": [
        {"urn": f"{urn}::pulumi:pulumi:Stack::motor-kvpool-{stack}", "type": "pulumi:pulumi:Stack", "custom": False},
        {"urn": f"{urn}::pulumi:providers:kubernetes::default", "type": "pulumi:providers:kubernetes", "custom": True,
         "outputs": {"kind": "not an object", "metadata": {"name": "default"}, "apiVersion": "v1"}},
        {"urn": f"{urn}::kubernetes:yaml/v2:ConfigGroup::extra", "type": "kubernetes:yaml/v2:ConfigGroup",
         "custom": False, "outputs": {"resources": []}},
        {"urn": f"{urn}::kubernetes:apps/v1:Deployment::agent", "type": "kubernetes:apps/v1:Deployment",
         "custom": True, "outputs": {**worker, "__inputs": worker, "__fieldManager": "pulumi-kubernetes"}},
        {"urn": f"{urn}::kubernetes:rbac.authorization.k8s.io/v1:ClusterRole::role",
         "type": "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "custom": True, "outputs": role},
        {"urn": f"{urn}::kubernetes:core/v1:ConfigMap::old", "type": "kubernetes:core/v1:ConfigMap", "custom": True,
         "delete": True, "outputs": gone},
        {"urn": f"{urn}::kubernetes:core/v1:Endpoints::kv_store-of-owner", "type": "kubernetes:core/v1:Endpoints",
         "custom": True, "external": True, "id": "owner/mindie-motor-kvs-master", "outputs": read},
    ]}


def test_the_objects_of_a_state_are_its_kubernetes_resources_as_live():
    assert state_objects(_deployment("svc-1")) == (
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "host-agent", "namespace": "svc-1"},
         "spec": {"template": {"spec": {"hostNetwork": True, "containers": [{
             "name": "agent", "ports": [{"name": "agent", "containerPort": 9400, "hostPort": 9400}],
             "env": [{"name": "TOKEN", "value": "s3cret"}]}]}}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "node-reader"}},
    )


@pytest.fixture
def backend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The project (two stack files) and a stand-in `pulumi` first on PATH; returns the project folder."""
    stacks = {}
    for name in STACKS:
        values = stack_values("service-a")
        values["kv_cache_store_config"].pop("allowed_consumers", None)
        values["motor_deploy_config"]["job_id"] = name
        stacks[name] = values
    project = project_with_stacks(tmp_path / "project", stacks)
    answers = tmp_path / "bin" / "answers"
    answers.mkdir(parents=True)
    for name, values in stacks.items():
        config = {f"motor-kvpool:{key}": {"value": value if isinstance(value, str) else json.dumps(value),
                                          "secret": False} for key, value in values.items()}
        (answers / f"{name}.config.json").write_text(json.dumps(config))
        (answers / f"{name}.state.json").write_text(json.dumps({"version": 3, "deployment": _deployment(name)}))
    stand_in = tmp_path / "bin" / "pulumi"
    stand_in.write_text(f"#!{sys.executable}\n{STAND_IN}")
    stand_in.chmod(0o755)
    monkeypatch.setenv("PATH", f"{stand_in.parent}{os.pathsep}{os.environ['PATH']}")
    return project


def test_the_backend_source_checks_host_ports_and_objects_on_the_stacks_state(backend, capsys):
    code = main(["fleet", "--source", "backend", "--project-dir", str(backend)])
    captured = capsys.readouterr()
    assert (code, captured.err) == (1, "")
    out = captured.out.splitlines()
    first, second = (f"organization/motor-kvpool/{name}" for name in STACKS)
    assert out[out.index("Problems: 2"):] == [
        "Problems: 2",
        f"  [object] svc-2 -> svc-1: ClusterRole node-reader: {first} and {second} both render it in cluster 'default' "
        "though their namespaces differ ('svc-1', 'svc-2'); the second `pulumi up` is refused or takes it over. "
        "motor-kvpool names every object outside a stack's namespace after that namespace, so this is its bug: report "
        "it; until it is fixed, deploy svc-2 to another cluster (top-level setting cluster).",
        f"  [host-port] svc-2 -> svc-1: Deployment svc-2/host-agent container agent port agent: {second} binds port "
        f"9400 on its nodes, which {first} binds too (Deployment svc-1/host-agent container agent port agent) in "
        "cluster 'default', and their nodeSelectors do not keep them apart (affinity and taints are not read: checked "
        "conservatively); the second pod cannot start on a shared node. Write 9401, or give one of them a "
        "nodeSelector the other's nodes do not carry.",
    ]
    calls = (backend.parent / "bin" / "calls").read_text().splitlines()
    assert [call for call in calls if call.startswith("stack export")] == [
        f"stack export --show-secrets --stack {name}" for name in STACKS]
