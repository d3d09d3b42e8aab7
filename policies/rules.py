"""The consistency rules of a KV-pool service, as pure functions over plain data.

One rule, one place: the settings layer (`components.settings`) calls these to fail fast on `pulumi up`,
and the policy pack (`policies/__main__.py`) wraps the same functions for `pulumi preview --policy-pack`.
This module imports nothing from the rest of the project, because `pulumi policy publish` ships only
this folder.

Every rule takes the plain dictionaries of MindIE Motor's `user_config.json` / `env.json` sections and
returns a list of `Finding`s; an empty list means the rule holds. Sources are cited per rule.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

SIDES = ("prefill", "decode")
ROLE_BY_SIDE = {"prefill": "kv_producer", "decode": "kv_consumer"}
STORE_CONNECTOR = "AscendStoreConnector"
UCM_CONNECTOR = "UCMConnector"
MULTI_CONNECTOR = "MultiConnector"
HYBRID_CONNECTOR = "MooncakeHybridConnector"
# Motor's P/D dispatch whitelist (docs/zh/design/pd_disaggregation.md, motor-deployer.md §1.8).
DISPATCH_CONNECTORS = ("MooncakeConnectorV1", HYBRID_CONNECTOR, "MooncakeLayerwiseConnector", "NixlConnector")

# vllm-ascend's Mooncake P2P connectors set ASCEND_TRANSFER_TIMEOUT process-wide to
# 4.096 us * 2**HCCL_RDMA_TIMEOUT * HCCL_RDMA_RETRY_CNT + 3000 ms when the variable is unset
# (vllm_ascend/distributed/kv_transfer/utils/utils.py, get_transfer_timeout_value).
HCCL_RDMA_TIMEOUT_DEFAULT = 20
HCCL_RDMA_RETRY_CNT_DEFAULT = 7
# Mooncake's ascend_direct transport default when ASCEND_CONNECT_TIMEOUT is unset
# (Mooncake docs/source/design/transfer-engine/ascend_direct_transport.md).
ASCEND_CONNECT_TIMEOUT_DEFAULT_MS = 3000
# mooncake_master's default lease when the seed's config omits default_kv_lease_ttl (seed 000 table).
MOONCAKE_LEASE_TTL_DEFAULT_MS = 11000
DEFAULT_BACKEND = "memcache"  # seed 000: kv_cache_store_config without backend
DEFAULT_DSHM_SIZE = "4Gi"  # deploy.py's /dev/shm for engines
MOTOR_MAX_INSTANCES = 16  # deploy.py INSTANCE_NUM_MAX


# Kubernetes resource quantities as deploy.py accepts them for storage sizes and /dev/shm: a number with a
# binary or decimal suffix. Bare numbers are refused (deploy.py's storage validation does the same).
K8S_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$")
_K8S_FACTORS = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}

# Mooncake sizes as vllm-ascend parses them in mooncake.json: "1GB", "512MB", "64KB", "10B" (binary multiples).
MOONCAKE_SIZE = re.compile(r"^[0-9]+(\.[0-9]+)?\s*(GB|MB|KB|B)$", re.IGNORECASE)
_MOONCAKE_FACTORS = {"GB": 2**30, "MB": 2**20, "KB": 2**10, "B": 1}

def k8s_quantity_bytes(quantity: str) -> int:
    match = K8S_QUANTITY.match(quantity)
    if not match:
        raise ValueError(f"{quantity!r} is not a size with a unit such as 4Gi or 512Mi")
    return int(float(quantity[: match.start(2)]) * _K8S_FACTORS[match.group(2)])


def mooncake_size_bytes(size: str | int) -> int:
    if isinstance(size, int) and size >= 0 or isinstance(size, str) and size.isdigit():  # bytes, also as env text
        return int(size)
    if not isinstance(size, str):
        raise ValueError(f"{size!r} is not a size such as 1GB, 512MB or a number of bytes")
    match = MOONCAKE_SIZE.match(size)
    if not match:
        raise ValueError(f"{size!r} is not a size such as 1GB, 512MB or a number of bytes")
    return int(float(size[: match.start(2)]) * _MOONCAKE_FACTORS[match.group(2).upper()])



@dataclass(frozen=True)
class Finding:
    """One broken rule: the dotted path of the field to edit and what to write there."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def engine_section(side: str) -> str:
    return f"motor_engine_{side}_config"


def engine_env_section(side: str) -> str:
    return f"motor_engine_{side}_env"


def _kv_transfer_path(side: str) -> str:
    return f"{engine_section(side)}.engine_config.kv_transfer_config"


