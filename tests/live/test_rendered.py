"""tests/live/rendered.py: Kubernetes semantics and the loopback changes, nothing more."""

from __future__ import annotations

import json

import pytest

from tests.live.rendered import (
    LOOPBACK,
    Loopback,
    as_tcp,
    container_env,
    k8s_expand,
    with_sizes,
)

MASTER_FQDN = "mindie-motor-kvs-master.ns.svc.cluster.local"
ETCD = [f"etcd-{i}.etcd-peers.ns.svc.cluster.local" for i in range(2)]


@pytest.fixture
def lb(tmp_path) -> Loopback:
    lb = Loopback(tmp_path, "ns")
    lb.add_pod("master-0", [50088, 9003], [MASTER_FQDN])
    lb.add_pod("etcd-0", [2379, 2380], [ETCD[0]])
    lb.add_pod("etcd-1", [2379, 2380], [ETCD[1]])
    return lb


def port(lb: Loopback, pod: str, rendered: int) -> int:
    return lb.pods[pod].ports[rendered]


def test_k8s_expansion_is_the_kubelets():
    env = {"POD_IP": "10.1.2.3", "POD_NAME": "etcd-0"}
    assert k8s_expand("--rpc_address=$(POD_IP)", env) == "--rpc_address=10.1.2.3"
    assert k8s_expand("http://$(POD_NAME).peers:2379", env) == "http://etcd-0.peers:2379"
    assert k8s_expand("$$(POD_IP) $(UNKNOWN)", env) == "$(POD_IP) $(UNKNOWN)"
    shell = 'DS=$(python3 -c "import os") && exec "$DS/x" "$@"'  # shell syntax is not a variable reference
    assert k8s_expand(shell, env) == shell


