"""What a KV pool holds and how long a block lives in it: capacity per writing engine and in total, the writers' rate,
the block lifetime under the stack's eviction settings, the share of the pool written per Mooncake eviction period
placed on the frontier measured on the real master; and the refusals of a pool that cannot work (docs/sizing.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

from .backends import ENGINE_RANK, LOCAL_SERVICE, MOONCAKE, STORE_PROCESS, backend_facts, runs_standalone_store
from .env import effective_connect_timeout_ms, effective_transfer_timeout_ms
from .kv_conductor import MOTOR_DEFAULT_BLOCK_SIZE
from .model_kv import ModelShape, engine_value, resolve_shape
from .sections import (
    SIDES,
    STORE_CONNECTOR,
    Finding,
    connectors_of,
    engine_section,
    kv_transfer_configs,
)
from .units import k8s_quantity_bytes, mooncake_size_bytes

# mooncake_master checks for eviction every 10 ms (kEvictionThreadSleepMs, master_service.h; no flag).
MOONCAKE_EVICTION_PERIOD_S = 0.01
# vLLM's max_num_batched_tokens for the OpenAI server when unset: 8192 on devices of 70 GiB or more, 2048 below
# (vllm/engine/arg_utils.py). The larger: a faster writer is the safer assumption for the pool.
VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS = 8192
# A prefill rank is taken to process one full batch of max_num_batched_tokens per second unless
# kv_pool_sizing.prefill_tokens_per_second says what was measured.
DEFAULT_PREFILL_STEPS_PER_SECOND = 1
# Mooncake issue 1382: a standalone mooncake_store_service fails to register a segment above ~64 GiB (RDMA memory
# registration); the embedded store splits large segments since Mooncake PR 647.
MOONCAKE_STANDALONE_SEGMENT_MAX = 64 * 2**30

# The memory an engine container requests unless pods.<side>.requests.memory says otherwise (deploy.py's; no memory
# limit). The embedded Mooncake store and the in-process MemCache LocalService of each rank live in that memory.
ENGINE_MEMORY_REQUEST = "64Gi"

# bench/results/eviction.md: for each measured share of the pool written per 10 ms, the watermark/ratio pairs that
# kept every put (True) or not (False) in every run.
FRONTIER: tuple[tuple[float, dict[tuple[float, float], bool]], ...] = (
    (0.08, {(0.9, 0.1): False, (0.7, 0.2): True, (0.7, 0.3): True, (0.7, 0.4): True, (0.6, 0.3): True,
            (0.6, 0.4): True, (0.5, 0.3): True, (0.5, 0.4): True, (0.5, 0.5): True, (0.4, 0.4): True}),
    (0.16, {(0.9, 0.1): False, (0.7, 0.2): False, (0.7, 0.3): True, (0.7, 0.4): True, (0.6, 0.3): True,
            (0.6, 0.4): True, (0.5, 0.3): True, (0.5, 0.4): True, (0.5, 0.5): True, (0.4, 0.4): True}),
    (0.27, {(0.9, 0.1): False, (0.7, 0.2): False, (0.7, 0.3): False, (0.7, 0.4): False, (0.6, 0.3): False,
            (0.6, 0.4): True, (0.5, 0.3): False, (0.5, 0.4): True, (0.5, 0.5): False, (0.4, 0.4): True}),
    (0.49, {(0.7, 0.2): False, (0.6, 0.4): False, (0.5, 0.4): False, (0.5, 0.5): False, (0.4, 0.4): False,
            (0.4, 0.5): False, (0.3, 0.5): False}),
)


@dataclass(frozen=True)
class Writer:
    """The engines of one side that put KV into the pool."""

    side: str
    instances: int
    shape: ModelShape | None
    block_size: int
    max_model_len: int | None
    tokens_per_second: int  # per instance
    rate_source: str

    @property
    def block_bytes(self) -> int | None:
        return None if self.shape is None else self.shape.bytes_per_token * self.block_size

    @property
    def request_bytes(self) -> int | None:
        """One max_model_len request's KV, in whole blocks."""
        if self.block_bytes is None or self.max_model_len is None:
            return None
        return math.ceil(self.max_model_len / self.block_size) * self.block_bytes

    @property
    def bytes_per_second(self) -> int | None:
        return None if self.shape is None else self.instances * self.tokens_per_second * self.shape.bytes_per_token