def connectors_of(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(path suffix, connector) for every connector of one side: the MultiConnector's list, or the single one.
    Data of the wrong shape holds no connectors here; the settings model names the field."""
    if not kv_transfer_config or not isinstance(kv_transfer_config, Mapping):
        return []
    if kv_transfer_config.get("kv_connector") == MULTI_CONNECTOR:
        extra = kv_transfer_config.get("kv_connector_extra_config") or {}
        listed = extra.get("connectors") if isinstance(extra, Mapping) else None
        listed = listed if isinstance(listed, Sequence) and not isinstance(listed, str) else []
        return [
            (f".kv_connector_extra_config.connectors[{index}]", connector)
            for index, connector in enumerate(listed)
            if isinstance(connector, Mapping)
        ]
    return [("", kv_transfer_config)]


def store_connector_backends(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, str | None]]:
    """(path, backend or None when omitted) of every AscendStoreConnector of one side."""
    found = []
    for suffix, connector in connectors_of(kv_transfer_config):
        if connector.get("kv_connector") == STORE_CONNECTOR:
            extra = connector.get("kv_connector_extra_config") or {}
            found.append((f"{suffix}.kv_connector_extra_config.backend", extra.get("backend")))
    return found


def kv_transfer_configs(user_config: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """Each side's kv_transfer_config from a user_config.json."""
    return {
        side: ((user_config.get(engine_section(side)) or {}).get("engine_config") or {}).get("kv_transfer_config")
        for side in SIDES
    }


def uses_pool(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> bool:
    """Whether any engine reads and writes the shared pool (an AscendStoreConnector), not just the P/D transfer."""
    return any(store_connector_backends(kv_transfer_configs.get(side)) for side in SIDES)


def engine_envs(env: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What each side's engines run with: motor_common_env under the side's own section (env.json's layering)."""
    common = env.get("motor_common_env") or {}
    return {side: {**common, **(env.get(engine_env_section(side)) or {})} for side in SIDES}


def check_backend_consistency(
    store_backend: str, kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]
) -> list[Finding]:
    """Every AscendStoreConnector backend equals kv_cache_store_config.backend (seed 000, FAQ 5)."""
    findings = []
    for side in SIDES:
        for suffix, backend in store_connector_backends(kv_transfer_configs.get(side)):
            if backend is not None and backend != store_backend:
                findings.append(
                    Finding(
                        _kv_transfer_path(side) + suffix,
                        f"is {backend!r} but kv_cache_store_config.backend is {store_backend!r}; the two must be "
                        f"equal (seed FAQ 5: changing only one leaves the engines on the wrong pool). Set both to "
                        f"the backend you run.",
                    )
                )
    return findings


def check_referenced_backend(store_backend: str, stack: str, referenced_backend: Any) -> list[Finding]:
    """The store of another stack (target_stack) runs the backend this service's config says (seed FAQ 5)."""
    if referenced_backend == store_backend:
        return []
    return [Finding(
        "kv_cache_store_config.backend",
        f"is {store_backend!r} but the store of {stack} (target_stack) runs {referenced_backend!r}; write "
        f"backend: {referenced_backend} and the same in every AscendStoreConnector.",
    )]


def check_mooncake_eviction(store: Mapping[str, Any]) -> list[Finding]:
    """mooncake_master needs both eviction ratios; deploy.py refuses to start without them (seed 000)."""
    if store.get("backend") != "mooncake":
        return []
    findings = []
    high = store.get("eviction_high_watermark_ratio")
    ratio = store.get("eviction_ratio")
    if high is None:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_high_watermark_ratio",
                "is required for backend 'mooncake' (the pool usage at which mooncake_master starts evicting); "
                "set a value in (0, 1], e.g. 0.7 (the seed suggests 0.9, which let only 33-59% of a fast writer's "
                "puts through on the real master).",
            )
        )
    elif not 0 < high <= 1:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_high_watermark_ratio",
                f"is {high}; it must be in (0, 1] (a fraction of the pool), e.g. 0.7.",
            )
        )
    if ratio is None:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_ratio",
                "is required for backend 'mooncake' (the fraction of the pool freed per eviction); set a value "
                "in [0, 1], e.g. 0.2 (the seed suggests 0.1).",
            )
        )
    elif not 0 <= ratio <= 1:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_ratio",
                f"is {ratio}; mooncake_master exits unless 0 <= eviction_ratio <= 1; use e.g. 0.2.",
            )
        )
    return findings


def _env_int(env: Mapping[str, Any], name: str) -> int | None:
    value = env.get(name)
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def effective_transfer_timeout_ms(env: Mapping[str, Any]) -> int:
    """ASCEND_TRANSFER_TIMEOUT as vllm-ascend applies it: the env value, else its HCCL-derived default."""
    explicit = _env_int(env, "ASCEND_TRANSFER_TIMEOUT")
    if explicit is not None:
        return explicit
    rdma_timeout = _env_int(env, "HCCL_RDMA_TIMEOUT") or HCCL_RDMA_TIMEOUT_DEFAULT
    retry_count = _env_int(env, "HCCL_RDMA_RETRY_CNT") or HCCL_RDMA_RETRY_CNT_DEFAULT
    return int(4.096 * 2**rdma_timeout * retry_count // 1000 + 3000)


def effective_connect_timeout_ms(env: Mapping[str, Any]) -> int:
    explicit = _env_int(env, "ASCEND_CONNECT_TIMEOUT")
    return ASCEND_CONNECT_TIMEOUT_DEFAULT_MS if explicit is None else explicit


def check_lease_exceeds_timeouts(
    store: Mapping[str, Any],
    engines: Mapping[str, Mapping[str, Any]],
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None],
) -> list[Finding]:
    """default_kv_lease_ttl must exceed ASCEND_CONNECT_TIMEOUT and ASCEND_TRANSFER_TIMEOUT of both sides
    (seed 000 table and FAQ 3: otherwise decode reads objects whose lease has already expired).
    Applies when engines use the Mooncake pool (an AscendStoreConnector); a master that only serves
    the P/D transfer (the UCM example) holds no leased objects."""
    if store.get("backend") != "mooncake" or not uses_pool(kv_transfer_configs):
        return []
    lease = store.get("default_kv_lease_ttl")
    lease = MOONCAKE_LEASE_TTL_DEFAULT_MS if lease is None else lease
    findings = []
    for side in SIDES:
        env = engines.get(side) or {}
        for name, effective in (
            ("ASCEND_CONNECT_TIMEOUT", effective_connect_timeout_ms(env)),
            ("ASCEND_TRANSFER_TIMEOUT", effective_transfer_timeout_ms(env)),
        ):
            if lease > effective:
                continue
            origin = "" if _env_int(env, name) is not None else "unset, so vllm-ascend uses "
            findings.append(
                Finding(
                    "kv_cache_store_config.default_kv_lease_ttl",
                    f"is {lease} ms but env.{engine_env_section(side)}.{name} is {origin}{effective} ms; "
                    f"the lease must be longer than the timeout (seed FAQ 3). Set {name} below {lease} "
                    f"(e.g. {_suggested_timeout(lease)}) in env.{engine_env_section(side)}, or raise default_kv_lease_ttl above "
                    f"{effective}.",
                )
            )
    return findings


def _suggested_timeout(lease_ms: int) -> int:
    """A timeout one second under the lease (10000 for the default 11000), or half of a very short lease."""
    return lease_ms - 1000 if lease_ms > 2000 else lease_ms // 2


