"""Mooncake backend: the mooncake_master Deployment + Service, and the engines' mooncake.json.

Flags and file keys: Mooncake mooncake-store/src/master.cpp and vllm-ascend's mooncake backend
(reference/research/motor-deployer.md §2-§3); what was verified to run: reference/research/backends.md §1.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from kvpool.components.kv_store import monitoring
from kvpool.components.kv_store.common import (
    METRICS_PORT,
    POD_IP_ENV,
    RESTRICTED_CONTAINER,
    STORE_NAME,
    StoreContext,
    container_ports,
    service_endpoint,
    service_engine_env,
    store_server,
)
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.etcd import build_etcd, client_endpoints
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.kv_store.output import OUTPUT, OutputProblems
from kvpool.components.kv_store.registry import Renderer
from kvpool.components.workloads import Workloads
from kvpool.internal.pod_layout import CLIENT_CONFIG_DIR
from kvpool.internal.ports import Port
from kvpool.policies import rules
from kvpool.settings.store import P2P_HANDSHAKE, EtcdConfig, MooncakeStoreConfig

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


# --- a consumer's reading of a Mooncake owner's `kv_store` output (kvpool/components/kv_store/contract.py) ---


def settings_problems(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) of each of the owner's Mooncake settings, as its output carries them, that its own settings
    model (MooncakeStoreConfig) refuses: what the owner's stack could never have written is a forgery."""
    try:
        MooncakeStoreConfig.model_validate({"backend": rules.MOONCAKE.name, **fields})
    except ValidationError as error:
        return [(".".join(map(str, detail["loc"])), detail["msg"].removeprefix("Value error, "))
                for detail in error.errors()]
    return []


def lease_problems(lease: Any) -> list[str]:
    """The owner's lease_ttl_ms is its default_kv_lease_ttl, held to the owner's own model."""
    return [message for _, message in settings_problems({"default_kv_lease_ttl": lease})]


def _master_address_ok(address: Any, host: str, port: int, workloads: Workloads) -> bool:
    """The master Service, or (HA) the etcd members of the owner's store, as the owner's etcd.client_endpoints
    names them: only their number and port come from the owner."""
    if address == f"{host}:{port}":
        return True
    if not isinstance(address, str) or not address.startswith(ETCD_SCHEME):
        return False
    endpoints = master_endpoints(address)
    number = endpoints[0].rpartition(":")[2]
    try:
        etcd = EtcdConfig(replicas=len(endpoints), port=int(number) if rules.is_decimal(number) else -1)
    except ValidationError:
        return False
    return endpoints == client_endpoints(STORE_NAME, workloads, etcd)


def client_json_from_output(
    problems: OutputProblems, where: str, text: str, host: str, port: int, workloads: Workloads
) -> str | None:
    """The owner's mooncake.json, re-rendered from its keys once each is what the owner's model allows and its
    master address is the owner's store."""
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        problems.add(where, "is not JSON")
        return None
    if not isinstance(config, dict):
        problems.add(where, "is not a JSON object")
        return None
    bad = False
    for key in sorted(set(config) - set(CLIENT_CONFIG_KEYS)):
        problems.add(f"{where}.{key}", f"is not a mooncake.json key ({', '.join(CLIENT_CONFIG_KEYS)})")
        bad = True
    for key, value in config.items():
        if not isinstance(value, (str, int, float, bool)) or isinstance(value, str) and any(c in value for c in "\n\r\0"):
            problems.add(f"{where}.{key}", "is not a single-line scalar")
            bad = True
    for field, message in settings_problems(
            {key: value for key, value in config.items() if key in CLIENT_CONFIG_KEYS and key != "master_server_address"}):
        problems.add(f"{where}.{field}", message)
        bad = True
    if config.get("metadata_server", P2P_HANDSHAKE) != P2P_HANDSHAKE:
        problems.add(f"{where}.metadata_server", f"is {config['metadata_server']!r}; a consumer dials no host the owner "
                     f"names, and {P2P_HANDSHAKE} is the metadata mode that names none")
        bad = True
    if not _master_address_ok(config.get("master_server_address"), host, port, workloads):
        problems.add(f"{where}.master_server_address",
                     f"is neither {host}:{port} ({OUTPUT}.host:port) nor etcd:// endpoints of the store's etcd in "
                     f"namespace {workloads.namespace}")
        bad = True
    return None if bad else render_json(config)


def consumer_problems(
    store: MooncakeStoreConfig, hardware_type: str, own: str, target: str, endpoint: KVStoreEndpoint
) -> list[str]:
    """Motor's node manager starts (or not) the standalone store from the consumer's own user_config.json, and the
    consumer's engines use the owner's mooncake.json (`endpoint`: the owner's output as the consumer checked it): the
    two must describe one pool."""
    problems = []
    theirs_mode = "standalone" if endpoint.standalone_store else "embedded"
    if store.store_mode != theirs_mode:
        segment = ("hold no segment (the owner's mooncake.json gives them 0), and no store process would hold one"
                   if theirs_mode == "standalone" else "would hold their segment twice, in the engine and in a store process")
        problems.append(
            f"kv_cache_store_config.store_mode: {own} is {store.store_mode!r} but {target}'s store is {theirs_mode!r} "
            f"({OUTPUT}.standalone_store), so {own}'s engines {segment}; write store_mode: {theirs_mode}."
        )
    theirs_protocol = json.loads(endpoint.client_files[CLIENT_FILE]).get("protocol", "ascend")  # vllm-ascend's default
    if store.protocol != theirs_protocol:
        problems.append(
            f"kv_cache_store_config.protocol: {own} is {store.protocol!r} but {target}'s mooncake.json uses "
            f"{theirs_protocol!r}; one pool has one transport, write protocol: {theirs_protocol}."
        )
    return problems


RENDERER = Renderer(
    build=lambda ctx, store, args: build(ctx, store, args.sizing), client_ports=client_ports,
    pool_bytes_per_process=pool_bytes_per_process,
    engine_env_from_output=lambda problems, host, port, theirs: service_engine_env(host, rules.MOONCAKE.name, engine_env()),
    client_files={CLIENT_FILE: client_json_from_output}, host_paths=lambda: {}, lease_problems=lease_problems,
    consumer_problems=consumer_problems,
)