@dataclass(frozen=True)
class PoolSizing:
    backend: str
    field: str  # the setting that sizes the pool
    unit_bytes: int | None  # what `field` gives each of `units` (None: not known offline)
    units: int  # segments, LocalServices or node workers
    unit_name: str
    high: float  # usage at which eviction starts
    floor: float  # usage eviction leaves
    writers: tuple[Writer, ...]
    size_key: str = ""  # the key inside `field` that holds the size (MemCache: a key of the conf file it names)
    ratio: float = 0.0  # Mooncake's eviction_ratio (the frontier is measured per watermark/ratio pair)

    @property
    def measured_eviction(self) -> bool:
        """Whether the backend's eviction was measured on its real server (rules.backends)."""
        facts = backend_facts(self.backend)
        return facts is not None and facts.measured_eviction

    @property
    def is_(self) -> str:
        """How a finding about `field` starts: "is" or "<size_key> is"."""
        return f"{self.size_key} is" if self.size_key else "is"

    @property
    def capacity_bytes(self) -> int | None:
        return None if self.unit_bytes is None else self.unit_bytes * self.units

    @property
    def block_bytes(self) -> int | None:
        sizes = {writer.block_bytes for writer in self.writers}
        return sizes.pop() if len(sizes) == 1 else None

    @property
    def capacity_blocks(self) -> int | None:
        if self.capacity_bytes is None or not self.block_bytes:
            return None
        return self.capacity_bytes // self.block_bytes

    @property
    def capacity_tokens(self) -> int | None:
        blocks = self.capacity_blocks
        return None if blocks is None else blocks * self.writers[0].block_size

    @property
    def write_bytes_per_second(self) -> int | None:
        rates = [writer.bytes_per_second for writer in self.writers]
        return None if not rates or None in rates else sum(rate for rate in rates if rate is not None)

    def fill_seconds(self, share: float) -> float | None:
        """How long the writers take to write `share` of the pool."""
        rate, capacity = self.write_bytes_per_second, self.capacity_bytes
        if not rate or capacity is None:
            return None
        return max(share, 0.0) * capacity / rate

    @property
    def lifetime_seconds(self) -> float | None:
        """The shortest a block stays: what eviction leaves resident, overwritten at the writers' rate."""
        return self.fill_seconds(self.floor)

    @property
    def first_eviction_seconds(self) -> float | None:
        """From an empty pool, how long the first block written stays: until usage passes the watermark, and
        (Mooncake) until the master's next eviction check, at most one period later. Measured on the real master:
        bench/results/sizing.md."""
        seconds = self.fill_seconds(self.high)
        if seconds is None or not self.measured_eviction:
            return seconds
        return seconds + MOONCAKE_EVICTION_PERIOD_S

    @property
    def share_per_period(self) -> float | None:
        rate, capacity = self.write_bytes_per_second, self.capacity_bytes
        if rate is None or not capacity:
            return None
        return rate * MOONCAKE_EVICTION_PERIOD_S / capacity

    def frontier(self) -> str:
        """Where the pool sits on bench/results/eviction.md's measured frontier."""
        share = self.share_per_period
        if not self.measured_eviction:
            return "not measured for this backend"
        if share is None:
            return "unknown"
        pair = (round(self.high, 2), round(self.ratio, 2))
        for measured_share, pairs in FRONTIER:
            if share <= measured_share:
                kept = pairs.get(pair)
                where = f"{share:.2%} of the pool per 10 ms (row <= {measured_share:.0%})"
                if kept is None:
                    return f"{where}: {pair[0]}/{pair[1]} not measured"
                return f"{where}: {pair[0]}/{pair[1]} {'kept' if kept else 'did not keep'} >= 99 % of puts"
        return f"{share:.2%} of the pool per 10 ms: beyond the frontier, no setting kept >= 99 % of puts"