def check_kv_role_by_side(side: str, kv_transfer_config: Mapping[str, Any] | None) -> list[Finding]:
    """Prefill produces KV, decode consumes it (seed 000, FAQ 1); UCMConnector is always kv_both."""
    if not kv_transfer_config:
        return []
    expected = ROLE_BY_SIDE[side]
    base = _kv_transfer_path(side)
    findings = []
    role = kv_transfer_config.get("kv_role")
    if role is not None and role != expected:
        findings.append(Finding(f"{base}.kv_role", _role_message(side, role, expected)))
    if kv_transfer_config.get("kv_connector") != MULTI_CONNECTOR:
        return findings
    for suffix, connector in connectors_of(kv_transfer_config):
        role = connector.get("kv_role")
        wanted = "kv_both" if connector.get("kv_connector") == UCM_CONNECTOR else expected
        if role is not None and role != wanted:
            findings.append(Finding(f"{base}{suffix}.kv_role", _role_message(side, role, wanted)))
    return findings


def _role_message(side: str, role: str, wanted: str) -> str:
    reason = "UCMConnector always runs as kv_both" if wanted == "kv_both" else f"the {side} side is {wanted}"
    return (
        f"is {role!r} but {reason} (seed FAQ 1: a wrong kv_role stops KV transfer between P and D). "
        f"Write {wanted!r} or leave kv_role out and it is filled in."
    )


def _transfer_connector(kv_transfer_config: Mapping[str, Any] | None) -> tuple[str, Mapping[str, Any]] | None:
    """(path suffix, connector) of the P/D transfer connector: connectors[0], or the single connector."""
    entries = connectors_of(kv_transfer_config)
    return entries[0] if entries else None


def check_ucm_placement(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """UCMConnector only on prefill, only as connectors[1] of a MultiConnector (seed 000 UCM section; Motor
    refuses it at connectors[0] and as a bare connector); decode never loads UCM."""
    findings = []
    for side in SIDES:
        config = kv_transfer_configs.get(side)
        for position, (suffix, connector) in enumerate(connectors_of(config)):
            if connector.get("kv_connector") != UCM_CONNECTOR:
                continue
            path = _kv_transfer_path(side) + suffix + ".kv_connector"
            if side == "decode":
                findings.append(Finding(path, "UCMConnector on decode: in Motor's P/D scheme decode never loads UCM "
                                              "(seed 000); remove it and keep only the transfer connector."))
            elif config.get("kv_connector") != MULTI_CONNECTOR or position != 1:
                findings.append(Finding(path, "UCMConnector must be connectors[1] of a MultiConnector whose "
                                              "connectors[0] is the Mooncake transfer connector (seed 000)."))
    return findings


def ucm_store_configs(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, ucm_connector_config) of every UCM store of one side's UCMConnector."""
    found = []
    for suffix, connector in connectors_of(kv_transfer_config):
        if connector.get("kv_connector") != UCM_CONNECTOR:
            continue
        extra = connector.get("kv_connector_extra_config") or {}
        for index, store in enumerate(extra.get("ucm_connectors") or []):
            if isinstance(store, Mapping):
                path = f"{suffix}.kv_connector_extra_config.ucm_connectors[{index}].ucm_connector_config"
                found.append((path, store.get("ucm_connector_config") or {}))
    return found


def check_ucm_storage(
    prefill_kv: Mapping[str, Any] | None, storage: list[Mapping[str, Any]], dshm_size: str
) -> list[Finding]:
    """UCM's Posix tier writes to storage_backends, which must be a mounted storage[] volume; its Cache tier
    lives in /dev/shm, which must be larger; the Posix budget must fit the volume (motor-deployer.md §4)."""
    findings = []
    mounts = {entry.get("mount_path"): entry for entry in storage if entry.get("enable", True)}
    for suffix, config in ucm_store_configs(prefill_kv):
        path = _kv_transfer_path("prefill") + suffix
        backends = [part for part in str(config.get("storage_backends", "")).split(":") if part]
        for backend in backends:
            if backend not in mounts:
                known = ", ".join(sorted(str(m) for m in mounts)) or "none"
                findings.append(Finding(
                    f"{path}.storage_backends",
                    f"{backend!r} is not the mount_path of a motor_deploy_config.storage entry (mounted: {known}); "
                    f"UCM would write into the container's own filesystem. Add a storage entry with mount_path "
                    f"{backend!r} or point storage_backends at one.",
                ))
        cache_gb = config.get("cache_buffer_capacity_gb")
        if isinstance(cache_gb, (int, float)) and k8s_quantity_bytes(dshm_size) <= cache_gb * 2**30:
            findings.append(Finding(
                "motor_deploy_config.dshm_size",
                f"is {dshm_size} but UCM's cache_buffer_capacity_gb is {cache_gb} GiB and lives in /dev/shm; "
                f"set dshm_size above it, e.g. {math.ceil(cache_gb * 1.25) + 1}Gi.",
            ))
        posix_gb = config.get("posix_capacity_gb")
        sizes = [mounts[b].get("size") for b in backends if b in mounts and mounts[b].get("size")]
        for size in sizes:
            if isinstance(posix_gb, (int, float)) and posix_gb * 2**30 >= k8s_quantity_bytes(size):
                findings.append(Finding(
                    f"{path}.posix_capacity_gb",
                    f"is {posix_gb} GiB but the volume it writes to is {size}; keep it below the volume size "
                    f"so UCM's garbage collection runs before the volume is full.",
                ))
    return findings


def check_hybrid_attention_connector(
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], hybrid_attention: Mapping[str, bool]
) -> list[Finding]:
    """Hybrid-attention models need MooncakeHybridConnector for P/D transfer (seed 000, FAQ 7: otherwise decode
    crashes and restarts during inference)."""
    findings = []
    for side in SIDES:
        transfer = _transfer_connector(kv_transfer_configs.get(side))
        if not hybrid_attention.get(side) or transfer is None:
            continue
        suffix, connector = transfer
        if connector.get("kv_connector") != HYBRID_CONNECTOR:
            findings.append(Finding(
                _kv_transfer_path(side) + suffix + ".kv_connector",
                f"is {connector.get('kv_connector')!r} but the model uses hybrid attention; write "
                f"{HYBRID_CONNECTOR!r} (seed FAQ 7: decode crashes and restarts otherwise).",
            ))
    return findings


