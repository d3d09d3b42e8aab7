"""MemCache backend: the MetaService Deployment + Service with its mmc-meta.conf, and the engines' LocalService
conf pointing at the Service FQDN with the configured ports.

deploy.py rewrites only the host of the LocalService URLs and leaves the ports at 50088/50089, so a non-default
port breaks every engine; here both URLs carry the configured ports. Keys: Ascend/memcache config/*.conf and
reference/research/motor-deployer.md §5.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

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
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.kv_store.output import OUTPUT, OutputProblems
from kvpool.components.kv_store.registry import Renderer
from kvpool.components.workloads import Workloads
from kvpool.errors import KvpoolError
from kvpool.internal.hardware import HARDWARE
from kvpool.internal.labels import k8s_name
from kvpool.internal.pod_layout import MOTOR_CONF_DIR
from kvpool.internal.ports import Port
from kvpool.internal.project_files import read_project_file
from kvpool.policies import rules
from kvpool.settings.store import MemcacheStoreConfig

META_CONF_DIR = "/etc/memcache"
META_TEMPLATE = "mmc-meta.conf.template"
# The MetaService binds $POD_IP (seed FAQ 4); a conf file cannot read the environment, so the container
# renders the template with the pod's IP before it starts the service.
META_CONF = "/tmp/mmc-meta.conf"
LOCAL_FILE = "mmc-local.conf"
META_COMMAND = (
    f'sed "s|\\${{POD_IP}}|${{POD_IP}}|g" {META_CONF_DIR}/{META_TEMPLATE} > {META_CONF} && '
    "exec python3 -c 'from memcache_hybrid import MetaService; MetaService.main()'"
)


LOCAL_SERVICE_MODES = ("inprocess", "standalone")


DRAM_KEY = "ock.mmc.local_service.dram.size"
PROTOCOL_KEY = "ock.mmc.local_service.protocol"


def engine_env(local_service_mode: str) -> dict[str, str]:
    """What engines set beyond the Service's host and the backend (service_endpoint adds those). Motor's
    sync_mmc_local_config copies the conf from motor-config to this writable file, which its node manager rewrites
    in place (LocalService.prepare); a ConfigMap file would be read-only."""
    return {"MMC_LOCAL_CONFIG_PATH": f"{MOTOR_CONF_DIR}/{LOCAL_FILE}", "MMC_LOCAL_SERVICE_MODE": local_service_mode}


class LocalServiceConfError(KvpoolError):
    """The user's LocalService conf cannot be read or contradicts what motor-kvpool sets."""


def render_conf(entries: dict[str, str]) -> str:
    return "".join(f"{key} = {value}\n" for key, value in entries.items())


# What a conf key may be: MemCache's dotted option names (Ascend/memcache config/*.conf).
CONF_KEY = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


def parse_conf(text: str, source: str) -> dict[str, str]:
    """`key = value` lines. An error names the line, never its text: the file may hold what its reader must not
    see (a path mistaken for a conf, a secret)."""
    entries = {}
    for number, key, value in rules.conf_entries(text):
        if value is None or not CONF_KEY.fullmatch(key):
            raise LocalServiceConfError(f"{source}:{number}: expected `key = value` with a MemCache option name")
        entries[key] = value
    return entries


def client_ports(endpoint: KVStoreEndpoint) -> list[int]:
    """The ports the engines' conf names: the MetaService's and its config store's."""
    conf = parse_conf(endpoint.client_files[LOCAL_FILE], LOCAL_FILE)
    return [int(conf[key].rpartition(":")[2])
            for key in ("ock.mmc.meta_service_url", "ock.mmc.local_service.config_store_url")]


def pool_bytes_per_process(
    endpoint: KVStoreEndpoint, store: MemcacheStoreConfig, sizing: rules.PoolSizing | None
) -> tuple[int | None, bool]:
    """The stack's own dram_size, once per engine pod (rules.pool_sizing)."""
    return (sizing.unit_bytes if sizing else None), False


def meta_conf(store: MemcacheStoreConfig) -> dict[str, str]:
    return {
        "ock.mmc.meta_service_url": f"tcp://${{POD_IP}}:{store.port}",
        "ock.mmc.meta_service.config_store_url": f"tcp://${{POD_IP}}:{store.config_store_port}",
        "ock.mmc.meta_service.metrics_url": f"http://${{POD_IP}}:{store.metrics_port}",
        "ock.mmc.meta.ha.enable": "false",
        "ock.mmc.log_level": "info",
        "ock.mmc.log_output_target": "screen",  # container logs instead of files in the pod
    }