def _store_connectors(kv_transfer_config: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return [c for _, c in connectors_of(kv_transfer_config) if c.get("kv_connector") == STORE_CONNECTOR]


def _writes(side: str, connectors: list[Mapping[str, Any]]) -> bool:
    """Prefill puts what it computes; decode only with consumer_is_to_put (vllm-ascend KVPoolWorker)."""
    return side == "prefill" or any((c.get("kv_connector_extra_config") or {}).get("consumer_is_to_put")
                                    for c in connectors)


def _positive_or_one(value: Any) -> int:
    """A count as written when it is a positive int; otherwise 1 (the settings model names the bad field)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 1


def engine_ranks(engine: Mapping[str, Any]) -> int:
    """DP x TP x PP: the workers of one engine instance, each with its own store client (vllm-ascend KVPoolWorker)."""
    return math.prod(_positive_or_one(engine_value(engine, key)) for key in (
        "data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size"))


def _writer(side: str, instances: int, engine: Mapping[str, Any], setting: Mapping[str, Any]) -> Writer:
    shape = resolve_shape(engine, setting)
    dp = _positive_or_one(engine_value(engine, "data_parallel_size"))
    rate = setting.get("prefill_tokens_per_second")
    if rate is not None:
        source = "kv_pool_sizing.prefill_tokens_per_second"
    else:
        batched = engine_value(engine, "max_num_batched_tokens")
        batched = batched if isinstance(batched, int) else VLLM_DEFAULT_MAX_NUM_BATCHED_TOKENS
        rate = batched * dp * DEFAULT_PREFILL_STEPS_PER_SECOND
        source = f"max_num_batched_tokens {batched} x {dp} DP rank(s) per second"
    max_len = engine_value(engine, "max_model_len")
    # Unset, vllm-ascend's platform.py sets 128, Motor's default too.
    return Writer(side, instances, shape, _positive_or_one(engine_value(engine, "block_size") or MOTOR_DEFAULT_BLOCK_SIZE),
                  max_len if isinstance(max_len, int) and max_len > 0 else None, rate, source)  # -1: vLLM fits it


def pool_sizing(user_config: Mapping[str, Any], setting: Mapping[str, Any] | None = None) -> PoolSizing | None:
    """The sizing of the pool this service's store holds; None when no engine uses a store connector (the store
    then holds nothing) or there is no store."""
    store = user_config.get("kv_cache_store_config") or {}
    deploy = user_config.get("motor_deploy_config") or {}
    setting = setting or {}
    kv = kv_transfer_configs(user_config)
    backend = store.get("backend")
    writers, ranks, pods = [], 0, 0
    pod_ranks = set()  # the ranks of one engine pod, of each side that uses the store
    for side in SIDES:
        connectors = _store_connectors(kv[side])
        if not connectors:
            continue
        engine = (user_config.get(engine_section(side)) or {}).get("engine_config") or {}
        instances = _positive_or_one(deploy.get(f"{side[0]}_instances_num", 1))
        ranks += instances * engine_ranks(engine)
        pods_per_instance = _positive_or_one(deploy.get(f"single_{side[0]}_instance_pod_num", 1))
        pods += instances * pods_per_instance
        pod_ranks.add(math.ceil(engine_ranks(engine) / pods_per_instance))
        if _writes(side, connectors):
            writers.append(_writer(side, instances, engine, setting))
    if not backend or (not writers and not ranks):
        return None
    facts = backend_facts(backend)
    if facts is None:  # a backend the settings refuse
        return None
    unit = facts.pool_unit(store, pod_ranks)
    return PoolSizing(backend, f"kv_cache_store_config.{facts.size_key}", unit.unit_bytes,
                      ranks if unit.unit_name == ENGINE_RANK else pods, unit.unit_name, unit.high, unit.floor,
                      tuple(writers), ratio=unit.ratio)


def bytes_text(count: float) -> str:
    """Bytes in the largest binary unit, exact when whole: 288 MiB, 2 GiB, 1.2 GiB."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= factor:
            value = count / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{value:.1f} {unit}"
    return f"{count:.0f} B"