def check_dispatch_connector(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """connectors[0] must be a connector Motor knows how to dispatch P/D with, unless dispatch_profile is set,
    and then identically on both sides (motor-deployer.md §1.8: unknown connectors fail closed)."""
    profiles = {side: (kv_transfer_configs.get(side) or {}).get("dispatch_profile") for side in SIDES}
    findings = []
    if profiles["prefill"] != profiles["decode"]:
        findings.append(Finding(
            _kv_transfer_path("decode") + ".dispatch_profile",
            f"is {profiles['decode']!r} but prefill has {profiles['prefill']!r}; Motor needs the same "
            f"dispatch_profile on both sides.",
        ))
    for side in SIDES:
        transfer = _transfer_connector(kv_transfer_configs.get(side))
        if transfer is None or profiles[side] is not None:
            continue
        suffix, connector = transfer
        if connector.get("kv_connector") not in DISPATCH_CONNECTORS:
            findings.append(Finding(
                _kv_transfer_path(side) + suffix + ".kv_connector",
                f"{connector.get('kv_connector')!r} is not in Motor's P/D dispatch whitelist "
                f"({', '.join(DISPATCH_CONNECTORS)}), so Motor refuses to dispatch; use one of them, or set "
                f"dispatch_profile (handoff or trigger) on both sides.",
            ))
    return findings


def check_layerwise_pool_backend(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], store_backend: str) -> list[Finding]:
    """use_layerwise on AscendStoreConnector is MemCache-only (vllm-ascend layerwise_kv_pool.md)."""
    findings = []
    for side in SIDES:
        for suffix, connector in connectors_of(kv_transfer_configs.get(side)):
            extra = connector.get("kv_connector_extra_config") or {}
            if connector.get("kv_connector") == STORE_CONNECTOR and extra.get("use_layerwise") and store_backend != "memcache":
                findings.append(Finding(
                    _kv_transfer_path(side) + suffix + ".kv_connector_extra_config.use_layerwise",
                    f"the layerwise KV pool works only with backend 'memcache' (vllm-ascend layerwise_kv_pool), "
                    f"not {store_backend!r}; remove use_layerwise here or switch the store to memcache.",
                ))
    return findings


def check_hash_seed(
    engines: Mapping[str, Mapping[str, Any]], kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]
) -> list[Finding]:
    """PYTHONHASHSEED set and equal on every engine that uses the pool: block hashes differ otherwise and every
    pool lookup misses (vllm-ascend kv_pool.md; the silent failure users report most)."""
    if not uses_pool(kv_transfer_configs):
        return []
    seeds = {side: (engines.get(side) or {}).get("PYTHONHASHSEED") for side in SIDES}
    findings = []
    for side, seed in seeds.items():
        if seed is None or str(seed) == "random":
            findings.append(Finding(
                f"env.{engine_env_section(side)}.PYTHONHASHSEED",
                "is unset or random: each engine would hash KV blocks differently and every pool lookup would "
                "miss; set the same fixed value (e.g. \"0\") on every engine.",
            ))
    if None not in seeds.values() and len({str(seed) for seed in seeds.values()}) > 1:
        findings.append(Finding(
            f"env.{engine_env_section('decode')}.PYTHONHASHSEED",
            f"is {seeds['decode']!r} but prefill uses {seeds['prefill']!r}; pool lookups only hit with one seed "
            f"on every engine.",
        ))
    return findings


# --- KV-cache affinity scheduling: Motor's KV conductor ----------------------------------------------------
# Motor 8919e55: the coordinator's scheduler_type kv_cache_affinity queries the conductor named by KV_CONDUCTOR_SERVICE
# (deployed for user_config.json's kv_conductor_config); the coordinator registers each prefill DP rank's
# kv-events-config endpoint with it (motor/coordinator/api_client/conductor_api_client.py), and the conductor
# subscribes to those endpoints; vLLM's publisher binds them, one port per DP rank (port + rank).

KV_CACHE_AFFINITY = "kv_cache_affinity"
KV_EVENTS_CONFIG = "kv-events-config"  # Motor's coordinator reads this spelling only (motor/config/config_utils.py)
CONDUCTOR_POOL_BACKEND = "mooncake"  # kvevent_instance knows mooncake_master only (mooncake_config.py conductor)
MOTOR_DEFAULT_BLOCK_SIZE = 128  # what the coordinator registers and queries with when engine_config has no block-size
_KV_EVENT_ENDPOINT = re.compile(r"^tcp://\*:([0-9]{1,5})$")
_PREFILL_ENGINE = "motor_engine_prefill_config.engine_config"
_PREFIX_CACHING_OFF = {("enable-prefix-caching", False), ("enable_prefix_caching", False),
                       ("no-enable-prefix-caching", True), ("no_enable_prefix_caching", True)}


def _engine_config(user_config: Mapping[str, Any], side: str) -> Mapping[str, Any]:
    section = user_config.get(engine_section(side))
    engine = section.get("engine_config") if isinstance(section, Mapping) else None
    return engine if isinstance(engine, Mapping) else {}


def kv_event_port(endpoint: Any) -> int | None:
    """The base port of a kv-events-config endpoint in the only form Motor's coordinator registers (tcp://*:<port>)."""
    match = _KV_EVENT_ENDPOINT.match(endpoint) if isinstance(endpoint, str) else None
    return int(match.group(1)) if match and 1 <= int(match.group(1)) <= 65535 else None


