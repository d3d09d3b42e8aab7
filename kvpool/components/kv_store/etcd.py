"""etcd for a store's cluster state: Mooncake HA (leader election, oplog) and Yuanrong (the worker ring)."""

from __future__ import annotations

from typing import Sequence

import pulumi_kubernetes as k8s

from kvpool.components.kv_store.common import (
    MEMBERS,
    RESTRICTED_CONTAINER,
    StoreContext,
    container_ports,
    headless_service,
    network_policy,
)
from kvpool.components.workloads import Workloads
from kvpool.internal.labels import app_selector, k8s_name
from kvpool.internal.ports import Port
from kvpool.settings.store import EtcdConfig


def etcd_name(store_name: str) -> str:
    return k8s_name(store_name, "etcd")


def peers_service(store_name: str) -> str:
    """The members' headless Service."""
    return k8s_name(etcd_name(store_name), "peers")


def client_endpoints(store_name: str, workloads: Workloads, etcd: EtcdConfig) -> list[str]:
    """host:port of every member through the headless Service, so a client survives a member's loss."""
    name = etcd_name(store_name)
    peers = workloads.fqdn(peers_service(store_name))
    return [f"{name}-{index}.{peers}:{etcd.port}" for index in range(etcd.replicas)]


def etcd_command(store_name: str, workloads: Workloads, etcd: EtcdConfig) -> list[str]:
    name, namespace = etcd_name(store_name), workloads.namespace
    peers = workloads.fqdn(peers_service(store_name))
    cluster = ",".join(f"{name}-{i}=http://{name}-{i}.{peers}:{etcd.peer_port}" for i in range(etcd.replicas))
    return [
        "etcd",
        "--name=$(POD_NAME)",
        "--data-dir=/var/lib/etcd",
        f"--listen-client-urls=http://0.0.0.0:{etcd.port}",
        f"--advertise-client-urls=http://$(POD_NAME).{peers}:{etcd.port}",
        f"--listen-peer-urls=http://0.0.0.0:{etcd.peer_port}",
        f"--initial-advertise-peer-urls=http://$(POD_NAME).{peers}:{etcd.peer_port}",
        f"--initial-cluster={cluster}",
        "--initial-cluster-state=new",
        f"--initial-cluster-token={namespace}-{name}",
    ]


def build_etcd(
    ctx: StoreContext, store_name: str, etcd: EtcdConfig, clients: list[str], engines: bool,
    node_cidrs: Sequence[str] = (),
) -> k8s.apps.v1.StatefulSet:
    """StatefulSet + headless peer Service + a NetworkPolicy: the peer port admits the members only; the client
    port admits the members, the store pods `clients`, the engine pods when `engines` (Mooncake HA's clients find
    the leader through etcd), and `node_cidrs`: clients on the host network (Yuanrong's workers), whose address no
    pod selector names."""
    name = etcd_name(store_name)
    peers = peers_service(store_name)
    ports = [Port(name="client", port=etcd.port), Port(name="peer", port=etcd.peer_port)]
    headless = headless_service(ctx, peers, name, ports)
    members = ctx.keep(k8s.apps.v1.StatefulSet(
        ctx.names.name(name),
        metadata=ctx.metadata(name, name),
        spec={
            "serviceName": peers,
            "replicas": etcd.replicas,
            "podManagementPolicy": "Parallel",  # members must start together to form the initial cluster
            "selector": {"matchLabels": app_selector(name)},
            "template": {
                "metadata": {"labels": ctx.app_labels(name)},
                "spec": {
                    "automountServiceAccountToken": False,
                    "nodeSelector": ctx.node_selector or None,
                    "containers": [
                        {
                            "name": "etcd",
                            "image": etcd.image,
                            "command": etcd_command(store_name, ctx.workloads, etcd),
                            "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                            "ports": container_ports(ports),
                            "readinessProbe": {"tcpSocket": {"port": etcd.port}, "periodSeconds": 5},
                            "volumeMounts": [{"name": "data", "mountPath": "/var/lib/etcd"}],
                            "securityContext": RESTRICTED_CONTAINER,
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": etcd.storage_size}},
                    },
                }
            ],
        },
        opts=ctx.child_opts(name, [headless]),
    ))
    network_policy(
        ctx, name, name, ports, peers=[name, *clients], members=[name], engines=engines,
        node_cidrs=node_cidrs, admits={"peer": MEMBERS},
    )
    return members
