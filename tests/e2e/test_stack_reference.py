"""service-a / service-b: a StackReference read through the real engine, and the sharing contract's loud failures."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import (
    StacksUp,
    deployment_namespaces,
    deployments_not_ready_in,
    manifests,
)
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace
from tests.e2e.views import (
    STACKS,
    consumer_stack,
    live_differences,
    preview_json,
    tree_mismatch,
)

pytestmark = pytest.mark.e2e


def test_service_b_reads_service_a_store_through_the_engine(
    service_a_up: PulumiWorkspace, stacks_up: StacksUp, cluster: Cluster, offline_out: Path
) -> None:
    workspace = service_a_up
    stacks_up.init("service-b")
    data, result = preview_json(workspace, "service-b")
    assert result.returncode == 0, result.output[-4000:]
    # The engine's preview lists the reference the program reads; the offline one has it from the owner's preview.
    mismatch = tree_mismatch((offline_out / "service-b.tree").read_text(), data, "pulumi:pulumi:StackReference")
    assert not mismatch, mismatch
    objects = stacks_up.up_as_previewed("service-b")
    assert {obj["metadata"]["namespace"] for obj in objects if obj["kind"] == "Deployment"} == {"service-b"}
    a_outputs = json.loads(workspace.run("stack", "output", "--json", "-s", "service-a").check().stdout)
    host = a_outputs["kv_store"]["host"]
    assert host.endswith(".service-a.svc.cluster.local"), a_outputs
    live = json.dumps([cluster.get("/api/v1/namespaces/service-b/configmaps"),
                       cluster.get("/apis/apps/v1/namespaces/service-b/deployments")])
    assert host in live, "service-b's objects do not name service-a's store"


STORE = "/apis/apps/v1/namespaces/service-a/deployments/mindie-motor-kv-store"
STORE_ENDPOINTS = "/api/v1/namespaces/service-a/endpoints/mindie-motor-kvs-master"


def _store_replicas(cluster: Cluster, replicas: int) -> None:
    """Scale service-a's store and wait (at most a minute) until its Service has that many ready addresses."""
    cluster.request("PATCH", STORE, {"spec": {"replicas": replicas}}, "application/merge-patch+json")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        subsets = (cluster.get(STORE_ENDPOINTS) or {}).get("subsets") or []
        if sum(len(subset.get("addresses") or []) for subset in subsets) == replicas:
            return
        time.sleep(1)
    raise AssertionError(f"service-a's store Endpoints did not reach {replicas} ready addresses: {subsets}")


def test_a_consumer_is_refused_while_its_owners_store_has_no_ready_pod(
    service_a_up: PulumiWorkspace, stacks_up: StacksUp, cluster: Cluster
) -> None:
    """Issue 44 item 4: owner up, its store scaled to 0, the consumer's `pulumi preview` warns and its `pulumi up` is
    refused naming the owner; the store back, the consumer goes up, and its next preview plans nothing: the read is
    in every plan, so there is no discard of it."""
    stacks_up.bring_up("service-b")
    no_pod = ("kv_cache_store_config.target_stack: organization/motor-kvpool/service-a's store Service "
              "service-a/mindie-motor-kvs-master has no ready pod behind it (0 not ready)")
    _store_replicas(cluster, 0)
    try:
        preview = service_a_up.run("preview", "-s", "service-b", timeout=600)
        assert preview.returncode == 0, preview.output[-4000:]
        assert f"warning: {no_pod}" in " ".join(preview.output.split()), preview.output[-4000:]
        result = service_a_up.run("up", "--yes", "--skip-preview", "-s", "service-b", timeout=600)
        assert result.returncode != 0, result.output[-4000:]
        assert no_pod in " ".join(result.output.split()), result.output[-4000:]
        assert "Traceback" not in result.output, result.output[-4000:]
    finally:
        _store_replicas(cluster, 1)
    service_a_up.run("up", "--yes", "--skip-preview", "-s", "service-b", timeout=600).check()
    data, result = preview_json(service_a_up, "service-b")
    assert result.returncode == 0, result.output[-4000:]
    steps = {(step["op"], step["urn"].rsplit("::", 1)[-1]) for step in data["steps"] if step["op"] != "same"}
    assert {op for op, _ in steps} == {"read"}, steps  # the references and the store's Endpoints: no discard
    assert ("read", "kv_store-of-organization-motor-kvpool-service-a") in steps, steps


def test_every_example_stack_is_up_together_in_one_cluster_as_written(stacks_up: StacksUp) -> None:
    """Issue 34: all example stacks at once in the session's one cluster, each from its stack file unchanged (no
    NodePort or namespace given by the test): every object of every stack's preview is in the API server as written
    and every Deployment is Ready, beside all the others. (The stacks went up one by one in the tests above; a stack
    not up yet goes up here.)"""
    problems = []
    for stack in STACKS:
        objects = manifests(stacks_up.bring_up(stack), stack)
        problems += [f"{stack}: {problem}" for problem in live_differences(stacks_up.cluster, objects)]
        problems += [f"{stack}: Deployment {name} is not Ready"
                     for name in deployments_not_ready_in(stacks_up.cluster, deployment_namespaces(objects))]
    assert not problems, "\n".join(problems)
    assert sorted(stacks_up.up) == STACKS