def _positive(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def kv_event_ports(user_config: Mapping[str, Any]) -> dict[str, range]:
    """Field path -> the ports a prefill pod's vLLM publisher binds for it (one per DP rank: port + rank)."""
    engine = _engine_config(user_config, "prefill")
    events = engine.get(KV_EVENTS_CONFIG)
    if not isinstance(events, Mapping):
        return {}
    ranks = _positive(engine.get("data_parallel_size"))
    ports = {}
    for key in ("endpoint", "replay_endpoint"):
        port = kv_event_port(events.get(key))
        if port is not None:
            ports[f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}.{key}"] = range(port, port + ranks)
    return ports


def check_kv_cache_affinity(user_config: Mapping[str, Any]) -> list[Finding]:
    """kv_cache_affinity has a conductor; a conductor has what it indexes: prefill KV events in the form Motor's
    coordinator registers, prefix caching (vLLM publishes block events from its prefix cache), the block size the
    coordinator reads, and, when it also follows the pool's master, a Mooncake pool."""
    coordinator = user_config.get("motor_coordinator_config")
    scheduler = coordinator.get("scheduler_config") if isinstance(coordinator, Mapping) else None
    scheduler_type = scheduler.get("scheduler_type") if isinstance(scheduler, Mapping) else None
    conductor = user_config.get("kv_conductor_config")
    findings = []
    if scheduler_type == KV_CACHE_AFFINITY and not conductor:
        findings.append(Finding(
            "motor_coordinator_config.scheduler_config.scheduler_type",
            "is kv_cache_affinity but kv_conductor_config is not set: no conductor is deployed, the coordinator gets "
            "no KV_CONDUCTOR_SERVICE and routes by load alone (Motor logs a fallback per request); add "
            "kv_conductor_config (e.g. http_server_port: 13333) or choose another scheduler_type.",
        ))
    if not isinstance(conductor, Mapping) or not conductor:
        return findings
    engine = _engine_config(user_config, "prefill")
    events = engine.get(KV_EVENTS_CONFIG)
    if not isinstance(events, Mapping):
        if "kv_events_config" in engine:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.kv_events_config",
                f"Motor's coordinator reads {KV_EVENTS_CONFIG} (with hyphens) only and would register no prefill "
                f"endpoint with the conductor; write {KV_EVENTS_CONFIG}.",
            ))
        else:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}",
                "is missing: kv_conductor_config deploys the conductor, but the prefill engines publish no KV events "
                "for it to index; add kv-events-config {publisher: zmq, enable_kv_cache_events: true, endpoint: "
                "\"tcp://*:5557\", topic: kv-events}.",
            ))
    else:
        where = f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}"
        if events.get("publisher") != "zmq":
            findings.append(Finding(f"{where}.publisher", f"is {events.get('publisher')!r}; the conductor subscribes "
                                    "with ZeroMQ: write zmq."))
        if events.get("enable_kv_cache_events") is not True:
            findings.append(Finding(f"{where}.enable_kv_cache_events", "must be true, or vLLM publishes nothing for "
                                    "the conductor to index."))
        for key in ("endpoint", "replay_endpoint"):
            value = events.get(key)
            if (key == "endpoint" or value not in (None, "")) and kv_event_port(value) is None:
                findings.append(Finding(
                    f"{where}.{key}",
                    f"is {value!r}; Motor's coordinator registers tcp://<pod IP>:<port + DP rank> by splitting it at "
                    "'*:' (conductor_api_client.py) and registers nothing for any other form: write tcp://*:<port>.",
                ))
    for key, value in engine.items():
        if isinstance(value, bool) and (key, value) in _PREFIX_CACHING_OFF:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.{key}",
                "turns prefix caching off: vLLM publishes KV block events from its prefix cache only, so the "
                "conductor would index nothing; remove it.",
            ))
    written = engine.get("block_size")
    if "block-size" not in engine and written is not None and written != MOTOR_DEFAULT_BLOCK_SIZE:
        findings.append(Finding(
            f"{_PREFILL_ENGINE}.block_size",
            f"is {written!r}, but Motor's coordinator reads block-size (with a hyphen) only and registers and "
            f"queries the conductor with {MOTOR_DEFAULT_BLOCK_SIZE}-token blocks: every query would miss; write "
            f"block-size: {written!r}.",
        ))
    instance = conductor.get("kvevent_instance")
    if instance:
        store = user_config.get("kv_cache_store_config")
        backend = store.get("backend", DEFAULT_BACKEND) if isinstance(store, Mapping) and store else None
        if backend is None:
            findings.append(Finding(
                "kv_conductor_config.kvevent_instance",
                "follows the pool's Mooncake master, but the service has no kv_cache_store_config: Motor's "
                "mooncake_config.py writes no conductor config without one; add a Mooncake store or remove "
                "kvevent_instance.",
            ))
        elif backend != CONDUCTOR_POOL_BACKEND:
            findings.append(Finding(
                "kv_conductor_config.kvevent_instance.mooncake_master",
                f"points the conductor at the pool's master as a Mooncake event source, but kv_cache_store_config."
                f"backend is {backend!r}: Motor's conductor config knows a Mooncake master only and would dial the "
                f"{backend} server's port; remove kvevent_instance (the conductor still indexes the engines' events) "
                f"or use backend: mooncake.",
            ))
    return findings


def _transfer_port_ranges(user_config: Mapping[str, Any]) -> list[tuple[str, range, str]]:
    """Other ports every prefill pod binds that the configuration names: the transfer connectors' kv_port (vllm-ascend's
    Mooncake connectors bind kv_port + DP rank x TP x PP + device index), vLLM's DP RPC and API ports, and a
    standalone Mooncake store's HTTP port."""
    engine = _engine_config(user_config, "prefill")
    devices = (_positive(engine.get("data_parallel_size")) * _positive(engine.get("tensor_parallel_size"))
               * _positive(engine.get("pipeline_parallel_size")))
    found = []
    path = _kv_transfer_path("prefill")
    for suffix, connector in connectors_of(engine.get("kv_transfer_config")):
        port = connector.get("kv_port")
        if isinstance(port, str) and port.isdigit():
            port = int(port)
        if isinstance(port, int) and not isinstance(port, bool):
            found.append((f"{path}{suffix}.kv_port", range(port, port + devices), "the KV transfer ports"))
    for key in ("data_parallel_rpc_port", "data-parallel-rpc-port", "port"):
        value = engine.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            found.append((f"{_PREFILL_ENGINE}.{key}", range(value, value + 1), "a vLLM port"))
    store = user_config.get("kv_cache_store_config")
    if isinstance(store, Mapping) and store.get("backend") == "mooncake" and store.get("store_mode") == "standalone":
        http = store.get("store_http_port")
        if isinstance(http, int) and not isinstance(http, bool) and http > 0:
            found.append(("kv_cache_store_config.store_http_port", range(http, http + 1),
                          "the standalone Mooncake store's HTTP port"))
    return found


def _ports_text(ports: range) -> str:
    return str(ports.start) if len(ports) == 1 else f"{ports.start}-{ports.stop - 1}"