def local_conf(store: MemcacheStoreConfig, host: str, hardware_type: str, project_dir: Path) -> dict[str, str]:
    """The LocalService conf: ours, with the user's file (if any) merged; a key we set may only repeat our value."""
    ours = {
        "ock.mmc.meta_service_url": f"tcp://{host}:{store.port}",
        "ock.mmc.local_service.config_store_url": f"tcp://{host}:{store.config_store_port}",
    }
    defaults = {
        "ock.mmc.local_service.world_size": "256",
        PROTOCOL_KEY: HARDWARE[hardware_type].memcache_protocol,
        # Motor's node manager rewrites this key when the pod starts (LocalService.prepare: dram_size split over the
        # pod's ranks, 0GB standalone); what is written here holds only until then.
        DRAM_KEY: "0GB" if store.local_service_mode == "standalone" else "1GB",
        "ock.mmc.local_service.max.dram.size": "1024GB",
        "ock.mmc.local_service.dram.best_effort.enabled": "true",
        "ock.mmc.local_service.storage.enabled": "false",
    }
    if store.local_service_conf is None:
        return {**ours, **defaults}
    field = "kv_cache_store_config.local_service_conf"
    _, text = read_project_file(project_dir, store.local_service_conf, field)
    users = parse_conf(text, f"{field}: {store.local_service_conf}")
    secrets = rules.check_plaintext_conf_secrets(text, f"{field}[{store.local_service_conf!r}]")
    if secrets:  # the conf lands in ConfigMap motor-config, readable by anyone who may read the namespace's config
        raise LocalServiceConfError("; ".join(str(finding) for finding in secrets))
    if DRAM_KEY in users:
        pulumi.log.warn(
            f"kv_cache_store_config.local_service_conf: {DRAM_KEY} = {users[DRAM_KEY]} in {store.local_service_conf} "
            f"does not hold: Motor's node manager rewrites it when the pod starts (LocalService.prepare: dram_size "
            f"split over the pod's ranks, else a share of 80 % of the node's free memory); set "
            f"kv_cache_store_config.dram_size, per engine pod, instead"
        )
    conflicts = [key for key, value in ours.items() if key in users and users[key] != value]
    if conflicts:
        raise LocalServiceConfError(
            "kv_cache_store_config.local_service_conf: "
            + "; ".join(f"{key} in {store.local_service_conf} differs from the store's {ours[key]!r}" for key in conflicts)
            + ". Remove these keys from the file: motor-kvpool sets them from the store's Service and ports."
        )
    return {**defaults, **users, **ours}


def build(ctx: StoreContext, store: MemcacheStoreConfig, project_dir: Path) -> KVStoreEndpoint:
    host = store_host(rules.MEMCACHE.name, ctx.workloads)
    ports = [
        Port(name="meta", port=store.port),
        Port(name="config-store", port=store.config_store_port),
        Port(name=METRICS_PORT, port=store.metrics_port),
    ]
    conf_name = k8s_name(STORE_NAME, "meta-conf")
    conf_data = {META_TEMPLATE: render_conf(meta_conf(store))}
    conf = ctx.keep(k8s.core.v1.ConfigMap(
        ctx.names.name(conf_name), metadata=ctx.metadata(conf_name, STORE_NAME), data=conf_data,
        opts=ctx.child_opts(conf_name),
    ))
    meta = {
        "name": "memcache-meta-service",
        "image": ctx.image,
        "command": ["/bin/sh", "-c", META_COMMAND],
        "env": [POD_IP_ENV, {"name": "MMC_META_CONFIG_PATH", "value": META_CONF}],
        "ports": container_ports(ports),
        # TCP probes: MemCache 1.3.0's HTTP server never sends the body to a `Connection: close` request, which is
        # what the kubelet's HTTP probe sends, so an httpGet probe would time out (verified on the wheel).
        "readinessProbe": {"tcpSocket": {"port": "meta"}, "periodSeconds": 5},
        "livenessProbe": {"tcpSocket": {"port": METRICS_PORT}, "periodSeconds": 10, "failureThreshold": 3},
        "resources": ctx.resources.manifest(),
        "securityContext": RESTRICTED_CONTAINER,
        "volumeMounts": [{"name": "meta-conf", "mountPath": META_CONF_DIR, "readOnly": True}],
    }
    volumes = [{"name": "meta-conf", "configMap": {"name": conf_name}}]
    store_server(ctx, meta, ports, store.service_monitor, volumes, depends_on=[conf], config_files=conf_data)
    if store.dashboards:
        monitoring.build(ctx, monitoring.memcache(store, ctx.namespace))
    return service_endpoint(
        ctx, rules.MEMCACHE.name, host, store.port, store.metrics_port,
        engine_env(str(store.local_service_mode)),
        client_files={LOCAL_FILE: render_conf(local_conf(store, host, ctx.hardware_type, project_dir))},
    )