def test_a_missing_target_stack_fails_preview_with_the_engines_reason(service_a_up: PulumiWorkspace) -> None:
    missing = "organization/motor-kvpool/no-such-stack"
    consumer_stack(service_a_up, "e2e-orphan", target_stack=missing)
    result = service_a_up.run("preview", "-s", "e2e-orphan")
    assert result.returncode != 0, result.output[-4000:]
    # The engine's read of the reference fails before the program resumes, so its reason is the message.
    assert f'unknown stack "{missing}"' in result.output, result.output[-4000:]
    assert "Traceback" not in result.output, result.output[-4000:]


def test_a_namespace_the_owner_does_not_allow_fails_preview_with_our_message(service_a_up: PulumiWorkspace) -> None:
    consumer_stack(service_a_up, "e2e-stranger")
    result = service_a_up.run("preview", "-s", "e2e-stranger")
    assert result.returncode != 0, result.output[-4000:]
    assert (
        "kv_cache_store_config.target_stack: organization/motor-kvpool/service-a does not allow namespace "
        "'e2e-stranger'" in " ".join(result.output.split())
    ), result.output[-4000:]
    assert "Traceback" not in result.output, result.output[-4000:]


def _owner_exporting(workspace: PulumiWorkspace, offline_out: Path, owner: str, consumer: str,
                    edit: Callable[[str], str]) -> str:
    """Stack `owner` exporting service-a's `kv_store` contract as JSON text changed by `edit`, admitting `consumer`,
    whose stack is service-b's file pointed at it; the owner's reference."""
    target = f"organization/motor-kvpool/{owner}"
    real = json.loads((offline_out / "service-a" / "outputs.json").read_text())["kv_store"]
    contract = json.loads(edit(json.dumps(real)))
    contract.update(stack=target, allowed_consumers=[consumer])
    program = workspace.root / owner
    shutil.copytree(REPO / "tests" / "fixtures" / "programs" / "forged-owner", program)
    (program / "venv").symlink_to(REPO / "venv")
    (program / "kv_store.json").write_text(json.dumps(contract))
    workspace.run("stack", "init", owner, cwd=program).check()
    workspace.run("up", "-s", owner, cwd=program).check()
    consumer_stack(workspace, consumer, target_stack=target)
    return target


def test_a_consistent_forgery_of_the_owner_is_refused_under_the_engine(
    offline_workspace: PulumiWorkspace, offline_out: Path
) -> None:
    """Issue 27: a program under the project's name exports service-a's contract with every mention of the store's
    host moved to one outside name (host, KVS_MASTER_SERVICE, the LocalService conf's URLs). The real preview of a
    consumer stops on the host, naming the owner stack and the field."""
    consumer = "e2e-forged-consumer"
    target = _owner_exporting(offline_workspace, offline_out, "e2e-forged-owner", consumer,
                              lambda text: text.replace(json.loads(text)["host"], "kv.evil.example"))
    result = offline_workspace.run("preview", "-s", consumer)
    assert result.returncode != 0, result.output[-4000:]
    assert (
        f"{target}'s kv_store.host: is 'kv.evil.example', but the memcache store of namespace service-a is "
        f"'mindie-motor-kvs-master.service-a.svc.cluster.local' (its Service in cluster domain cluster.local); a "
        f"consumer dials no other host" in " ".join(result.output.split())
    ), result.output[-4000:]
    assert "Traceback" not in result.output, result.output[-4000:]


def test_an_owner_whose_store_service_is_not_in_the_cluster_fails_preview_and_up_naming_it(
    service_a_up: PulumiWorkspace, offline_out: Path
) -> None:
    """Issue 44 item 4: an owner whose contract is sound but whose namespace holds no store (service-a's contract
    moved to namespace e2e-ghost). The engine fails the read of the Service's Endpoints, naming the object and, in
    the read's name, the owner; the program leaves without a traceback."""
    consumer = "e2e-ghost-consumer"
    _owner_exporting(service_a_up, offline_out, "e2e-ghost-owner", consumer,
                     lambda text: text.replace("service-a", "e2e-ghost"))
    for command in (("preview",), ("up", "--yes", "--skip-preview")):
        result = service_a_up.run(*command, "-s", consumer, timeout=600)
        assert result.returncode != 0, result.output[-4000:]
        assert "kubernetes:core/v1:Endpoints (kv_store-of-organization-motor-kvpool-e2e-ghost-owner):" in \
            result.output, result.output[-4000:]
        assert "resource 'e2e-ghost/mindie-motor-kvs-master' does not exist" in result.output, result.output[-4000:]
        assert "Traceback" not in result.output, result.output[-4000:]