def check_kv_event_ports(user_config: Mapping[str, Any]) -> list[Finding]:
    """The KV-event ports of a prefill pod (endpoint and replay_endpoint, one per DP rank) collide with no other port
    of the pod: the second process to bind one fails to start."""
    if not user_config.get("kv_conductor_config"):
        return []
    events = list(kv_event_ports(user_config).items())
    findings = []
    for index, (path, ports) in enumerate(events):
        others = [(other, taken, "the other KV-event endpoint") for other, taken in events[:index]]
        others += _transfer_port_ranges(user_config)
        for other, taken, what in others:
            common = sorted(set(ports) & set(taken))
            if common:
                findings.append(Finding(
                    path,
                    f"binds port{'s' if len(ports) > 1 else ''} {_ports_text(ports)} (one per DP rank) in every prefill "
                    f"pod, and {other} ({what}) takes {_ports_text(taken)} there too (port {common[0]}): one of them "
                    f"fails to bind; choose ports apart.",
                ))
    return findings


def check_service(
    user_config: Mapping[str, Any],
    env: Mapping[str, Any],
    hybrid_attention: Mapping[str, bool] | None = None,
    owns_store: bool = True,
) -> list[Finding]:
    """Every mandatory rule over one service's effective user_config.json and env.json. `owns_store` False: the
    store is another stack's, so its server-side settings (eviction, lease, segment) are that stack's to check."""
    kv = kv_transfer_configs(user_config)
    engines = engine_envs(env)
    deploy = user_config.get("motor_deploy_config") or {}
    findings: list[Finding] = []
    for side in SIDES:
        findings += check_kv_role_by_side(side, kv[side])
    findings += check_ucm_placement(kv)
    findings += check_ucm_storage(kv["prefill"], deploy.get("storage") or [], deploy.get("dshm_size", DEFAULT_DSHM_SIZE))
    findings += check_hybrid_attention_connector(kv, hybrid_attention or {})
    findings += check_dispatch_connector(kv)
    findings += check_hash_seed(engines, kv)
    findings += check_instance_counts(deploy)
    findings += check_deploy_host_paths(deploy)
    findings += check_system_namespace(deploy.get("job_id"), "motor_deploy_config.job_id")
    store = user_config.get("kv_cache_store_config")
    if store:
        backend = store.get("backend", DEFAULT_BACKEND)
        findings += check_backend_consistency(backend, kv)
        findings += check_layerwise_pool_backend(kv, backend)
        findings += check_not_ucm_store_backend(store, kv)
        if owns_store:
            findings += check_mooncake_eviction(store)
            findings += check_lease_exceeds_timeouts(store, engines, kv)
            findings += check_fabric_segment_alignment(store, engines)
    findings += check_kv_cache_affinity(user_config)
    findings += check_kv_event_ports(user_config)
    return findings


# --- rules the policy pack adds on top of the settings layer's ----------------------------------------------

LAYERWISE_PATCH_FIXED_IN = (0, 17, 0, "rc", 2)
# Measured on the real mooncake_master, writers filling 3x a 64 MB pool back to back, 0.9/0.1 against 0.7/0.2:
# 53-59% vs 93-100% of puts through (reference/research/backends.md); a faster writer 33-47% vs 47-88%, a paced
# one 85-100% vs 100% (tests/live, bench/mooncake_capacity.py). The thresholds default to the second setting.
SUSTAINABLE_HIGH_WATERMARK = 0.7
SUSTAINABLE_EVICTION_RATIO = 0.2


def check_instance_counts(deploy: Mapping[str, Any]) -> list[Finding]:
    """deploy.py refuses instance counts outside 1..16 (INSTANCE_NUM_MAX)."""
    findings = []
    for key in ("p_instances_num", "d_instances_num"):
        count = deploy.get(key, 1)
        if not isinstance(count, int) or not 1 <= count <= MOTOR_MAX_INSTANCES:
            findings.append(Finding(
                f"motor_deploy_config.{key}",
                f"is {count!r}; Motor supports 1 to {MOTOR_MAX_INSTANCES} instances per role.",
            ))
    return findings


def check_mooncake_eviction_headroom(
    store: Mapping[str, Any],
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None],
    max_high_watermark: float = SUSTAINABLE_HIGH_WATERMARK,
    min_eviction_ratio: float = SUSTAINABLE_EVICTION_RATIO,
) -> list[Finding]:
    """Eviction settings that leave a sustained writer too little room: mooncake_master evicts asynchronously
    (about every 10 ms), so a fast writer outruns it when the watermark is high and each eviction small. A master
    that only serves the P/D transfer (the UCM example) holds no pool objects to evict."""
    if store.get("backend") != "mooncake" or not uses_pool(kv_transfer_configs):
        return []
    high, ratio = store.get("eviction_high_watermark_ratio"), store.get("eviction_ratio")
    if high is None or ratio is None or (high <= max_high_watermark and ratio >= min_eviction_ratio):
        return []
    return [Finding(
        "kv_cache_store_config.eviction_high_watermark_ratio",
        f"{high}/{ratio} (watermark/eviction ratio) leaves little headroom: on the real mooncake_master, writers "
        f"filling 3x the pool back to back got 33-59% of their puts through at 0.9/0.1 against 47-100% at 0.7/0.2 "
        f"(the faster the writer, the lower; reference/research/backends.md, tests/live; llm-d users report the "
        f"same). Use at most {max_high_watermark} and at least {min_eviction_ratio}, or pace the writers.",
    )]


