"""A store owner's `kv_store` output, read by a consumer: data, never code.

The owner's stack output reaches the consumer's engine pods (their env, a ConfigMap of the consumer's namespace,
host mounts). A forged or compromised owner could otherwise put a privileged
container, a hostPath `/`, `LD_PRELOAD` or a ConfigMap key `../../escape` into the consumer's cluster objects. So
the consumer accepts only what the schema allows, and builds everything it renders itself, from the owner's data
fields, with the same functions the owner's backend uses:
- `host`: never taken from the owner: the consumer computes the store Service's name from the backend and its FQDN
  from the owner's namespace, deploy mode and the consumer's own cluster_domain (kvpool/components/kv_store/hosts.py), and
  refuses an output that names another host;
- `engine_env`: exactly the variables the backend sets (service_endpoint and each backend's engine_env), each with
  the value the consumer computes from the owner's host and port;
- `client_files`: exactly the backend's file (mooncake.json, mmc-local.conf), parsed, bounded in size, re-rendered;
- `host_paths`: Yuanrong's socket folder only, at its exact path;
- `standalone_store`: true or false, and true only for Mooncake (the store process then runs in the consumer's
  own engine containers, from the consumer's own user_config.json).
Every refusal names the owner stack and the field of its output.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from kvpool.components.kv_store import memcache, mooncake, yuanrong
from kvpool.components.kv_store.common import STORE_NAME, service_engine_env
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.etcd import client_endpoints
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.workloads import Workloads
from kvpool.internal.units import MAX_PORT, is_dns_label
from kvpool.policies import rules
from kvpool.settings.deploy import DEPLOY_MODES
from kvpool.settings.store import P2P_HANDSHAKE, EtcdConfig, MooncakeStoreConfig
from kvpool.settings.types import CLUSTER_NAME, MAX_CLUSTER_NAME

OUTPUT = "kv_store"
BACKENDS = ("mooncake", "memcache", "yuanrong")
MAX_CLIENT_FILE_BYTES = 64 * 1024


class _Problems(list):
    """Problems with the owner's output, each prefixed with the owner stack and the field."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def add(self, field: str, message: str) -> None:
        self.append(f"{self.target}'s {OUTPUT}.{field}: {message}")


