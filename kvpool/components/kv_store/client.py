"""What the store's clients get in their own namespace (which may differ from the store's): the client files that
engines mount, as a ConfigMap (files Motor's scripts take from motor-config, MemCache's conf, are not here), and, for
a consumer of another stack's store, the egress rule that keeps its traffic to the store inside the owner's
namespace."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.registry import renderer
from kvpool.internal.labels import KV_CLIENT_LABEL, common_labels
from kvpool.internal.motor_config import CLIENT_FILE_KEYS
from kvpool.internal.units import MAX_PORT
from kvpool.policies import rules

CLIENT_CONFIG_MAP = "mindie-motor-kv-client"
CLIENT_EGRESS_POLICY = "mindie-motor-kv-client-egress"


def mounted_client_files(endpoint: KVStoreEndpoint) -> dict[str, str]:
    """The client files engines mount from CLIENT_CONFIG_MAP, by file name."""
    return {name: text for name, text in endpoint.client_files.items() if name not in CLIENT_FILE_KEYS}


def kv_client_config_map(
    endpoint: KVStoreEndpoint, namespace: str, opts: pulumi.ResourceOptions | None = None, name: str = CLIENT_CONFIG_MAP
) -> k8s.core.v1.ConfigMap | None:
    """`name`: its Pulumi name."""
    files = mounted_client_files(endpoint)
    if not files:
        return None
    return k8s.core.v1.ConfigMap(name, metadata=_metadata(CLIENT_CONFIG_MAP, namespace), data=files, opts=opts)


def _metadata(name: str, namespace: str) -> k8s.meta.v1.ObjectMetaArgs:
    return k8s.meta.v1.ObjectMetaArgs(name=name, namespace=namespace, labels=common_labels(namespace, "kv-client", name))


def store_ports(endpoint: KVStoreEndpoint) -> list[int]:
    """Every port of the store's namespace its clients dial: the store's own, and those its client files name
    (Mooncake HA's etcd members, MemCache's config store)."""
    return sorted({endpoint.port, endpoint.metrics_port, *renderer(endpoint.backend).client_ports(endpoint)})


def _other_tcp_ports(ports: list[int]) -> list[dict[str, object]]:
    """Every TCP port but `ports`, as the fewest port ranges."""
    ranges, start = [], 1
    for port in [*ports, MAX_PORT + 1]:
        if start < port:
            end = port - 1
            ranges.append({"port": start, "protocol": "TCP", **({"endPort": end} if end > start else {})})
        start = port + 1
    return ranges


def kv_client_egress_policy(
    endpoint: KVStoreEndpoint, namespace: str, opts: pulumi.ResourceOptions | None = None,
    name: str = CLIENT_EGRESS_POLICY,
) -> k8s.networking.v1.NetworkPolicy | None:
    """A consumer's KV clients (its pods labelled KV_CLIENT_LABEL) reach the store's ports in the owner's namespace
    only, so a store host that got past the contract check (kvpool/components/kv_store/contract.py) cannot be reached in
    another namespace or outside the cluster. Every other port stays open to any destination: a NetworkPolicy can
    only allow, so the rule lists the other TCP ports as ranges and every UDP and SCTP port. Yuanrong's engines
    dial their own node's worker on the host network, which no namespace selector names: no rule for it. `name`: its
    Pulumi name."""
    if rules.BACKENDS[endpoint.backend].node_workers:
        return None
    ports = store_ports(endpoint)
    owner = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": endpoint.namespace}}}
    return k8s.networking.v1.NetworkPolicy(
        name,
        metadata=_metadata(CLIENT_EGRESS_POLICY, namespace),
        spec={
            "podSelector": {"matchLabels": {KV_CLIENT_LABEL: "true"}},
            "policyTypes": ["Egress"],
            "egress": [
                {"to": [owner], "ports": [{"port": port, "protocol": "TCP"} for port in ports]},
                {"ports": [*_other_tcp_ports(ports), {"protocol": "UDP"}, {"protocol": "SCTP"}]},
            ],
        },
        opts=opts,
    )
