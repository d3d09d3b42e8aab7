"""The engine capacity of a cluster (issue 34): the engine pods the stacks of one cluster ask for, placed on the
Ready nodes that carry their hardware labels (a fake node list fed to kvpool/cli/fleet/capacity.py), and `kvpool fleet
--kubeconfig` reading the nodes from an API server (tests/kube_api.py) that answers GET /api/v1/nodes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kvpool.cli.commands.cli import main
from kvpool.cli.fleet.capacity import (
    EnginePods,
    Node,
    capacity_warnings,
    engine_pods,
    ready_nodes,
)
from kvpool.settings.loader import load_from_pulumi_config
from tests.kube_api import APIServer, serving, write_kubeconfig
from tests.program_runs import project_with_stacks, render, stack_values

A2 = (("accelerator", "huawei-Ascend910"), ("accelerator-type", "module-910b-8"))
NPU = "huawei.com/Ascend910"


def _node(name: str, npus: str, ready: str = "True", accelerator_type: str = "module-910b-8", **spec) -> dict:
    return {
        "metadata": {"name": name, "labels": {"accelerator": "huawei-Ascend910", "accelerator-type": accelerator_type,
                                              "kubernetes.io/hostname": name}},
        "spec": spec,
        "status": {"conditions": [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": ready}],
                   "allocatable": {NPU: npus, "cpu": "190", "memory": "1500Gi"}},
    }


NODE_LIST = {"kind": "NodeList", "apiVersion": "v1", "items": [
    _node("npu-1", "8"),
    _node("npu-2", "8", unschedulable=True),  # cordoned
    _node("npu-3", "8", ready="False"),
    _node("npu-4", "8", accelerator_type="module-a3-16"),  # another hardware label
    _node("npu-5", "4"),
]}


def test_ready_schedulable_nodes_only():
    assert ready_nodes(NODE_LIST) == [
        Node("npu-1", dict(NODE_LIST["items"][0]["metadata"]["labels"]), {NPU: 8, "cpu": 190}),
        Node("npu-4", dict(NODE_LIST["items"][3]["metadata"]["labels"]), {NPU: 8, "cpu": 190}),
        Node("npu-5", dict(NODE_LIST["items"][4]["metadata"]["labels"]), {NPU: 4, "cpu": 190}),
    ]


def test_a_stacks_engine_pods_are_its_sides_as_rendered():
    values = stack_values("service-a")
    values["motor_deploy_config"].update(p_instances_num=2, single_p_instance_pod_num=3, p_pod_npu_num=4,
                                         prefill_node_selector={"pool": "prefill"})
    settings = load_from_pulumi_config(values, "service-a")
    assert engine_pods("service-a", settings) == [
        EnginePods("service-a", "prefill", 6, 4, NPU, (*A2, ("pool", "prefill"))),
        EnginePods("service-a", "decode", 1, 2, NPU, A2),
    ]
    # What the program renders for each side: its instances' replicas, nodeSelector and NPU request.
    rendered = render(values, "service-a")
    pods = {}
    for name in rendered.names("Deployment"):
        if name.startswith("vllm-"):
            spec = rendered.get("Deployment", name)["spec"]
            pod = spec["template"]["spec"]
            side = pods.setdefault(name[len("vllm-")], [0, set()])
            side[0] += spec["replicas"]
            side[1].add((tuple(sorted(pod["nodeSelector"].items())), pod["containers"][0]["resources"]["requests"][NPU]))
    assert pods == {"p": [6, {((*A2, ("pool", "prefill")), 4)}], "d": [1, {(A2, 2)}]}


def test_pods_that_fit_warn_of_nothing():
    # npu-1 and npu-5 carry the labels: 8 + 4 NPUs hold three pods of 4 (npu-4 is another hardware's).
    pods = [EnginePods("a", "prefill", 2, 4, NPU, A2), EnginePods("b", "decode", 1, 4, NPU, A2)]
    assert capacity_warnings("default", pods, ready_nodes(NODE_LIST)) == []


def test_more_pods_than_the_labelled_nodes_hold_warn_naming_the_stacks():
    # 4+4+4+2+2 NPUs on npu-1 (8) and npu-5 (4): the three pods of 4 fill both, the two pods of 2 find no room.
    pods = [EnginePods("a", "prefill", 2, 4, NPU, A2), EnginePods("b", "prefill", 1, 4, NPU, A2),
            EnginePods("b", "decode", 2, 2, NPU, A2), EnginePods("c", "decode", 0, 2, NPU, A2)]
    [warning] = capacity_warnings("default", pods, ready_nodes(NODE_LIST))
    assert (warning.stacks, warning.pods, warning.npus, warning.nodes, warning.allocatable, warning.pending) == (
        ("a", "b"), 5, 16, 2, 12, 2)
    assert warning.message == (
        "cluster 'default': a, b ask for 5 engine pods (16 huawei.com/Ascend910) on nodes labelled "
        "accelerator=huawei-Ascend910, accelerator-type=module-910b-8; the cluster has 2 Ready such nodes with 12 "
        "huawei.com/Ascend910 allocatable, so 2 of the pods would stay Pending. Add nodes with these labels, or lower "
        "p_instances_num/d_instances_num (or the pods' NPUs) of one of these stacks.")


def test_pods_with_a_narrower_selector_take_their_nodes_first():
    # npu-5 alone carries pool=prefill: the prefill pod goes there first, and the decode pods, which npu-1 and npu-5
    # both take, find npu-1 only; placed in the other order, the decode pods would leave no room on npu-5.
    nodes = ready_nodes(NODE_LIST)
    nodes[2] = Node("npu-5", {**nodes[2].labels, "pool": "prefill"}, nodes[2].allocatable)
    pods = [EnginePods("a", "decode", 3, 4, NPU, A2), EnginePods("a", "prefill", 1, 4, NPU, (*A2, ("pool", "prefill")))]
    [warning] = capacity_warnings("default", pods, nodes)
    assert (warning.node_selector, warning.pods, warning.nodes, warning.allocatable, warning.pending) == (
        A2, 3, 2, 12, 1)


# --- through a kubeconfig ----------------------------------------------------------------------------------------


@pytest.fixture
def api_server() -> Iterator[str]:
    with serving() as url:
        yield url


@pytest.fixture(scope="module")
def busy_project(tmp_path_factory) -> Path:
    """Two services of the default cluster asking for 2 and 3 engine pods of 4 NPUs each (20 NPUs, 12 on the
    labelled Ready nodes), a third of cluster `staging`, which the kubeconfig has no context for."""
    stacks = {}
    for name, cluster in (("svc-1", None), ("svc-2", None), ("svc-3", "staging")):
        values = stack_values("service-a")
        values["kv_cache_store_config"].pop("allowed_consumers", None)
        values["motor_deploy_config"].update(job_id=name, p_pod_npu_num=4, d_pod_npu_num=4)
        if cluster:
            values["cluster"] = cluster
        stacks[name] = values
    stacks["svc-2"]["motor_deploy_config"]["p_instances_num"] = 2
    return project_with_stacks(tmp_path_factory.mktemp("capacity"), stacks)


def test_the_fleet_reads_each_clusters_nodes_through_the_kubeconfig(busy_project, api_server, tmp_path, capsys):
    APIServer.objects["/api/v1/nodes"] = NODE_LIST
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    assert main(["fleet", "--project-dir", str(busy_project), "--kubeconfig", str(kubeconfig)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[out.index("Problems: none") + 1:] == [
        "",
        "Capacity (each cluster's engine pods on its Ready nodes, read through --kubeconfig):",
        "  default (context lab, 3 Ready nodes): 1 warning",
        "    warning: cluster 'default': svc-1, svc-2 ask for 5 engine pods (20 huawei.com/Ascend910) on nodes "
        "labelled accelerator=huawei-Ascend910, accelerator-type=module-910b-8; the cluster has 2 Ready such nodes "
        "with 12 huawei.com/Ascend910 allocatable, so 2 of the pods would stay Pending. Add nodes with these labels, "
        "or lower p_instances_num/d_instances_num (or the pods' NPUs) of one of these stacks.",
        "  staging: not checked: the kubeconfig has no context 'staging' (the stacks' top-level setting `cluster` "
        "names the context to read)",
    ]
    # The default cluster's nodes, in the current context, once (and its owners' stores: tests/test_fleet_pool_readiness.py).
    assert [path for path in APIServer.paths if "/namespaces/" not in path] == ["/api/v1/nodes"]


def test_the_capacity_as_json(busy_project, api_server, tmp_path, capsys):
    APIServer.objects["/api/v1/nodes"] = NODE_LIST
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    assert main(["fleet", "--project-dir", str(busy_project), "--kubeconfig", str(kubeconfig), "--json"]) == 0
    [default, staging] = json.loads(capsys.readouterr().out)["capacity"]
    assert staging == {"cluster": "staging", "context": None, "ready_nodes": 0, "warnings": []}
    [warning] = default.pop("warnings")
    assert default == {"cluster": "default", "context": "lab", "ready_nodes": 3}
    assert {key: value for key, value in warning.items() if key != "message"} == {
        "stacks": ["svc-1", "svc-2"], "node_selector": dict(A2), "resource": NPU, "pods": 5, "npus": 20, "nodes": 2,
        "allocatable": 12, "pending": 2}


def test_an_api_server_that_refuses_the_node_list_is_an_error(busy_project, api_server, tmp_path, capsys):
    APIServer.status = 403
    APIServer.objects["/api/v1/nodes"] = NODE_LIST
    kubeconfig = write_kubeconfig(tmp_path / "config", api_server)
    assert main(["fleet", "--project-dir", str(busy_project), "--stack", "svc-1", "--kubeconfig", str(kubeconfig)]) == 1
    assert capsys.readouterr().err == (
        f"error: --kubeconfig {kubeconfig} context lab: listing the nodes was refused: 403 Forbidden\n")


def test_a_kubeconfig_that_is_not_there_is_an_error(busy_project, tmp_path, capsys):
    missing = tmp_path / "no-such-config"
    assert main(["fleet", "--project-dir", str(busy_project), "--stack", "svc-1", "--kubeconfig", str(missing)]) == 1
    assert capsys.readouterr().err == f"error: --kubeconfig {missing}: Invalid kube-config file. No configuration found.\n"