def parse_version(text: str) -> tuple[int, int, int, str, int] | None:
    """'v0.17.0rc2' -> (0, 17, 0, 'rc', 2); a final release sorts after its release candidates."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?(?:\.post\d+)?", text.strip())
    if not match:
        return None
    major, minor, patch, rc = match.groups()
    return (int(major), int(minor), int(patch), "rc" if rc else "~", int(rc or 0))


def check_layerwise_pool_patch(
    vllm_ascend_version: str | None, kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]
) -> list[Finding]:
    """vllm-ascend before v0.17.0rc2 needs Motor's vllm_multi_connector.patch for layerwise transfer plus a pool
    (seed 001: otherwise inference is wrong)."""
    if not vllm_ascend_version:
        return []
    version = parse_version(vllm_ascend_version)
    if version is None:
        return [Finding("vllm_ascend_version", f"{vllm_ascend_version!r} is not a version such as v0.17.0rc2.")]
    if version >= LAYERWISE_PATCH_FIXED_IN:
        return []
    findings = []
    for side in SIDES:
        config = kv_transfer_configs.get(side) or {}
        transfer = _transfer_connector(config)
        layerwise = transfer is not None and transfer[1].get("kv_connector") == "MooncakeLayerwiseConnector"
        if layerwise and store_connector_backends(config):
            findings.append(Finding(
                _kv_transfer_path(side),
                f"layerwise transfer with a KV pool on vllm-ascend {vllm_ascend_version} (before v0.17.0rc2) "
                f"needs Motor's vllm_multi_connector.patch (seed 001); apply it in the image or upgrade.",
            ))
    return findings


def check_not_ucm_store_backend(store: Mapping[str, Any] | None, kv_transfer_configs: Mapping[str, Any]) -> list[Finding]:
    """UCM is not a store backend: it comes in through UCMConnector (seed 000, FAQ 6)."""
    findings = []
    if store and store.get("backend") == "ucm":
        findings.append(Finding("kv_cache_store_config.backend", UCM_BACKEND_MESSAGE))
    for side in SIDES:
        for suffix, backend in store_connector_backends(kv_transfer_configs.get(side)):
            if backend == "ucm":
                findings.append(Finding(_kv_transfer_path(side) + suffix, UCM_BACKEND_MESSAGE))
    return findings


UCM_BACKEND_MESSAGE = (
    "is 'ucm', but UCM is not a KV store backend: configure UCMConnector as connectors[1] of prefill (its "
    "store_pipeline and storage_backends say where prefixes go), and keep kv_cache_store_config.backend at "
    "mooncake for the P/D transfer (seed FAQ 6)."
)


def check_fabric_segment_alignment(store: Mapping[str, Any], engines: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """With ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3), Mooncake segments must be whole GiB (vllm-ascend kv_pool.md)."""
    if store.get("backend") != "mooncake":
        return []
    fabric = any(str((engines.get(side) or {}).get("ASCEND_ENABLE_USE_FABRIC_MEM")) == "1" for side in SIDES)
    size = store.get("global_segment_size", "1GB")
    if not fabric or mooncake_size_bytes(size) % 2**30 == 0:
        return []
    return [Finding(
        "kv_cache_store_config.global_segment_size",
        f"is {size!r}, but ASCEND_ENABLE_USE_FABRIC_MEM=1 maps segments in whole GiB; use a multiple of 1GB.",
    )]


def check_standalone_store_memory(segment_size: str | int, memory_limit: str | None, container: str) -> list[Finding]:
    """A standalone store holds its whole segment in its own memory: its limit must exceed the segment."""
    if memory_limit is None:
        return [Finding(f"{container}.resources.limits.memory",
                        f"is unset; the store holds {segment_size} in memory, so set a limit above it.")]
    if k8s_quantity_bytes(memory_limit) <= mooncake_size_bytes(segment_size):
        return [Finding(f"{container}.resources.limits.memory",
                        f"is {memory_limit} but the store's segment is {segment_size}; the container would be "
                        f"OOM-killed when the pool fills. Raise the limit above the segment.")]
    return []


# Words that make a name secret-looking (split at `_`, `-`, `.` and camelCase): DB_PASS, hf_token, tlsPassword.
SECRET_WORDS = frozenset({
    "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "CREDENTIALS", "APIKEY",
    "PRIVATEKEY", "SECRETKEY", "ACCESSKEY",
})
# A last word that says the value is not the secret itself: where it is (passwd_file, TOKEN_PATH) or a measure
# or switch about it (first_token_timeout, max_token_len, enable_api_key_enabled).
NOT_SECRET_LAST_WORDS = frozenset({
    "FILE", "FILES", "PATH", "DIR", "ENV", "TIMEOUT", "LEN", "LENGTH", "NUM", "COUNT", "SIZE", "LIMIT", "ENABLE",
    "ENABLED", "TTL", "ID", "IDS", "TYPE", "MODE", "PREFIX", "HEADER",
})
# Spellings without a separator that still say secret (MYPASSWORD, DBSECRET).
_SECRET_SUBSTRINGS = ("PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY")
_NAME_WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _name_words(name: str) -> list[str]:
    return [word.upper() for word in _NAME_WORDS.split(name) if word]


def looks_secret(name: str, env: bool = True) -> bool:
    """Whether a name says its value is a secret. `env`: an environment variable, where a last word KEY means a
    key too (OPENAI_KEY); in a configuration section a bare `key` is too often something else (label_key)."""
    words = _name_words(name)
    if not words or words[-1] in NOT_SECRET_LAST_WORDS:
        return False
    upper = "_".join(words)
    return (
        any(hint in upper for hint in _SECRET_SUBSTRINGS)
        or any(word in SECRET_WORDS for word in words)
        or (env and words[-1] in ("KEY", "KEYS"))
    )


def _secret_finding(path: str, name: str) -> Finding:
    env_name = "_".join(_name_words(name)) or "NAME"
    return Finding(path, "looks like a secret but is plain text; keep it as a Pulumi secret delivered through a "
                         f"Kubernetes Secret: `pulumi config set --secret --path secret_env.{env_name} VALUE`.")


def check_plaintext_secrets(values: Mapping[str, Any], where: str) -> list[Finding]:
    """Secret-looking names with plain values (ConfigMap data, container env): they belong in Pulumi secrets,
    delivered as Kubernetes Secrets."""
    return [
        _secret_finding(f"{where}.{name}", name)
        for name, value in values.items()
        if isinstance(value, str) and value and looks_secret(name)
    ]


def check_plaintext_config_secrets(config: Any, where: str = "") -> list[Finding]:
    """Secret-looking keys with plain text values anywhere in a configuration tree (the pass-through sections of
    user_config.json, such as engine_config.hf_token or tls_config.password, land in ConfigMap motor-config)."""
    findings: list[Finding] = []
    if isinstance(config, Mapping):
        for key, value in config.items():
            path = f"{where}.{key}" if where else str(key)
            if isinstance(value, str) and value and looks_secret(str(key), env=False):
                findings.append(_secret_finding(path, str(key)))
            else:
                findings += check_plaintext_config_secrets(value, path)
    elif isinstance(config, list):
        for index, item in enumerate(config):
            findings += check_plaintext_config_secrets(item, f"{where}[{index}]")
    return findings


# --- workload safety: host paths, system namespaces, privileged containers -----------------------------------

# Host folders that hold the node itself: mounting one (or a parent of one) hands the pod the node.
SYSTEM_HOST_ROOTS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/var", "/var/lib",
    "/var/log", "/var/run",
})
# Host paths whose content, or anything below them, controls the node or holds its credentials. A hostPath that
# is one of these, lies below one, or contains one is refused.
SENSITIVE_HOST_PATHS = (
    "/proc", "/sys", "/boot", "/root/.ssh", "/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/ssh", "/etc/kubernetes", "/etc/pki", "/etc/ssl/private", "/dev/mem", "/dev/kmem",
    "/dev/port", "/var/run/docker.sock", "/run/docker.sock", "/var/run/containerd", "/run/containerd",
    "/var/run/crio", "/run/crio", "/var/run/secrets", "/run/secrets", "/var/lib/kubelet", "/var/lib/docker",
    "/var/lib/containerd", "/var/lib/etcd", "/var/log/pods",
)
# Namespaces Kubernetes itself owns: a service deployed there mixes with the cluster's own components.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")
# Capabilities that amount to root on the node (Kubernetes' baseline Pod Security Standard forbids adding them).
PRIVILEGED_CAPABILITIES = frozenset({"ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "SYS_PTRACE", "NET_ADMIN", "BPF",
                                     "SYS_BOOT", "DAC_READ_SEARCH", "PERFMON"})
READ_VERBS = frozenset({"get", "list", "watch"})


def _normal_host_path(path: str) -> str:
    """`/etc/`, `//etc` and `/x/../etc` are /etc (the kubelet follows `..`; section 2 refuses it separately)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            parts = parts[:-1]
        else:
            parts.append(part)
    return "/" + "/".join(parts)


