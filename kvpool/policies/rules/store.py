"""The KV store: one backend everywhere, Mooncake's eviction and lease, its segment on A3 fabric memory, its transport,
the Motor a standalone store needs, and the protection of a production store."""

from __future__ import annotations

import re
from typing import Any, Mapping

from .backends import MOONCAKE, runs_standalone_store
from .env import effective_connect_timeout_ms, effective_transfer_timeout_ms, env_int
from .sections import (
    SIDES,
    Finding,
    engine_env_section,
    kv_transfer_configs,
    kv_transfer_path,
    store_connector_backends,
    uses_pool,
)
from .units import mooncake_size_bytes

# mooncake_master's default lease when the seed's config omits default_kv_lease_ttl (seed 000 table).
MOONCAKE_LEASE_TTL_DEFAULT_MS = 11000
# The eviction frontier measured on the real mooncake_master (bench/results/eviction.md): one writer putting 3x a
# 64 MB pool, about a quarter of it per 10 ms eviction check, kept every put in every run at 0.6/0.4 (and lower
# watermarks), 79-100 % at 0.7/0.2 and 40-54 % at the seed's 0.9/0.1. The policy's thresholds default to 0.6/0.4.
SUSTAINABLE_HIGH_WATERMARK = 0.6
SUSTAINABLE_EVICTION_RATIO = 0.4


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
                        kv_transfer_path(side) + suffix,
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
    if store.get("backend") != MOONCAKE.name:
        return []
    findings = []
    high = store.get("eviction_high_watermark_ratio")
    ratio = store.get("eviction_ratio")
    if high is None:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_high_watermark_ratio",
                "is required for backend 'mooncake' (the pool usage at which mooncake_master starts evicting); "
                "set a value in (0, 1], e.g. 0.6 (the seed suggests 0.9, which let only 40-54% of a fast writer's "
                "puts through on the real master: bench/results/eviction.md).",
                example=SUSTAINABLE_HIGH_WATERMARK,
            )
        )
    elif not 0 < high <= 1:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_high_watermark_ratio",
                f"is {high}; it must be in (0, 1] (a fraction of the pool), e.g. 0.6.",
                example=SUSTAINABLE_HIGH_WATERMARK,
            )
        )
    if ratio is None:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_ratio",
                "is required for backend 'mooncake' (the fraction of the pool freed per eviction); set a value "
                "in [0, 1], e.g. 0.4 (the seed suggests 0.1).",
                example=SUSTAINABLE_EVICTION_RATIO,
            )
        )
    elif not 0 <= ratio <= 1:
        findings.append(
            Finding(
                "kv_cache_store_config.eviction_ratio",
                f"is {ratio}; mooncake_master exits unless 0 <= eviction_ratio <= 1; use e.g. 0.4.",
                example=SUSTAINABLE_EVICTION_RATIO,
            )
        )
    return findings


def check_lease_exceeds_timeouts(
    store: Mapping[str, Any],
    engines: Mapping[str, Mapping[str, Any]],
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None],
) -> list[Finding]:
    """default_kv_lease_ttl must exceed ASCEND_CONNECT_TIMEOUT and ASCEND_TRANSFER_TIMEOUT of both sides
    (seed 000 table and FAQ 3: otherwise decode reads objects whose lease has already expired).
    Applies when engines use the Mooncake pool (an AscendStoreConnector); a master that only serves
    the P/D transfer (the UCM example) holds no leased objects."""
    if store.get("backend") != MOONCAKE.name or not uses_pool(kv_transfer_configs):
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
            origin = "" if env_int(env, name) is not None else "unset, so vllm-ascend uses "
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


def check_mooncake_eviction_headroom(
    store: Mapping[str, Any],
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None],
    max_high_watermark: float = SUSTAINABLE_HIGH_WATERMARK,
    min_eviction_ratio: float = SUSTAINABLE_EVICTION_RATIO,
) -> list[Finding]:
    """Eviction settings that leave a sustained writer too little room: mooncake_master evicts asynchronously
    (about every 10 ms), so a fast writer outruns it when the watermark is high and each eviction small. A master
    that only serves the P/D transfer (the UCM example) holds no pool objects to evict."""
    if store.get("backend") != MOONCAKE.name or not uses_pool(kv_transfer_configs):
        return []
    high, ratio = store.get("eviction_high_watermark_ratio"), store.get("eviction_ratio")
    if high is None or ratio is None or (high <= max_high_watermark and ratio >= min_eviction_ratio):
        return []
    return [Finding(
        "kv_cache_store_config.eviction_high_watermark_ratio",
        f"{high}/{ratio} (watermark/eviction ratio) leaves little headroom: on the real mooncake_master, writers "
        f"filling 3x the pool back to back, a quarter of it per 10 ms eviction check, kept 40-54% of their puts at "
        f"0.9/0.1, 79-100% at 0.7/0.2 and all of them at 0.6/0.4 (bench/results/eviction.md; llm-d users report the "
        f"same). Use at most {max_high_watermark} and at least {min_eviction_ratio}, or pace the writers.",
    )]