def requests_bytes(sizing: PoolSizing) -> int:
    """One max_model_len request's KV for each engine that writes to the pool."""
    return sum(w.instances * w.request_bytes for w in sizing.writers if w.request_bytes is not None)


def unit_bytes_for_requests(sizing: PoolSizing) -> int:
    """The smallest size per unit whose pool holds requests_bytes below the eviction watermark."""
    return math.ceil(requests_bytes(sizing) / (sizing.high * sizing.units))


def unit_bytes_for_resident(sizing: PoolSizing, resident_bytes: float) -> int:
    """The smallest size per unit whose pool keeps `resident_bytes` after an eviction (at its floor)."""
    return math.ceil(resident_bytes / (max(sizing.floor, 0.01) * sizing.units))


def unit_text(sizing: PoolSizing, count: int) -> str:
    """A size as `sizing.field` takes it, rounded up: MiB for shared_memory_size_mb, else a Mooncake size, whole GB
    from 1 GB up (segments on A3 fabric memory must be whole GiB), whole MB below."""
    mib = math.ceil(count / 2**20)
    if sizing.field.endswith("_mb"):
        return str(mib)
    if sizing.field.endswith(".dram_size"):  # Motor reads whole GB only (LocalService._parse_dram_size_gb)
        return f"{max(math.ceil(mib / 1024), 1)}GB"
    return f"{math.ceil(mib / 1024)}GB" if mib > 1024 or mib % 1024 == 0 else f"{mib}MB"


def check_pool_capacity(sizing: PoolSizing | None) -> list[Finding]:
    """A pool that cannot work: empty, or too small to hold one max_model_len request's KV for each engine that
    writes to it below the eviction watermark (what lies above it is evicted at the next check)."""
    if sizing is None or sizing.unit_bytes is None:
        return []
    requests = [(w, w.request_bytes) for w in sizing.writers if w.request_bytes is not None]
    needed = requests_bytes(sizing)
    wanted = unit_text(sizing, unit_bytes_for_requests(sizing) if needed and sizing.high > 0 else 2**30)
    given = f"{sizing.is_} {unit_text(sizing, sizing.unit_bytes)} x {sizing.units} {sizing.unit_name}(s)"
    if sizing.capacity_bytes == 0:
        return [Finding(sizing.field, f"{given}: the pool holds nothing and every put fails (Mooncake "
                        f"NO_AVAILABLE_HANDLE); set at least {wanted}.", example=wanted)]
    usable = sizing.high * (sizing.capacity_bytes or 0)
    if needed <= usable or sizing.high <= 0:  # no watermark: check_mooncake_eviction names it
        return []
    writers = " + ".join(f"{w.instances} {w.side} instance(s) x {bytes_text(size)} ({w.max_model_len} tokens of "
                         f"{w.shape.source if w.shape else '?'})" for w, size in requests)
    return [Finding(sizing.field, (
        f"{given} = {bytes_text(sizing.capacity_bytes or 0)}, {bytes_text(usable)} below the {sizing.high:g} eviction "
        f"watermark: less than one max_model_len request for each engine that writes to it, {writers} = "
        f"{bytes_text(needed)}; set at least {wanted}."), example=wanted)]


def check_standalone_segment_limit(store: Mapping[str, Any]) -> list[Finding]:
    """Mooncake issue 1382: a standalone store fails to register a segment above about 64 GiB."""
    if not runs_standalone_store(store):
        return []
    size = store.get("global_segment_size", "1GB")
    if mooncake_size_bytes(size) <= MOONCAKE_STANDALONE_SEGMENT_MAX:
        return []
    return [Finding("kv_cache_store_config.global_segment_size", (
        f"is {size!r}, but a standalone mooncake_store_service fails to register a segment above 64 GiB (\"Failed "
        "to register memory: Cannot allocate memory\", kvcache-ai/Mooncake issue 1382); use at most 64GB, or "
        "store_mode embedded, which splits a large segment (Mooncake PR 647)."), example="64GB")]


