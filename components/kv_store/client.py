"""The store's client files that engines mount, as a ConfigMap in the engines' namespace (which may differ from
the store's). Files Motor's scripts take from motor-config (MemCache's conf) are not here."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from components.kv_store.endpoint import KVStoreEndpoint
from components.labels import common_labels
from components.motor_config import CLIENT_FILE_KEYS

CLIENT_CONFIG_MAP = "mindie-motor-kv-client"


def mounted_client_files(endpoint: KVStoreEndpoint) -> dict[str, str]:
    """The client files engines mount from CLIENT_CONFIG_MAP, by file name."""
    return {name: text for name, text in endpoint.client_files.items() if name not in CLIENT_FILE_KEYS}


def kv_client_config_map(
    endpoint: KVStoreEndpoint, namespace: str, opts: pulumi.ResourceOptions | None = None
) -> k8s.core.v1.ConfigMap | None:
    files = mounted_client_files(endpoint)
    if not files:
        return None
    return k8s.core.v1.ConfigMap(
        CLIENT_CONFIG_MAP,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=CLIENT_CONFIG_MAP,
            namespace=namespace,
            labels=common_labels(namespace, "kv-client", CLIENT_CONFIG_MAP),
        ),
        data=files,
        opts=opts,
    )
