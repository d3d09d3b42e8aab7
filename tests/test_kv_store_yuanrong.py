"""KVStore, yuanrong backend: etcd, one datasystem worker per engine node, and what engines need."""

from __future__ import annotations

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import env_of, render, render_stack, stack_values
from tests.service_configs import problems_of

ETCD = "mindie-motor-kv-store-etcd-0.mindie-motor-kv-store-etcd-peers.yuanrong.svc.cluster.local:2379"


def test_workers_run_on_engine_nodes_with_the_rendered_flags():
    rendered = render_stack("yuanrong")
    daemonset = rendered.get("DaemonSet", "mindie-motor-ds-worker")
    pod = daemonset["spec"]["template"]["spec"]
    assert pod["hostNetwork"] is True
    assert pod["nodeSelector"] == {"accelerator": "huawei-Ascend910", "accelerator-type": "module-910b-8"}
    worker = pod["containers"][0]
    assert worker["args"] == [
        "--worker_address=$(HOST_IP):31501",
        f"--etcd_address={ETCD}",
        "--cluster_name=yuanrong",
        "--shared_memory_size_mb=32768",
        "--unix_domain_socket_dir=/var/run/datasystem",
        "--log_dir=/tmp/datasystem/logs",
        "--rocksdb_store_dir=/tmp/datasystem/rocksdb",
        "--ready_check_path=/tmp/datasystem/ready",
        "--health_check_path=/tmp/datasystem/healthy",
    ]
    assert worker["ports"] == [{"name": "worker", "containerPort": 31501, "hostPort": 31501, "protocol": "TCP"}]
    assert worker["readinessProbe"]["exec"] == {"command": ["test", "-f", "/tmp/datasystem/ready"]}


def test_engines_reach_the_worker_of_their_node():
    rendered = render_stack("yuanrong")
    engine = rendered.container("Deployment", "vllm-p0", "vllm")
    env = env_of(engine)
    assert env["DS_WORKER_ADDR"] == "$(HOST_IP):31501"
    assert env["HOST_IP"] == {"fieldRef": {"fieldPath": "status.hostIP"}}
    assert env["KV_STORE_BACKEND"] == "yuanrong"
    assert {"name": "datasystem-sockets", "mountPath": "/var/run/datasystem"} in engine["volumeMounts"]
    volumes = rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "datasystem-sockets",
            "hostPath": {"path": "/var/run/motor-kvpool/datasystem", "type": "DirectoryOrCreate"}} in volumes


def test_etcd_admits_the_worker_nodes_to_its_client_port_and_only_members_to_its_peer_port():
    rendered = render_stack("yuanrong")
    etcd = rendered.get("StatefulSet", "mindie-motor-kv-store-etcd")
    assert etcd["spec"]["replicas"] == 1
    assert etcd["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.k8s.io/etcd:3.5.15-0"
    # The workers are host-network pods, which no NetworkPolicy selects: none is made for them; etcd has one.
    assert rendered.names("NetworkPolicy") == ["mindie-motor-kv-store-etcd"]
    members = {"podSelector": {"matchLabels": {"app": "mindie-motor-kv-store-etcd"}}}
    assert rendered.get("NetworkPolicy", "mindie-motor-kv-store-etcd")["spec"]["ingress"] == [
        {"from": [members, {"ipBlock": {"cidr": "192.168.10.11/32"}}, {"ipBlock": {"cidr": "192.168.10.12/32"}}],
         "ports": [{"port": 2379, "protocol": "TCP"}]},
        {"from": [members], "ports": [{"port": 2380, "protocol": "TCP"}]},
    ]


def test_without_node_cidrs_etcd_is_refused_saying_how_to_find_them():
    """Unset, etcd (plain HTTP, no authentication) would admit every address, the cluster's pod network included."""
    values = stack_values("yuanrong")
    del values["kv_cache_store_config"]["etcd_client_cidrs"]
    assert problems_of(values, "yuanrong") == [
        "kv_cache_store_config.etcd_client_cidrs: is unset, and Yuanrong's etcd (plain HTTP, no authentication) would "
        "admit every address; list the engine nodes' addresses, each as /32, e.g. from `kubectl get nodes -l "
        "accelerator -o jsonpath='{.items[*].status.addresses[?(@.type==\"InternalIP\")].address}'`, and never a "
        "range that holds the cluster's pod network, whose every pod would then reach etcd"
    ]


def test_etcd_client_cidrs_must_be_networks():
    values = stack_values("yuanrong")
    values["kv_cache_store_config"]["etcd_client_cidrs"] = ["10.0.0.1/16"]
    with pytest.raises(ProgramError) as caught:
        render(values, stack="yuanrong")
    assert "kv_cache_store_config.etcd_client_cidrs[0]: '10.0.0.1/16' is not a network address such as 192.168.10.11/32" \
        in str(caught.value)


@pytest.mark.parametrize(("cidr", "admits", "own", "widest"), [
    ("0.0.0.0/0", "every address", "/32", "/24"),
    ("::/0", "every address", "/128", "/120"),
    ("10.0.0.0/8", "16777216 addresses", "/32", "/24"),
    ("192.168.10.0/23", "512 addresses", "/32", "/24"),
    ("fd00::/64", "18446744073709551616 addresses", "/128", "/120"),
])
def test_etcd_client_cidrs_wider_than_a_rack_of_nodes_are_refused(cidr, admits, own, widest):
    """Issue 45 §7: 0.0.0.0/0 opened the unauthenticated etcd to the whole cluster, though the field forbids it."""
    values = stack_values("yuanrong")
    values["kv_cache_store_config"]["etcd_client_cidrs"] = ["192.168.10.11/32", cidr]
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "yuanrong")
    assert caught.value.problems == [
        f"kv_cache_store_config.etcd_client_cidrs[1]: {cidr!r} admits {admits} to Yuanrong's etcd, which has no "
        f"authentication; list the engine nodes' own addresses (each {own}) or ranges of at most 256 ({widest})"
    ]


@pytest.mark.parametrize("cidr", ["192.168.10.0/24", "fd00::/120", "192.168.10.11/32"])
def test_etcd_client_cidrs_of_a_rack_are_taken(cidr):
    values = stack_values("yuanrong")
    values["kv_cache_store_config"]["etcd_client_cidrs"] = [cidr]
    assert load_from_pulumi_config(values, "yuanrong").kv_cache_store_config.etcd_client_cidrs == [cidr]