def default_min_lifetime_seconds(engines: Mapping[str, Mapping[str, Any]]) -> float:
    """Long enough for decode to read what prefill wrote: the longest ASCEND connect or transfer timeout of any
    engine, the time vllm-ascend allows a transfer before giving it up."""
    return max(max(effective_connect_timeout_ms(engines.get(side) or {}),
                   effective_transfer_timeout_ms(engines.get(side) or {})) for side in SIDES) / 1000


def min_lifetime_seconds(engines: Mapping[str, Mapping[str, Any]], setting: Mapping[str, Any] | None) -> float:
    return (setting or {}).get("min_block_lifetime_seconds") or default_min_lifetime_seconds(engines)


def check_block_lifetime(
    user_config: Mapping[str, Any], engines: Mapping[str, Mapping[str, Any]], setting: Mapping[str, Any] | None,
) -> list[Finding]:
    """Blocks that live shorter than decode needs to read them: the pool is too small for the writers' rate."""
    sizing = pool_sizing(user_config, setting)
    min_seconds = min_lifetime_seconds(engines, setting)
    if sizing is None or sizing.lifetime_seconds is None or sizing.lifetime_seconds >= min_seconds:
        return []
    rate = sizing.write_bytes_per_second or 0
    wanted = unit_text(sizing, unit_bytes_for_resident(sizing, min_seconds * rate))
    return [Finding(sizing.field, (
        f"{sizing.is_} {unit_text(sizing, sizing.unit_bytes or 0)} x {sizing.units} {sizing.unit_name}(s): the writers "
        f"({bytes_text(rate)}/s, {sizing.writers[0].rate_source}) turn the pool over so fast that a block may be "
        f"evicted {sizing.lifetime_seconds:.2f} s after it is written, before decode reads it ({min_seconds:g} s, "
        f"kv_pool_sizing.min_block_lifetime_seconds); set at least {wanted}, or "
        f"kv_pool_sizing.prefill_tokens_per_second to the rate you measured."), example=wanted)]


@dataclass(frozen=True)
class PodPool:
    """The pool memory one engine pod of a side holds in its engine container."""

    ranks: int  # the pod's ranks
    buffer: int  # each rank's local buffer (Mooncake; 0 for MemCache, whose ranks hold none)
    held: int  # all of it: the ranks' segments (or the pod's one store process or LocalService) and buffers


def _pod_pools(user_config: Mapping[str, Any]) -> tuple[PoolSizing, bool, dict[str, PodPool]] | None:
    """(sizing, standalone, side -> its pod's pool memory) where the pool lives in the engine pods; None otherwise."""
    sizing = pool_sizing(user_config)
    if sizing is None or sizing.unit_bytes is None or sizing.unit_name not in (ENGINE_RANK, STORE_PROCESS,
                                                                                LOCAL_SERVICE):
        return None
    # standalone: the pod's one store process (or LocalService) holds the pool memory, its ranks only their local
    # buffers (Mooncake; a MemCache rank holds none: its conf says dram.size 0GB)
    standalone = sizing.unit_name in (STORE_PROCESS, LOCAL_SERVICE)
    store = user_config.get("kv_cache_store_config") or {}
    buffer = mooncake_size_bytes(store.get("local_buffer_size", "1GB")) if sizing.backend == MOONCAKE.name else 0
    deploy = user_config.get("motor_deploy_config") or {}
    kv = kv_transfer_configs(user_config)
    pools = {}
    for side in SIDES:
        if not _store_connectors(kv[side]):
            continue
        engine = (user_config.get(engine_section(side)) or {}).get("engine_config") or {}
        ranks = math.ceil(engine_ranks(engine) / _positive_or_one(deploy.get(f"single_{side[0]}_instance_pod_num", 1)))
        held = sizing.unit_bytes + ranks * buffer if standalone else ranks * (sizing.unit_bytes + buffer)
        pools[side] = PodPool(ranks, buffer, held)
    return sizing, standalone, pools