def host_path_problem(path: str) -> str | None:
    """Why a host path may not be mounted, or None when it may."""
    if not isinstance(path, str) or not path.startswith("/"):
        return None  # not a host path (the schema names the field)
    normal = _normal_host_path(path)
    if normal in SYSTEM_HOST_ROOTS:
        return f"is the host's {'root' if normal == '/' else normal} folder, which holds the node itself"
    for sensitive in SENSITIVE_HOST_PATHS:
        if normal == sensitive or normal.startswith(sensitive + "/"):
            return f"lies in the host's {sensitive}, which controls the node or holds its credentials"
        if sensitive.startswith(normal + "/"):
            return f"contains the host's {sensitive}, which controls the node or holds its credentials"
    return None


def check_host_path(path: str, where: str) -> list[Finding]:
    """A hostPath may not be the host's root, a system folder, or a path that holds the node's control or
    credentials (the container runtime's socket, the kubelet's folder, /proc, /etc/shadow ...)."""
    problem = host_path_problem(path)
    if problem is None:
        return []
    return [Finding(where, f"{path!r} {problem}; mount a folder of its own (e.g. /mnt/<service>) instead.")]


def check_deploy_host_paths(deploy: Mapping[str, Any]) -> list[Finding]:
    """The host paths a service's settings name: the weights and hostpath storage entries."""
    findings = check_host_path(deploy.get("weight_mount_path", "/mnt/weight"), "motor_deploy_config.weight_mount_path")
    for index, entry in enumerate(deploy.get("storage") or []):
        if isinstance(entry, Mapping) and entry.get("type") == "hostpath":
            findings += check_host_path(entry.get("path"), f"motor_deploy_config.storage[{index}].path")
    return findings


def check_system_namespace(namespace: Any, where: str) -> list[Finding]:
    """A service never lives in a namespace Kubernetes owns."""
    if namespace not in SYSTEM_NAMESPACES:
        return []
    return [Finding(where, f"is {namespace!r}, a namespace Kubernetes itself uses; give the service a namespace of "
                           f"its own (job_id defaults to the stack name).")]


def is_read_only_configmap_role(role_rules: Sequence[Mapping[str, Any]]) -> bool:
    """A Role that only reads ConfigMaps: what Motor's controller holds in kube-system to read MindX DL's device
    reports (components/rbac.py); the one thing motor-kvpool puts in a system namespace."""
    return bool(role_rules) and all(
        list(rule.get("apiGroups") or []) == [""]
        and list(rule.get("resources") or []) == ["configmaps"]
        and set(rule.get("verbs") or []) <= READ_VERBS
        for rule in role_rules
    )


def check_privileged_container(container: Mapping[str, Any], where: str) -> list[Finding]:
    """No privileged container, no added capability that amounts to root on the node, no privilege escalation."""
    context = container.get("securityContext") or {}
    findings = []
    if context.get("privileged"):
        findings.append(Finding(f"{where}.securityContext.privileged",
                                "is true: the container gets every device and capability of the node; remove it."))
    added = sorted(set((context.get("capabilities") or {}).get("add") or []) & PRIVILEGED_CAPABILITIES)
    if added:
        findings.append(Finding(f"{where}.securityContext.capabilities.add",
                                f"adds {', '.join(added)}, which amount to root on the node; remove them."))
    if context.get("allowPrivilegeEscalation") is True:
        findings.append(Finding(f"{where}.securityContext.allowPrivilegeEscalation",
                                "is true: a setuid binary can regain the capabilities the container dropped; set false."))
    return findings


def check_privileged_pod(pod_spec: Mapping[str, Any], where: str) -> list[Finding]:
    """A pod spec: its host namespaces (PID, IPC) and every container (init containers included)."""
    findings = [
        Finding(f"{where}.{field}", f"is true: the pod sees the node's {what}; remove it.")
        for field, what in (("hostPID", "processes"), ("hostIPC", "shared memory and semaphores"))
        if pod_spec.get(field)
    ]
    for kind in ("initContainers", "containers"):
        for container in pod_spec.get(kind) or []:
            if isinstance(container, Mapping):
                findings += check_privileged_container(container, f"{where}.{kind}[{container.get('name', '?')}]")
    return findings
