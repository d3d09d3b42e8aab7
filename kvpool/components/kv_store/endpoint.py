"""KVStoreEndpoint: everything an engine needs to use a KV store, as plain data.

It is data only (no Kubernetes object references), so that it can be exported as a stack output and used
by the engines of another namespace (through a StackReference): the engines' side renders the client files
into a ConfigMap of its own namespace.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kvpool.policies import rules

# Version of the `kv_store` stack output. Raise it when a field changes meaning or a consumer needs a new one.
# 2: `sidecars` (the standalone store container) gave way to `standalone_store`; `cluster` added.
SCHEMA = 2

# Yuanrong's datasystem workers: the DaemonSet whose pod on an engine's node serves that engine (yuanrong.py).
YUANRONG_WORKERS = "mindie-motor-ds-worker"


@dataclass(frozen=True)
class KVStoreEndpoint:
    backend: str
    host: str
    port: int
    metrics_port: int
    namespace: str
    deploy_mode: str
    # Environment every engine container sets (KVS_MASTER_SERVICE, KV_STORE_BACKEND, MOONCAKE_CONFIG_PATH, ...).
    engine_env: dict[str, str] = field(default_factory=dict)
    # File name -> content, mounted at CLIENT_CONFIG_DIR in engine pods.
    client_files: dict[str, str] = field(default_factory=dict)
    # Mooncake store_mode standalone: Motor's node manager runs mooncake_store_service in every engine container and
    # writes its config beside mooncake.json, so CLIENT_CONFIG_DIR must be writable (docs/standalone-store.md).
    standalone_store: bool = False
    # hostPath directories engine pods mount (name -> {"path", "mount_path"}): Yuanrong's worker sockets.
    host_paths: dict[str, dict[str, str]] = field(default_factory=dict)
    # Mooncake's default_kv_lease_ttl (ms): every engine's ASCEND timeouts must stay below it, consumers' too.
    lease_ttl_ms: int | None = None
    # Filled by the owning stack: who may use the store, and what a consumer must agree on
    # (kvpool/program/compatibility.py).
    allowed_consumers: list[str] = field(default_factory=list)
    compatibility: dict[str, Any] = field(default_factory=dict)

    def as_output(self, stack: str, cluster: str) -> dict[str, Any]:
        """The `kv_store` stack output: the contract another stack's StackReference reads. `cluster` is the owner's
        `cluster` setting: a consumer's must be the same, since the store's Service exists in that cluster only."""
        return {"schema": SCHEMA, "stack": stack, "cluster": cluster, **asdict(self)}


def store_service(endpoint: KVStoreEndpoint) -> tuple[str, str]:
    """(namespace, name) of the Service the endpoint's `host` names: the store Service the engines dial
    (CRD-prefixed in a service set); for Yuanrong, whose engines reach their own node's worker, the etcd peers'
    headless Service the workers join (kvpool/components/kv_store/hosts.py). What `pulumi up` of a consumer reads
    (shared.py store_serves) and what `kvpool fleet --kubeconfig` reads (kvpool/cli/fleet/pools.py)."""
    return endpoint.namespace, endpoint.host.split(".", 1)[0]


def store_workers(endpoint: KVStoreEndpoint) -> tuple[str, str] | None:
    """(namespace, name) of the DaemonSet whose ready pods serve the engines, for Yuanrong: its etcd peers Service
    publishes not-ready addresses, so that Service's Endpoints show the ring's members, not whether a worker serves.
    None for the other backends, whose store Service's Endpoints say it."""
    return (endpoint.namespace, YUANRONG_WORKERS) if rules.BACKENDS[endpoint.backend].node_workers else None