def engine_pod_pool_bytes(user_config: Mapping[str, Any]) -> dict[str, int]:
    """side -> the pool memory one engine pod of it holds (what check_engine_pod_memory sums); a side that holds
    none (no store connector, or the pool lives outside the engine pods) is absent."""
    pools = _pod_pools(user_config)
    return {side: pool.held for side, pool in pools[2].items()} if pools else {}


def check_engine_pod_memory(user_config: Mapping[str, Any], engine_resources: Mapping[str, Any]) -> list[Finding]:
    """The pool memory one engine pod holds (per rank a Mooncake segment and local buffer, or a MemCache LocalService;
    in Mooncake standalone mode the store process's segment and a local buffer per rank) fits the memory the pod
    requests: beyond it the scheduler places the pod on a node without that room. `engine_resources`: side -> the
    engine container's `resources` as rendered (pods.<side> of the settings)."""
    pools = _pod_pools(user_config)
    if pools is None:
        return []
    sizing, standalone, by_side = pools
    deploy = user_config.get("motor_deploy_config") or {}
    findings = []
    for side, pool in by_side.items():
        ranks, buffer, held = pool.ranks, pool.buffer, pool.held
        pods_key = f"single_{side[0]}_instance_pod_num"
        npus = deploy.get(f"{side[0]}_pod_npu_num")
        written = _memory_request(engine_resources.get(side) or {})
        request = k8s_quantity_bytes(written) if written else 0
        if held <= request or isinstance(npus, int) and ranks > npus:  # more ranks than NPUs: check_instance_sizes says so
            continue
        fits = max(request - ranks * buffer if standalone else request // ranks - buffer, 0) // 2**20
        most = (f"{fits // 1024}GB" if fits >= 1024 else f"{fits}MB") if fits else None
        setting = f"pods.{side}.requests.memory"
        asked = (f"the {written} the engine pod requests ({setting})" if written
                 else f"what the engine pod requests (nothing: {setting} is unset)")
        ways = [f"use at most {most}"] if most else []
        ways.append(f"{'raise' if written else 'set'} {setting} to {math.ceil(held / 2**30)}Gi")
        if sizing.unit_name == LOCAL_SERVICE:  # the pod's one LocalService holds it whatever its ranks
            findings.append(Finding(sizing.field, (
                f"is {unit_text(sizing, sizing.unit_bytes)}: the LocalService of a {side} pod holds "
                f"{bytes_text(sizing.unit_bytes)} of host memory, more than {asked}, so the scheduler may place it on "
                f"a node without that room; {_either(ways)}."),
                example=most))
            continue
        if standalone:
            holders = (f"the store process of a {side} pod holds {bytes_text(sizing.unit_bytes)} and its {ranks} ranks "
                       f"{ranks} x {bytes_text(buffer)} local buffer")
        else:
            buffers = f" + {bytes_text(buffer)} local buffer" if buffer else ""
            holders = f"the {ranks} ranks of a {side} pod hold {ranks} x ({bytes_text(sizing.unit_bytes)}{buffers})"
        findings.append(Finding(sizing.field, (
            f"{sizing.is_} {unit_text(sizing, sizing.unit_bytes)}: {holders} = {bytes_text(held)} of host memory, more "
            f"than {asked}, so the scheduler may place it on a node without that room; "
            f"{_either([*ways, f'spread the ranks over more pods ({pods_key})'])}."), example=most))
    return findings


def _either(ways: list[str]) -> str:
    """`a, b, or c`; `a, or b`; `a`: the ways out a message offers."""
    return ", or ".join([", ".join(ways[:-1]), ways[-1]]) if len(ways) > 1 else ways[0]


def _memory_request(resources: Mapping[str, Any]) -> str | None:
    """The memory a container requests: its request, else its limit (Kubernetes defaults a missing request to the
    limit)."""
    return ((resources.get("requests") or {}).get("memory")
            or (resources.get("limits") or {}).get("memory"))