def _is_port(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PORT


def _str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def sanitized_endpoint(
    cluster_domain: str, target: str, output: dict[str, Any]
) -> tuple[KVStoreEndpoint | None, list[str]]:
    """(the endpoint the consumer renders, built from the owner's data fields and the consumer's own `cluster_domain`;
    problems). The endpoint is None when there are problems."""
    problems = _Problems(target)
    backend, port = output.get("backend"), output.get("port")
    if backend not in BACKENDS:
        problems.add("backend", f"{backend!r} is not a store backend ({', '.join(BACKENDS)})")
    for field in ("port", "metrics_port"):
        if not _is_port(output.get(field)):
            problems.add(field, "is not a port number (1-65535)")
    namespace = output.get("namespace")
    if not isinstance(namespace, str) or not is_dns_label(namespace):
        problems.add("namespace", "is not a namespace name")
    for finding in rules.check_system_namespace(namespace, "namespace"):
        problems.add(finding.path, finding.message)
    if output.get("deploy_mode") not in DEPLOY_MODES:
        problems.add("deploy_mode", f"is not a deploy mode ({', '.join(DEPLOY_MODES)})")
    if output.get("stack") != target:
        problems.add("stack", f"is {output.get('stack')!r}, not the stack it was read from")
    cluster = output.get("cluster")
    if not (isinstance(cluster, str) and len(cluster) <= MAX_CLUSTER_NAME and re.fullmatch(CLUSTER_NAME, cluster)):
        problems.add("cluster", "is not a cluster name (one line of letters, digits and -_.:@/)")
    lease = output.get("lease_ttl_ms")
    if lease is not None:  # the owner's default_kv_lease_ttl, held to the owner's own model
        for _, message in _mooncake_settings_problems({"default_kv_lease_ttl": lease}):
            problems.add("lease_ttl_ms", message)
    consumers = output.get("allowed_consumers", [])
    if not isinstance(consumers, list) or not all(isinstance(c, str) for c in consumers):
        problems.add("allowed_consumers", "is not a list of namespace names")
    if not isinstance(output.get("compatibility", {}), dict):
        problems.add("compatibility", "is not a mapping")
    standalone = output.get("standalone_store", False)
    if not isinstance(standalone, bool) or standalone and backend != "mooncake":
        problems.add("standalone_store", f"must be false for a {backend} store, or true or false for a mooncake store")
    if problems:
        return None, list(problems)
    # Where the owner's store is, computed here: in the owner's namespace, in this cluster's domain.
    workloads = Workloads(namespace, output["deploy_mode"], cluster_domain)
    host = store_host(backend, workloads)
    if output.get("host") != host:
        problems.add("host", f"is {output.get('host')!r}, but the {backend} store of namespace {namespace} is "
                             f"{host!r} (its Service in cluster domain {cluster_domain}); a consumer dials "
                             f"no other host")
        return None, list(problems)

    engine_env = _engine_env(problems, backend, host, port, output.get("engine_env"))
    client_files = _client_files(problems, backend, host, port, workloads, output.get("client_files", {}))
    host_paths = _host_paths(problems, backend, output.get("host_paths", {}))
    if problems:
        return None, list(problems)
    return KVStoreEndpoint(
        backend=backend, host=host, port=port, metrics_port=output["metrics_port"], namespace=namespace,
        deploy_mode=output["deploy_mode"], engine_env=engine_env, client_files=client_files, standalone_store=standalone,
        host_paths=host_paths, lease_ttl_ms=lease, allowed_consumers=list(consumers),
        compatibility=dict(output.get("compatibility", {})),
    ), []


def _engine_env(problems: _Problems, backend: str, host: str, port: int, theirs: Any) -> dict[str, str]:
    if backend == "mooncake":
        ours = service_engine_env(host, backend, mooncake.engine_env())
    elif backend == "memcache":
        mode = theirs.get("MMC_LOCAL_SERVICE_MODE") if isinstance(theirs, dict) else None
        if mode not in memcache.LOCAL_SERVICE_MODES:
            problems.add("engine_env.MMC_LOCAL_SERVICE_MODE", f"must be one of {', '.join(memcache.LOCAL_SERVICE_MODES)}")
            mode = memcache.LOCAL_SERVICE_MODES[0]
        ours = service_engine_env(host, backend, memcache.engine_env(mode))
    else:
        ours = yuanrong.engine_env(port)
    if not _str_map(theirs):
        problems.add("engine_env", "is not a mapping of variable names to text")
        return ours
    for name in sorted(set(theirs) - set(ours)):
        problems.add(f"engine_env.{name}", f"is not a variable a {backend} store sets (it sets {', '.join(ours)})")
    for name, value in ours.items():
        if theirs.get(name) != value:
            problems.add(f"engine_env.{name}", f"must be {value!r}, what {OUTPUT}.host and port give")
    return ours


def _client_files(
    problems: _Problems, backend: str, host: str, port: int, workloads: Workloads, theirs: Any
) -> dict[str, str]:
    expected = {"mooncake": [mooncake.CLIENT_FILE], "memcache": [memcache.LOCAL_FILE], "yuanrong": []}[backend]
    if not _str_map(theirs):
        problems.add("client_files", "is not a mapping of file names to text")
        return {}
    for name in sorted(set(theirs) - set(expected)):
        problems.add(f"client_files[{name!a}]", f"is not a client file of a {backend} store "
                                                  f"({', '.join(expected) or 'it has none'})")
    files = {}
    for name in expected:
        text = theirs.get(name)
        where = f"client_files[{name!a}]"
        if text is None:
            problems.add(where, "is missing")
        elif len(text.encode()) > MAX_CLIENT_FILE_BYTES:
            problems.add(where, f"is larger than {MAX_CLIENT_FILE_BYTES // 1024} KiB")
        elif name == mooncake.CLIENT_FILE:
            rendered = _mooncake_json(problems, where, text, host, port, workloads)
            if rendered is not None:
                files[name] = rendered
        else:
            rendered = _mmc_local_conf(problems, where, text, host, port)
            if rendered is not None:
                files[name] = rendered
    return files


def _mooncake_settings_problems(fields: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, message) of each of the owner's Mooncake settings, as its output carries them, that its own settings
    model (MooncakeStoreConfig) refuses: what the owner's stack could never have written is a forgery."""
    try:
        MooncakeStoreConfig.model_validate({"backend": "mooncake", **fields})
    except ValidationError as error:
        return [(".".join(map(str, detail["loc"])), detail["msg"].removeprefix("Value error, "))
                for detail in error.errors()]
    return []


def _master_address_ok(address: Any, host: str, port: int, workloads: Workloads) -> bool:
    """The master Service, or (HA) the etcd members of the owner's store, as the owner's etcd.client_endpoints
    names them: only their number and port come from the owner."""
    if address == f"{host}:{port}":
        return True
    if not isinstance(address, str) or not address.startswith(mooncake.ETCD_SCHEME):
        return False
    endpoints = mooncake.master_endpoints(address)
    number = endpoints[0].rpartition(":")[2]
    try:
        etcd = EtcdConfig(replicas=len(endpoints), port=int(number) if rules.is_decimal(number) else -1)
    except ValidationError:
        return False
    return endpoints == client_endpoints(STORE_NAME, workloads, etcd)


def _mooncake_json(problems: _Problems, where: str, text: str, host: str, port: int, workloads: Workloads) -> str | None:
    try:
        config = json.loads(text)
    except (ValueError, RecursionError):
        problems.add(where, "is not JSON")
        return None
    if not isinstance(config, dict):
        problems.add(where, "is not a JSON object")
        return None
    bad = False
    for key in sorted(set(config) - set(mooncake.CLIENT_CONFIG_KEYS)):
        problems.add(f"{where}.{key}", f"is not a mooncake.json key ({', '.join(mooncake.CLIENT_CONFIG_KEYS)})")
        bad = True
    for key, value in config.items():
        if not isinstance(value, (str, int, float, bool)) or isinstance(value, str) and any(c in value for c in "\n\r\0"):
            problems.add(f"{where}.{key}", "is not a single-line scalar")
            bad = True
    for field, message in _mooncake_settings_problems(
            {key: value for key, value in config.items() if key in mooncake.CLIENT_CONFIG_KEYS and key != "master_server_address"}):
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
    return None if bad else mooncake.render_json(config)


def _mmc_local_conf(problems: _Problems, where: str, text: str, host: str, port: int) -> str | None:
    try:
        entries = memcache.parse_conf(text, where)
    except memcache.LocalServiceConfError as error:
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
    return None if bad else memcache.render_conf(entries)


def _host_paths(problems: _Problems, backend: str, theirs: Any) -> dict[str, dict[str, str]]:
    ours = yuanrong.engine_host_paths() if backend == "yuanrong" else {}
    if theirs != ours:
        allowed = f"exactly {ours}" if ours else f"none for a {backend} store"
        problems.add("host_paths", f"engines mount {allowed}; refusing any other host path")
    return ours
