"""Each KV pool's readiness (issue 44 item 4): `kvpool fleet --kubeconfig FILE` reads, in the context of each owner's
cluster, the Endpoints of the Service its `kv_store` output names and the workload behind it
(kvpool/cli/fleet/pools.py), from a fake API server (tests/kube_api.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvpool.cli.commands.cli import main
from tests.kube_api import APIServer, serving, write_kubeconfig
from tests.program_runs import project_with_stacks, stack_values

STORE_ENDPOINTS = "/api/v1/namespaces/service-a/endpoints/mindie-motor-kvs-master"
STORE_DEPLOYMENT = "/apis/apps/v1/namespaces/service-a/deployments/mindie-motor-kv-store"
PEERS_ENDPOINTS = "/api/v1/namespaces/yuanrong/endpoints/mindie-motor-kv-store-etcd-peers"
WORKER_DAEMON_SET = "/apis/apps/v1/namespaces/yuanrong/daemonsets/mindie-motor-ds-worker"
NO_NODES = {"kind": "NodeList", "apiVersion": "v1", "items": []}


@pytest.fixture
def api_server() -> Iterator[str]:
    with serving() as url:
        APIServer.objects["/api/v1/nodes"] = NO_NODES  # the capacity is tests/test_fleet_capacity.py's
        yield url


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """service-a's MemCache pool and its consumer service-b, Yuanrong's pool, and `remote`, an owner of cluster
    `staging`, which the kubeconfig has no context for."""
    remote = stack_values("dev")
    remote["cluster"] = "staging"
    remote["motor_deploy_config"]["job_id"] = "remote"
    return project_with_stacks(tmp_path_factory.mktemp("pools"), {
        "service-a": stack_values("service-a"), "service-b": stack_values("service-b"),
        "yuanrong": stack_values("yuanrong"), "remote": remote})


def _endpoints(ready: int, not_ready: int) -> dict:
    subset = {"ports": [{"port": 5000}]}
    if ready:
        subset["addresses"] = [{"ip": f"10.0.0.{i}"} for i in range(ready)]
    if not_ready:
        subset["notReadyAddresses"] = [{"ip": f"10.0.1.{i}"} for i in range(not_ready)]
    return {"kind": "Endpoints", "apiVersion": "v1", "subsets": [subset] if ready or not_ready else None}


def _deployment(replicas: int, available: int) -> dict:
    status = {"replicas": replicas, **({"availableReplicas": available} if available else {})}
    return {"kind": "Deployment", "apiVersion": "apps/v1", "spec": {"replicas": replicas}, "status": status}


def _daemon_set(desired: int, ready: int) -> dict:
    return {"kind": "DaemonSet", "apiVersion": "apps/v1",
            "status": {"desiredNumberScheduled": desired, "numberReady": ready, "currentNumberScheduled": desired}}


def _readiness(project: Path, kubeconfig: Path, capsys, *stacks: str) -> list[str]:
    selected = [option for stack in stacks for option in ("--stack", stack)]
    assert main(["fleet", "--project-dir", str(project), "--kubeconfig", str(kubeconfig), *selected]) == 0
    out = capsys.readouterr().out.splitlines()
    start = next(i for i, line in enumerate(out) if line.startswith("Pool readiness"))
    return out[start:out.index("", start)]


def test_a_ready_pool_and_a_scaled_down_one_naming_its_consumers(project, api_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    APIServer.objects.update({STORE_ENDPOINTS: _endpoints(1, 0), STORE_DEPLOYMENT: _deployment(1, 1)})
    assert _readiness(project, kubeconfig, capsys, "service-a", "service-b") == [
        "Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
        "  service-a (context lab): Service service-a/mindie-motor-kvs-master 1 ready, 0 not ready; Deployment "
        "mindie-motor-kv-store 1/1 available: ready",
    ]
    APIServer.objects.update({STORE_ENDPOINTS: _endpoints(0, 2), STORE_DEPLOYMENT: _deployment(2, 0)})
    assert _readiness(project, kubeconfig, capsys, "service-a", "service-b") == [
        "Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
        "  service-a (context lab): Service service-a/mindie-motor-kvs-master 0 ready, 2 not ready; Deployment "
        "mindie-motor-kv-store 0/2 available: NOT READY: service-b would find no store",
    ]
    # Only what the owner's output names is read, once per run, besides the nodes.
    assert [path for path in APIServer.paths if path != "/api/v1/nodes"] == [
        STORE_ENDPOINTS, STORE_DEPLOYMENT, STORE_ENDPOINTS, STORE_DEPLOYMENT]


def test_a_missing_service_is_a_pool_that_is_not_there_not_an_error(project, api_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    assert _readiness(project, kubeconfig, capsys, "service-a", "service-b") == [
        "Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
        "  service-a (context lab): Service service-a/mindie-motor-kvs-master not found; Deployment "
        "mindie-motor-kv-store not found: NOT READY: service-b would find no store",
    ]


def test_a_yuanrong_pool_is_its_workers_not_its_etcd_peers(project, api_server, tmp_path, capsys):
    # The peers' Service publishes etcd members that are not ready: its addresses do not make the pool ready.
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    APIServer.objects.update({PEERS_ENDPOINTS: _endpoints(1, 0), WORKER_DAEMON_SET: _daemon_set(2, 0)})
    assert _readiness(project, kubeconfig, capsys, "yuanrong") == [
        "Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
        "  yuanrong (context lab): Service yuanrong/mindie-motor-kv-store-etcd-peers 1 ready, 0 not ready; DaemonSet "
        "mindie-motor-ds-worker 0/2 ready: NOT READY: no consumer reads it",
    ]
    APIServer.objects[WORKER_DAEMON_SET] = _daemon_set(2, 1)
    assert _readiness(project, kubeconfig, capsys, "yuanrong")[1].endswith("DaemonSet mindie-motor-ds-worker 1/2 ready: degraded")


def test_an_owner_of_a_cluster_the_kubeconfig_has_no_context_for_is_not_checked(project, api_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    assert _readiness(project, kubeconfig, capsys, "remote") == [
        "Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
        "  remote: not checked: the kubeconfig has no context 'staging' (the stacks' top-level setting `cluster` names "
        "the context to read)",
    ]
    assert APIServer.paths == []  # neither its nodes nor its store


def test_the_readiness_as_json(project, api_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    APIServer.objects.update({STORE_ENDPOINTS: _endpoints(0, 2), STORE_DEPLOYMENT: _deployment(2, 0)})
    assert main(["fleet", "--project-dir", str(project), "--kubeconfig", str(kubeconfig), "--json",
                 "--stack", "service-a", "--stack", "service-b"]) == 0
    assert json.loads(capsys.readouterr().out)["pool_readiness"] == [{
        "owner": "organization/motor-kvpool/service-a", "cluster": "default", "context": "lab",
        "namespace": "service-a", "service": "mindie-motor-kvs-master", "ready": 0, "not_ready": 2,
        "workload": "Deployment mindie-motor-kv-store", "available": 0, "desired": 2, "serves": False, "unread": None,
        "consumers": ["organization/motor-kvpool/service-b"],
    }]
    # Without --kubeconfig the document has no such key, as it has no capacity.
    assert main(["fleet", "--project-dir", str(project), "--json", "--stack", "service-a"]) == 0
    assert "pool_readiness" not in json.loads(capsys.readouterr().out)


def test_an_api_server_that_refuses_the_store_is_an_error(project, api_server, tmp_path, capsys):
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    APIServer.objects[PEERS_ENDPOINTS] = _endpoints(1, 0)
    APIServer.refused[WORKER_DAEMON_SET] = 403
    assert main(["fleet", "--project-dir", str(project), "--stack", "yuanrong", "--kubeconfig", str(kubeconfig)]) == 1
    assert capsys.readouterr().err == (
        f"error: --kubeconfig {kubeconfig} context lab: reading the DaemonSet yuanrong/mindie-motor-ds-worker was "
        "refused: 403 Forbidden\n")
