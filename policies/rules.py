"""The consistency rules of a KV-pool service, as pure functions over plain data.

One rule, one place: the settings layer (`components.settings`) calls these to fail fast on `pulumi up`,
and the policy pack (`policies/__main__.py`) wraps the same functions for `pulumi preview --policy-pack`.
This module imports nothing from the rest of the project, because `pulumi policy publish` ships only
this folder.

Every rule takes the plain dictionaries of MindIE Motor's `user_config.json` / `env.json` sections and
returns a list of `Finding`s; an empty list means the rule holds. Sources are cited per rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

SIDES = ("prefill", "decode")
ROLE_BY_SIDE = {"prefill": "kv_producer", "decode": "kv_consumer"}
STORE_CONNECTOR = "AscendStoreConnector"
UCM_CONNECTOR = "UCMConnector"
MULTI_CONNECTOR = "MultiConnector"

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
    """(path suffix, connector) for every connector of one side: the MultiConnector's list, or the single one."""
    if not kv_transfer_config:
        return []
    if kv_transfer_config.get("kv_connector") == MULTI_CONNECTOR:
        extra = kv_transfer_config.get("kv_connector_extra_config") or {}
        listed = extra.get("connectors") or []
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
                "set a value in (0, 1], e.g. 0.7 (the seed suggests 0.9, which measured 53-59% put success "
                "under a sustained writer).",
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
    store: Mapping[str, Any], engine_envs: Mapping[str, Mapping[str, Any]], uses_pool: bool
) -> list[Finding]:
    """default_kv_lease_ttl must exceed ASCEND_CONNECT_TIMEOUT and ASCEND_TRANSFER_TIMEOUT of both sides
    (seed 000 table and FAQ 3: otherwise decode reads objects whose lease has already expired).
    Applies when engines use the Mooncake pool (an AscendStoreConnector); a master that only serves
    the P/D transfer (the UCM example) holds no leased objects."""
    if store.get("backend") != "mooncake" or not uses_pool:
        return []
    lease = store.get("default_kv_lease_ttl")
    lease = MOONCAKE_LEASE_TTL_DEFAULT_MS if lease is None else lease
    findings = []
    for side in SIDES:
        env = engine_envs.get(side) or {}
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


def check_service(user_config: Mapping[str, Any], env: Mapping[str, Any]) -> list[Finding]:
    """Every rule above over one service's effective user_config.json and env.json."""
    kv_configs = {
        side: ((user_config.get(engine_section(side)) or {}).get("engine_config") or {}).get("kv_transfer_config")
        for side in SIDES
    }
    findings: list[Finding] = []
    for side in SIDES:
        findings += check_kv_role_by_side(side, kv_configs[side])
    store = user_config.get("kv_cache_store_config")
    if store:
        findings += check_backend_consistency(store.get("backend", "memcache"), kv_configs)
        findings += check_mooncake_eviction(store)
        uses_pool = any(store_connector_backends(kv_configs[side]) for side in SIDES)
        findings += check_lease_exceeds_timeouts(
            store, {side: env.get(engine_env_section(side)) or {} for side in SIDES}, uses_pool
        )
    return findings

