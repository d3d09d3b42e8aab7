"""The store's client files as a ConfigMap in the engines' namespace (which may differ from the store's)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.kv_store.endpoint import KVStoreEndpoint
from components.labels import common_labels

CLIENT_CONFIG_MAP = "mindie-motor-kv-client"


def kv_client_config_map(
    endpoint: KVStoreEndpoint, namespace: str, opts: pulumi.ResourceOptions | None = None
) -> k8s.core.v1.ConfigMap | None:
    if not endpoint.client_files:
        return None
    return k8s.core.v1.ConfigMap(
        CLIENT_CONFIG_MAP,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=CLIENT_CONFIG_MAP,
            namespace=namespace,
            labels=common_labels(namespace, "kv-client", CLIENT_CONFIG_MAP),
        ),
        data=dict(endpoint.client_files),
        opts=opts,
    )