def check_not_ucm_store_backend(store: Mapping[str, Any] | None, kv_transfer_configs: Mapping[str, Any]) -> list[Finding]:
    """UCM is not a store backend: it comes in through UCMConnector (seed 000, FAQ 6)."""
    findings = []
    if store and store.get("backend") == "ucm":
        findings.append(Finding("kv_cache_store_config.backend", UCM_BACKEND_MESSAGE))
    for side in SIDES:
        for suffix, backend in store_connector_backends(kv_transfer_configs.get(side)):
            if backend == "ucm":
                findings.append(Finding(kv_transfer_path(side) + suffix, UCM_BACKEND_MESSAGE))
    return findings


UCM_BACKEND_MESSAGE = (
    "is 'ucm', but UCM is not a KV store backend: configure UCMConnector as connectors[1] of prefill (its "
    "store_pipeline and storage_backends say where prefixes go). Motor's UCM sample keeps "
    "kv_cache_store_config.backend at mooncake only so that its deployer creates a Mooncake kv_store/master; it "
    "does not make UCM a Mooncake backend (seed FAQ 6)."
)


def check_fabric_segment_alignment(store: Mapping[str, Any], engines: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """With ASCEND_ENABLE_USE_FABRIC_MEM=1 (A3), Mooncake segments must be whole GiB (vllm-ascend kv_pool.md)."""
    if store.get("backend") != MOONCAKE.name:
        return []
    fabric = any(str((engines.get(side) or {}).get("ASCEND_ENABLE_USE_FABRIC_MEM")) == "1" for side in SIDES)
    size = store.get("global_segment_size", "1GB")
    if not fabric or mooncake_size_bytes(size) % 2**30 == 0:
        return []
    return [Finding(
        "kv_cache_store_config.global_segment_size",
        f"is {size!r}, but ASCEND_ENABLE_USE_FABRIC_MEM=1 maps segments in whole GiB; use a multiple of 1GB.",
    )]


def check_mooncake_protocol(user_config: Mapping[str, Any]) -> list[Finding]:
    """vllm-ascend's MooncakeBackend (kv_pool/ascend_store/backend/mooncake_backend.py) sets up the store only with
    protocol 'ascend' and raises NotImplementedError for any other, in either store mode: an engine that loads the
    store connector with another transport does not start. An advisory, not a refusal: without NPUs (the live
    tests of this project) the real Mooncake runs on tcp."""
    store = user_config.get("kv_cache_store_config") or {}
    protocol = store.get("protocol", "ascend")
    if store.get("backend") != MOONCAKE.name or protocol == "ascend":
        return []
    sides = [side for side, kv in kv_transfer_configs(user_config).items()
             if any(backend == MOONCAKE.name for _, backend in store_connector_backends(kv))]
    if not sides:
        return []
    return [Finding(
        "kv_cache_store_config.protocol",
        f"is {protocol!r}, but vllm-ascend's MooncakeBackend accepts only 'ascend' (NotImplementedError otherwise), "
        f"so the {' and '.join(sides)} engines, which load the Mooncake store connector, will not start on an "
        f"Ascend node; write protocol: ascend (the default) unless the engine image is not vllm-ascend.",
    )]


def check_standalone_store_motor(store: Mapping[str, Any], store_services: frozenset[str] | None, motor: str) -> list[Finding]:
    """store_mode standalone relies on Motor's node manager to start mooncake_store_service in every engine container
    (motor/node_manager/core/services/mooncake/lifecycle.py, registered for backend mooncake in
    motor/node_manager/core/services/registry.py). Motor 8919e55 registers memcache only: there every engine would
    contribute 0 bytes (its mooncake.json says so) and nothing would hold the pool. `store_services`: the backends the
    deployed Motor's node manager starts a store for (None: not known)."""
    if not runs_standalone_store(store) or store_services is None:
        return []
    if store.get("backend") in store_services:
        return []
    found = ", ".join(sorted(store_services)) or "none"
    return [Finding(
        "kv_cache_store_config.store_mode",
        f"is 'standalone', but the node manager of {motor} starts no Mooncake store process (its "
        f"motor/node_manager/core/services/registry.py registers store services for: {found}), so the engines, "
        f"whose mooncake.json contributes 0 bytes in this mode, would leave the pool empty; deploy a Motor whose node "
        f"manager has the Mooncake store service (motor/node_manager/core/services/mooncake/lifecycle.py) and point "
        f"motor_deployer_dir at its examples/deployer, or write store_mode: embedded.",
    )]


def store_protection_problem(name: str, stack: str, production_stacks: str, protected: bool) -> str | None:
    """The objects of the KV store of a production stack (`production_stacks`, a regular expression matching its whole
    name) are protected: one pool serves every consumer, deleting it empties all their caches."""
    if not re.fullmatch(production_stacks, stack) or protected:
        return None
    return (f"{name} belongs to the KV store of production stack {stack!r} but is not protected: a `pulumi destroy` "
            f"or a rename would delete the pool every service reads. Set kv_cache_store_config.protect: true.")