def test_downward_api_gives_loopback_and_the_pod_name():
    container = {"env": [
        {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
        {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}},
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "ADDR", "value": "$(HOST_IP):31501"},
    ]}
    assert container_env(container, "etcd-1", "ns") == {
        "POD_IP": LOOPBACK, "HOST_IP": LOOPBACK, "POD_NAME": "etcd-1", "ADDR": f"{LOOPBACK}:31501"}
    with pytest.raises(ValueError, match="spec.nodeName"):
        container_env({"env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]}, "p", "ns")


def test_own_ports_in_flags_and_listen_addresses(lb):
    rpc, metrics = port(lb, "master-0", 50088), port(lb, "master-0", 9003)
    assert lb.rewrite("--rpc_port=50088", "master-0") == f"--rpc_port={rpc}"
    assert lb.rewrite("--metrics_port=9003", "master-0") == f"--metrics_port={metrics}"
    assert lb.rewrite("--rpc_address=127.0.0.1", "master-0") == "--rpc_address=127.0.0.1"
    assert lb.rewrite("--client_ttl=10", "master-0") == "--client_ttl=10"  # not a port flag
    assert lb.rewrite("--eviction_ratio=0.2", "master-0") == "--eviction_ratio=0.2"
    assert lb.rewrite("--port=0", "master-0") == "--port=0"  # kernel-chosen stays kernel-chosen
    assert lb.rewrite("http://0.0.0.0:2379", "etcd-1") == f"http://0.0.0.0:{port(lb, 'etcd-1', 2379)}"
    assert lb.rewrite("tcp://${POD_IP}:50088", "master-0") == f"tcp://${{POD_IP}}:{rpc}"
    assert lb.rewrite("--worker_address=127.0.0.1:9003", "master-0") == f"--worker_address=127.0.0.1:{metrics}"


def test_dns_names_reach_the_pod_that_owns_them(lb):
    endpoints = ";".join(f"{name}:2379" for name in ETCD)
    assert lb.rewrite(f"--etcd_endpoints={endpoints}", "master-0") == (
        f"--etcd_endpoints=127.0.0.1:{port(lb, 'etcd-0', 2379)};127.0.0.1:{port(lb, 'etcd-1', 2379)}")
    cluster = ",".join(f"etcd-{i}=http://{name}:2380" for i, name in enumerate(ETCD))
    assert lb.rewrite(f"--initial-cluster={cluster}", "etcd-0") == (
        f"--initial-cluster=etcd-0=http://127.0.0.1:{port(lb, 'etcd-0', 2380)},"
        f"etcd-1=http://127.0.0.1:{port(lb, 'etcd-1', 2380)}")
    assert lb.rewrite(f"etcd://{ETCD[1]}:2379", "master-0") == f"etcd://127.0.0.1:{port(lb, 'etcd-1', 2379)}"
    assert lb.rewrite(MASTER_FQDN, "etcd-0") == LOOPBACK  # KVS_MASTER_SERVICE
    other = "mindie-motor-controller-service.ns.svc.cluster.local"
    assert lb.rewrite(other, "etcd-0") == other  # no pod of ours answers it: left as rendered


def test_a_port_without_loopback_port_is_an_error(lb):
    with pytest.raises(KeyError, match="rendered port 12345"):
        lb.rewrite("--rpc_port=12345", "master-0")
    with pytest.raises(KeyError, match="rendered port 2379"):
        lb.rewrite(f"{MASTER_FQDN}:2379", "etcd-0")


def test_container_paths_live_in_the_pod_folder(lb, tmp_path):
    root = tmp_path / "master-0"
    assert lb.rewrite("--log_dir=/tmp/datasystem/logs", "master-0") == f"--log_dir={root}/tmp/datasystem/logs"
    command = 'sed "s|\\${POD_IP}|${POD_IP}|g" /etc/memcache/t > /tmp/mmc-meta.conf && exec python3 -c x'
    assert lb.rewrite(command, "master-0") == (
        f'sed "s|\\${{POD_IP}}|${{POD_IP}}|g" {root}/etc/memcache/t > {root}/tmp/mmc-meta.conf && exec python3 -c x')
    for untouched in ("/bin/sh", "/usr/local/Ascend/driver", "/dev/shm", "/mnt/weight", "$DS/lib:$LD_LIBRARY_PATH"):
        assert lb.rewrite(untouched, "master-0") == untouched


def test_process_spec_from_a_container(lb, tmp_path):
    container = {
        "name": "meta",
        "command": ["/bin/sh", "-c", "exec x --config /etc/conf/a.conf"],
        "args": ["--rpc_address=$(POD_IP)", "--rpc_port=50088"],
        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
                {"name": "CONF", "value": "/etc/conf/a.conf"}],
        "volumeMounts": [{"name": "c", "mountPath": "/etc/conf"}, {"name": "one", "mountPath": "/etc/b.json",
                                                                   "subPath": "b.json"}],
    }
    volumes = [{"name": "c", "configMap": {"name": "cm"}}, {"name": "one", "configMap": {"name": "cm2"}}]
    maps = {"cm": {"a.conf": f"url = tcp://{MASTER_FQDN}:50088\n"}, "cm2": {"b.json": "{}", "c.json": "[]"}}
    spec = lb.process(container, "master-0", "mooncake", maps, volumes)
    root = tmp_path / "master-0"
    assert spec["argv"] == ["/bin/sh", "-c", f"exec x --config {root}/etc/conf/a.conf", "--rpc_address=127.0.0.1",
                            f"--rpc_port={port(lb, 'master-0', 50088)}"]
    assert spec["env"]["CONF"] == f"{root}/etc/conf/a.conf"
    assert spec["env"]["POD_IP"] == LOOPBACK
    assert spec["env"]["PATH"].split(":")[0].endswith("build/backends/mooncake/bin")
    assert (root / "etc/conf/a.conf").read_text() == f"url = tcp://127.0.0.1:{port(lb, 'master-0', 50088)}\n"
    assert (root / "etc/b.json").read_text() == "{}" and not (root / "etc/c.json").exists()


def test_file_content_changes():
    rendered = json.dumps({"protocol": "ascend", "global_segment_size": "1GB", "local_buffer_size": "1GB"})
    assert json.loads(as_tcp(rendered))["protocol"] == "tcp"
    assert json.loads(with_sizes(rendered, global_segment_size="64MB")) == {
        "protocol": "ascend", "global_segment_size": "64MB", "local_buffer_size": "1GB"}
    with pytest.raises(AssertionError):
        with_sizes(rendered, segment="1MB")
    with pytest.raises(AssertionError):
        as_tcp(json.dumps({"protocol": "rdma"}))
