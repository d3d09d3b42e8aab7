"""openYuanrong datasystem backend: etcd plus one datasystem worker on every engine node.

vllm-ascend's yuanrong backend reaches the worker of its own node at DS_WORKER_ADDR and exchanges shared memory
with it through the worker's Unix sockets, so workers run as a DaemonSet on the engine nodes with host networking
and a hostPath socket directory the engine pods mount too. Flags: the wheel's worker_config.json and
reference/research/backends.md §3 (verified there: worker with etcd, Python KVClient).
"""

from __future__ import annotations

import pulumi_kubernetes as k8s

from kvpool.components.kv_store.common import (
    RESTRICTED_CONTAINER,
    STORE_NAME,
    StoreContext,
)
from kvpool.components.kv_store.endpoint import YUANRONG_WORKERS, KVStoreEndpoint
from kvpool.components.kv_store.etcd import build_etcd, client_endpoints
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.kv_store.registry import Renderer
from kvpool.internal.labels import app_selector
from kvpool.internal.pod_layout import YUANRONG_SOCKET_DIR
from kvpool.internal.ports import Port
from kvpool.policies import rules
from kvpool.settings.store import YuanrongStoreConfig

# The node folder of the worker's sockets: an entry of the host-path allow-list (kvpool/policies/rules/host_paths.py).
SOCKET_HOST_DIR = rules.YUANRONG_SOCKET_HOST_DIR

# The worker binary ships inside the wheel's package folder with its libraries beside it (dscli does the same).
WORKER_COMMAND = (
    'DS=$(python3 -c "import os, yr.datasystem as d; print(os.path.dirname(d.__file__))") && '
    'LD_LIBRARY_PATH="$DS/lib:$LD_LIBRARY_PATH" exec "$DS/datasystem_worker" "$@"'
)
HOST_IP_ENV = {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}
SOCKETS_VOLUME = "datasystem-sockets"


def engine_env(port: int) -> dict[str, str]:
    """What engines set to reach the worker of their node (the consumer of another stack's store rebuilds it)."""
    return {
        "KV_STORE_BACKEND": rules.YUANRONG.name,
        "DS_WORKER_ADDR": f"$(HOST_IP):{port}",
        "DATASYSTEM_CLIENT_LOG_DIR": "/tmp/datasystem/client-logs",
    }


def engine_host_paths() -> dict[str, dict[str, str]]:
    """The worker's socket folder, the one host path engines mount for a store."""
    return {SOCKETS_VOLUME: {"path": SOCKET_HOST_DIR, "mount_path": YUANRONG_SOCKET_DIR}}


def worker_args(store: YuanrongStoreConfig, etcd_address: str, namespace: str) -> list[str]:
    return [
        f"--worker_address=$(HOST_IP):{store.port}",
        f"--etcd_address={etcd_address}",
        f"--cluster_name={namespace}",  # one ring per service, even on a shared etcd
        f"--shared_memory_size_mb={store.shared_memory_size_mb}",
        f"--unix_domain_socket_dir={YUANRONG_SOCKET_DIR}",
        "--log_dir=/tmp/datasystem/logs",
        "--rocksdb_store_dir=/tmp/datasystem/rocksdb",
        "--ready_check_path=/tmp/datasystem/ready",
        "--health_check_path=/tmp/datasystem/healthy",
    ]


def build(ctx: StoreContext, store: YuanrongStoreConfig) -> KVStoreEndpoint:
    etcd_endpoints = client_endpoints(STORE_NAME, ctx.workloads, store.etcd)
    # The workers use the host network, so no NetworkPolicy can select them (one applies to pod-network pods
    # only): the worker port on each node is reachable from the node's network, and the engines reach it at
    # $(HOST_IP). etcd runs on the pod network and is protected: its peer port admits its members only, its client
    # port the workers' node addresses (etcd_client_cidrs, which the settings require); the engines never dial it.
    etcd = build_etcd(ctx, STORE_NAME, store.etcd, clients=[], engines=False, node_cidrs=list(store.etcd_client_cidrs))
    worker = {
        "name": "datasystem-worker",
        "image": ctx.image,
        "command": ["/bin/sh", "-c", WORKER_COMMAND, "datasystem_worker"],
        "args": worker_args(store, ",".join(etcd_endpoints), ctx.namespace),
        "env": [HOST_IP_ENV],
        "ports": [Port(name="worker", port=store.port, also_on_host=True).container_port()],
        "readinessProbe": {"exec": {"command": ["test", "-f", "/tmp/datasystem/ready"]}, "periodSeconds": 5},
        "livenessProbe": {"tcpSocket": {"port": store.port}, "periodSeconds": 10, "failureThreshold": 3},
        "resources": ctx.resources.manifest(),
        "securityContext": RESTRICTED_CONTAINER,
        "volumeMounts": [{"name": "sockets", "mountPath": YUANRONG_SOCKET_DIR}, {"name": "shm", "mountPath": "/dev/shm"}],
    }
    ctx.keep(k8s.apps.v1.DaemonSet(
        ctx.names.name(YUANRONG_WORKERS),
        metadata=ctx.metadata(YUANRONG_WORKERS, YUANRONG_WORKERS),
        spec={
            "selector": {"matchLabels": app_selector(YUANRONG_WORKERS)},
            "template": {
                "metadata": {"labels": ctx.app_labels(YUANRONG_WORKERS)},
                "spec": {
                    "hostNetwork": True,
                    "dnsPolicy": "ClusterFirstWithHostNet",  # host networking, yet etcd is found by Service name
                    "automountServiceAccountToken": False,
                    "nodeSelector": ctx.engine_node_labels,
                    "containers": [ctx.with_store_env(worker)],
                    "volumes": [
                        {"name": "sockets", "hostPath": {"path": SOCKET_HOST_DIR, "type": "DirectoryOrCreate"}},
                        {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": f"{store.shared_memory_size_mb}Mi"}},
                    ],
                },
            },
        },
        opts=ctx.child_opts(YUANRONG_WORKERS, [etcd]),
    ))
    return KVStoreEndpoint(
        backend=rules.YUANRONG.name,
        host=store_host(rules.YUANRONG.name, ctx.workloads),
        port=store.port,
        metrics_port=store.port,
        namespace=ctx.namespace,
        deploy_mode=ctx.workloads.deploy_mode,
        engine_env=engine_env(store.port),
        host_paths=engine_host_paths(),
    )


# No client file, no lease, and each node's datasystem worker holds the pool memory, not the engines; a consumer
# agrees with the owner on nothing beyond the backend and the contract's common fields.
RENDERER = Renderer(
    build=lambda ctx, store, args: build(ctx, store), client_ports=lambda endpoint: (),
    pool_bytes_per_process=lambda endpoint, store, sizing: (0, False),
    engine_env_from_output=lambda problems, host, port, theirs: engine_env(port), client_files={},
    host_paths=engine_host_paths, lease_problems=None, consumer_problems=lambda store, hardware, own, target, endpoint: [],
)