# --- a consumer's reading of a MemCache owner's `kv_store` output (kvpool/components/kv_store/contract.py) ---


def engine_env_from_output(problems: OutputProblems, host: str, port: int, theirs: Any) -> dict[str, str]:
    """The owner's LocalService mode is the one value of its engine env the consumer takes, from the two there are."""
    mode = theirs.get("MMC_LOCAL_SERVICE_MODE") if isinstance(theirs, dict) else None
    if mode not in LOCAL_SERVICE_MODES:
        problems.add("engine_env.MMC_LOCAL_SERVICE_MODE", f"must be one of {', '.join(LOCAL_SERVICE_MODES)}")
        mode = LOCAL_SERVICE_MODES[0]
    return service_engine_env(host, rules.MEMCACHE.name, engine_env(mode))


def local_conf_from_output(
    problems: OutputProblems, where: str, text: str, host: str, port: int, workloads: Workloads
) -> str | None:
    """The owner's LocalService conf, re-rendered from its MemCache options once its URLs name the owner's store."""
    try:
        entries = parse_conf(text, where)
    except LocalServiceConfError as error:
        problems.add(where, str(error).removeprefix(f"{where}:").strip() or "is not a MemCache conf")
        return None
    # The owner's own stack refuses a secret in its conf (it lands in a ConfigMap); so does the consumer's copy.
    secrets = rules.check_plaintext_conf_secrets(text, where)
    for finding in secrets:
        problems.add(finding.path, finding.message)
    bad = bool(secrets)
    for key, value in entries.items():
        if not key.startswith("ock.mmc."):
            problems.add(f"{where}.{key}", "is not a MemCache option (ock.mmc.*)")
            bad = True
        elif any(c in value for c in "\r\0"):
            problems.add(f"{where}.{key}", "holds control characters")
            bad = True
    if entries.get("ock.mmc.meta_service_url") != f"tcp://{host}:{port}":
        problems.add(f"{where}.ock.mmc.meta_service_url", f"must be tcp://{host}:{port} ({OUTPUT}.host and port)")
        bad = True
    store_url = entries.get("ock.mmc.local_service.config_store_url", "")
    number = store_url.removeprefix(f"tcp://{host}:")
    if store_url == number or not rules.is_decimal(number) or not 1 <= int(number) <= 65535:
        problems.add(f"{where}.ock.mmc.local_service.config_store_url", f"must be tcp://{host}:<port>")
        bad = True
    return None if bad else render_conf(entries)


def consumer_problems(
    store: MemcacheStoreConfig, hardware_type: str, own: str, target: str, endpoint: KVStoreEndpoint
) -> list[str]:
    """The owner renders the LocalService conf for its hardware; a consumer on other hardware would get the
    wrong transport, so the two must agree."""
    problems = []
    theirs_mode = endpoint.engine_env["MMC_LOCAL_SERVICE_MODE"]
    if store.local_service_mode != theirs_mode:
        problems.append(
            f"kv_cache_store_config.local_service_mode: {own} is {store.local_service_mode!r} but {target}'s engines "
            f"run the LocalService {theirs_mode!r}; write local_service_mode: {theirs_mode}."
        )
    protocol = HARDWARE[hardware_type].memcache_protocol
    if parse_conf(endpoint.client_files[LOCAL_FILE], LOCAL_FILE).get(PROTOCOL_KEY) != protocol:
        problems.append(
            f"motor_deploy_config.hardware_type: {own}'s {hardware_type} needs the "
            f"MemCache transport {protocol}, but {target}'s LocalService conf uses another; share the store only "
            f"between services on the same hardware family."
        )
    return problems


RENDERER = Renderer(
    build=lambda ctx, store, args: build(ctx, store, args.project_dir), client_ports=client_ports,
    pool_bytes_per_process=pool_bytes_per_process, engine_env_from_output=engine_env_from_output,
    client_files={LOCAL_FILE: local_conf_from_output}, host_paths=lambda: {}, lease_problems=None,
    consumer_problems=consumer_problems,
)
