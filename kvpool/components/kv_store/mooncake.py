"""Mooncake backend: the mooncake_master Deployment + Service, and the engines' mooncake.json.

Flags and file keys: Mooncake mooncake-store/src/master.cpp and vllm-ascend's mooncake backend
(reference/research/motor-deployer.md §2-§3); what was verified to run: reference/research/backends.md §1.
"""

from __future__ import annotations

import json
from typing import Any

from kvpool.components.kv_store import monitoring
from kvpool.components.kv_store.common import (
    METRICS_PORT,
    POD_IP_ENV,
    RESTRICTED_CONTAINER,
    STORE_NAME,
    StoreContext,
    container_ports,
    service_endpoint,
    store_server,
)
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.etcd import build_etcd, client_endpoints
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.kv_store.registry import Renderer
from kvpool.internal.pod_layout import CLIENT_CONFIG_DIR
from kvpool.internal.ports import Port
from kvpool.policies import rules
from kvpool.settings.store import MooncakeStoreConfig

CLIENT_FILE = "mooncake.json"
ETCD_SCHEME = "etcd://"  # a master_server_address that names etcd members: HA clients find the leader there
CLIENT_CONFIG_KEYS = (
    "metadata_server", "protocol", "device_name", "master_server_address", "global_segment_size",
    "local_buffer_size", "prefer_alloc_in_same_node",
)


def engine_env() -> dict[str, str]:
    """What engines set beyond the Service's host and the backend (service_endpoint adds those)."""
    return {"MOONCAKE_CONFIG_PATH": f"{CLIENT_CONFIG_DIR}/{CLIENT_FILE}"}


def master_args(store: MooncakeStoreConfig, etcd_endpoints: list[str]) -> list[str]:
    """mooncake_master's flags, every value from the config (nothing the config sets is hard-coded)."""
    args = [
        f"--rpc_port={store.port}",
        "--rpc_address=$(POD_IP)",  # HA needs the master's own reachable address; harmless otherwise
        f"--metrics_port={store.metrics_port}",
        f"--eviction_high_watermark_ratio={store.eviction_high_watermark_ratio}",
        f"--eviction_ratio={store.eviction_ratio}",
        f"--default_kv_lease_ttl={store.default_kv_lease_ttl}",
        f"--client_ttl={store.client_ttl}",
        "--logtostderr",
    ]
    if etcd_endpoints:
        args += [
            "--enable_ha=true",
            "--ha_backend_type=etcd",
            f"--etcd_endpoints={';'.join(etcd_endpoints)}",
            "--enable_oplog=true",
        ]
    return args


def master_server_address(store: MooncakeStoreConfig, host: str, etcd_endpoints: list[str]) -> str:
    """HA clients find the leader through etcd; otherwise they dial the master Service."""
    if etcd_endpoints:
        return ETCD_SCHEME + ";".join(etcd_endpoints)
    return f"{host}:{store.port}"


def master_endpoints(address: str) -> list[str]:
    """The host:port entries a master_server_address names: the etcd members (HA), or the master itself."""
    return address.removeprefix(ETCD_SCHEME).split(";")


def client_ports(endpoint: KVStoreEndpoint) -> list[int]:
    """The ports mooncake.json's master_server_address names: the master's, or Mooncake HA's etcd members'."""
    address = json.loads(endpoint.client_files[CLIENT_FILE])["master_server_address"]
    return [int(member.rpartition(":")[2]) for member in master_endpoints(address)]


def pool_bytes_per_process(
    endpoint: KVStoreEndpoint, store: MooncakeStoreConfig, sizing: rules.PoolSizing | None
) -> tuple[int, bool]:
    """Embedded, every engine rank's client holds the segment its mooncake.json names; standalone, the store process
    of each pod holds the segment the stack's own kv_cache_store_config sizes."""
    if endpoint.standalone_store:
        return rules.mooncake_size_bytes(store.global_segment_size), False
    return rules.mooncake_size_bytes(json.loads(endpoint.client_files[CLIENT_FILE])["global_segment_size"]), True


def client_config(store: MooncakeStoreConfig, master_address: str) -> dict[str, Any]:
    """The engines' mooncake.json. In standalone mode the engine contributes no segment: the store process Motor's
    node manager starts in each engine container owns the memory, so the pool survives an engine crash (seed 000,
    store_mode; docs/standalone-store.md)."""
    config: dict[str, Any] = {
        "metadata_server": store.metadata_server,
        "protocol": store.protocol,
        "device_name": store.device_name,
        "master_server_address": master_address,
        "global_segment_size": 0 if store.store_mode == "standalone" else store.global_segment_size,
        "local_buffer_size": store.local_buffer_size,
    }
    if store.prefer_alloc_in_same_node is not None:
        config["prefer_alloc_in_same_node"] = store.prefer_alloc_in_same_node
    return config


def render_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2) + "\n"


def build(ctx: StoreContext, store: MooncakeStoreConfig, sizing: rules.PoolSizing | None) -> KVStoreEndpoint:
    host = store_host(rules.MOONCAKE.name, ctx.workloads)
    ports = [Port(name="rpc", port=store.port), Port(name=METRICS_PORT, port=store.metrics_port)]
    etcd_endpoints: list[str] = []
    depends_on = []
    if store.ha is not None:
        etcd_endpoints = client_endpoints(STORE_NAME, ctx.workloads, store.ha.etcd)
        depends_on.append(build_etcd(ctx, STORE_NAME, store.ha.etcd, clients=[STORE_NAME], engines=True))
    master = {
        "name": "mooncake-master",
        "image": ctx.image,
        "command": ["mooncake_master"],
        "args": master_args(store, etcd_endpoints),
        "env": [POD_IP_ENV],
        "ports": container_ports(ports),
        # Ready once it accepts RPCs; alive while its HTTP server answers /health.
        "readinessProbe": {"tcpSocket": {"port": "rpc"}, "periodSeconds": 5},
        "livenessProbe": {
            "httpGet": {"path": "/health", "port": METRICS_PORT}, "periodSeconds": 10, "failureThreshold": 3,
        },
        "resources": ctx.resources.manifest(),
        "securityContext": RESTRICTED_CONTAINER,
    }
    replicas = store.ha.master_replicas if store.ha else 1
    store_server(ctx, master, ports, store.service_monitor, replicas=replicas, depends_on=depends_on)
    if store.dashboards:
        monitoring.build(ctx, monitoring.mooncake(store, ctx.namespace, sizing))
    address = master_server_address(store, host, etcd_endpoints)
    files = {CLIENT_FILE: render_json(client_config(store, address))}
    return service_endpoint(
        ctx, rules.MOONCAKE.name, host, store.port, store.metrics_port,
        engine_env(),
        client_files=files, standalone_store=store.store_mode == "standalone", lease_ttl_ms=store.default_kv_lease_ttl,
    )


RENDERER = Renderer(build=lambda ctx, store, args: build(ctx, store, args.sizing), client_ports=client_ports,
                    pool_bytes_per_process=pool_bytes_per_process)
