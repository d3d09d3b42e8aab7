"""What the rules, the settings and the views know of each KV store backend, as plain values: one Backend per
backend in BACKENDS. How a backend is rendered is its module's, kvpool/components/kv_store/<name>.py (registered in
kvpool/components/kv_store/registry.py); its settings are its class in kvpool/settings/store.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from .units import mooncake_size_bytes

# The units a pool is counted in (PoolSizing.unit_name).
ENGINE_RANK = "engine rank"
# Mooncake standalone: the mooncake_store_service Motor's node manager starts in each engine pod.
STORE_PROCESS = "engine pod's store process"
# MemCache's unit: the LocalService memory of one engine pod, which Motor's node manager sizes from
# kv_cache_store_config.dram_size (engine.sh starts one node manager per engine container). Standalone, its Daemon
# runs one LocalService thread (motor/node_manager/core/services/local_service.py _run); inprocess, the pod's ranks
# share it (prepare()).
LOCAL_SERVICE = "engine pod's LocalService"
NODE_WORKER = "node worker"
# MemCache's MetaService evicts from 70 % down to 60 % (ock.mmc.evict_threshold_high/low defaults, Ascend/memcache
# doc/memcache_config.md); motor-kvpool's MetaService conf leaves them at that.
MEMCACHE_EVICT_HIGH, MEMCACHE_EVICT_LOW = 0.7, 0.6


@dataclass(frozen=True)
class PoolUnit:
    """What one unit of a pool holds and how it evicts, from kv_cache_store_config alone (rules.pool_sizing counts
    the units)."""

    unit_bytes: int | None  # None: not known offline
    unit_name: str  # ENGINE_RANK: one per engine rank; any other: one per engine pod
    high: float  # usage at which eviction starts
    floor: float  # usage eviction leaves
    ratio: float = 0.0  # Mooncake's eviction_ratio (the frontier is measured per watermark/ratio pair)


@dataclass(frozen=True, kw_only=True)
class Backend:
    name: str  # kv_cache_store_config.backend
    size_key: str  # the kv_cache_store_config key that sizes one unit of the pool
    # (store, the rank counts of one engine pod of each side that uses the store) -> one unit of the pool
    pool_unit: Callable[[Mapping[str, Any], set[int]], PoolUnit]
    # Motor's scripts engine.sh adds for the engines' KV_STORE_BACKEND (roles/engine.sh:23-26): Mooncake's client
    # file is rebuilt with mooncake_config.py (common.sh's gen_kv_store_config).
    engine_scripts: tuple[str, ...] = ()
    # store_mode standalone: Motor's node manager starts a store process in every engine container.
    standalone_store: bool = False
    # Its server's eviction (a check every MOONCAKE_EVICTION_PERIOD_S) was measured on the real server
    # (bench/results/eviction.md): the planner adds the period and places the pool on the frontier.
    measured_eviction: bool = False
    layerwise: bool = False  # vllm-ascend's layerwise KV pool (use_layerwise) works with it (layerwise_kv_pool.md)
    # Motor's KV conductor can follow its master's events (kvevent_instance; mooncake_config.py conductor).
    conductor_events: bool = False
    # Its engines dial their own node's worker on the host network (its `port` is a host port of every engine node),
    # not a Service of the store's namespace.
    node_workers: bool = False
    # Why an engine pod of this backend's KV_STORE_BACKEND holds pool memory (blast radius); None: it holds none.
    engine_pool_share: str | None = None


def mooncake_floor(high: float, ratio: float) -> float:
    """What a Mooncake eviction at the watermark leaves: BatchEvict evicts ceil(objects x max(ratio, used - high +
    ratio)), a share of the objects the pool holds, not of its capacity (master_service.cpp), so high x (1 - ratio)
    of the pool stays; measured 34-37 % at 0.6/0.4 (bench/results/sizing.md)."""
    return round(high * (1 - ratio), 6)


def backend_facts(name: Any) -> Backend | None:
    """The facts of the backend `name` names; None for none or one the settings refuse (the policy pack also reads
    configurations the settings never validated)."""
    return BACKENDS.get(name) if isinstance(name, str) else None


def runs_standalone_store(store: Any) -> bool:
    """Whether Motor's node manager starts a store process (mooncake_store_service) in every engine container: what
    it reads from user_config.json's kv_cache_store_config (motor/config/node_manager.py, docs/standalone-store.md)."""
    facts = backend_facts(store.get("backend")) if isinstance(store, Mapping) else None
    return facts is not None and facts.standalone_store and store.get("store_mode") == "standalone"


def _mooncake_pool(store: Mapping[str, Any], pod_ranks: set[int]) -> PoolUnit:
    high, ratio = store.get("eviction_high_watermark_ratio") or 0.0, store.get("eviction_ratio") or 0.0
    # standalone: one store process per engine pod holds the segment; embedded: each engine rank's client does
    unit = STORE_PROCESS if runs_standalone_store(store) else ENGINE_RANK
    return PoolUnit(mooncake_size_bytes(store.get("global_segment_size", "1GB")), unit, high,
                    mooncake_floor(high, ratio), ratio)


def _memcache_pool(store: Mapping[str, Any], pod_ranks: set[int]) -> PoolUnit:
    # Motor's node manager sizes the LocalService memory of each engine pod from dram_size, else from 80 % of the
    # node's free memory (not known offline), whatever the conf says: standalone, one LocalService holds it;
    # inprocess, prepare() gives each of the pod's r ranks max(1, dram_size // r) GB (local_service.py:109-121).
    dram = store.get("dram_size")
    size = mooncake_size_bytes(dram) if isinstance(dram, str) else None
    if size is not None and store.get("local_service_mode") != "standalone":
        shares = {r * max(1, (size // 2**30) // r) * 2**30 for r in pod_ranks}
        size = shares.pop() if len(shares) == 1 else None  # pods of two sizes: no one size per pod
    return PoolUnit(size, LOCAL_SERVICE, MEMCACHE_EVICT_HIGH, MEMCACHE_EVICT_LOW)


def _yuanrong_pool(store: Mapping[str, Any], pod_ranks: set[int]) -> PoolUnit:
    # each node's worker offers its shared memory and evicts least recently used (evictable writes); counted as one
    # node per engine pod, the most the pods can span.
    return PoolUnit(store.get("shared_memory_size_mb", 65536) * 2**20, NODE_WORKER, 1.0, 1.0)


MOONCAKE = Backend(
    name="mooncake", size_key="global_segment_size", pool_unit=_mooncake_pool, engine_scripts=("mooncake_config.py",),
    standalone_store=True, measured_eviction=True, conductor_events=True,
    engine_pool_share="its embedded Mooncake store holds a pool segment",
)
MEMCACHE = Backend(
    name="memcache", size_key="dram_size", pool_unit=_memcache_pool, layerwise=True,
    engine_pool_share="its MemCache LocalService holds pool memory",
)
# The datasystem worker of the node holds the memory, not the engine pods.
YUANRONG = Backend(name="yuanrong", size_key="shared_memory_size_mb", pool_unit=_yuanrong_pool, node_workers=True)
BACKENDS: dict[str, Backend] = {backend.name: backend for backend in (MOONCAKE, MEMCACHE, YUANRONG)}
DEFAULT_BACKEND = MEMCACHE.name  # seed 000: kv_cache_store_config without backend
