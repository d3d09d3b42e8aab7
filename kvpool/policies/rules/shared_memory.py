"""/dev/shm for an engine that pools through MemCache with long requests.

Motor's MemCache guide (docs/zh/user_guide/features/kv_cache_store/backend/memcache.md of the newer Motor, its FAQ
"开启 MemCache 池化后，长序列请求把 Decode 实例打挂，报错 shm_crash"): with MemCache pooling, short requests run and
long-sequence requests crash the decode instance with `shm_crash`, because the engine pod's /dev/shm defaults to 4Gi;
the fix is `motor_deploy_config.dshm_size: 32Gi` (more under heavier load), load-tested there with 128 requests of
80k input and 1k output tokens. That is the only length the FAQ measured, so the advisory fires from it: an engine
that loads the MemCache pool and may be sent a request of that length (its max_model_len) with a /dev/shm below
32Gi."""

from __future__ import annotations

from typing import Any, Mapping

from .backends import DEFAULT_BACKEND, MEMCACHE
from .model_kv import engine_value
from .sections import DEFAULT_DSHM_SIZE, SIDES, Finding, engine_section, store_connector_backends
from .units import K8S_QUANTITY, k8s_quantity_bytes

FAQ_DSHM_SIZE = "32Gi"
FAQ_INPUT_TOKENS = 80_000  # "128 条请求（80k-1k）": 80k tokens in, 1k out


def check_memcache_long_context_shm(
    user_config: Mapping[str, Any], kv_transfer_configs: Mapping[str, Mapping[str, Any] | None],
    store: Mapping[str, Any], written_dshm_size: Any,
) -> list[Finding]:
    """motor_deploy_config.dshm_size (None where not written) is at least the FAQ's 32Gi where an engine loads the
    MemCache pool and its max_model_len admits the FAQ's 80k-token requests."""
    dshm_size = DEFAULT_DSHM_SIZE if written_dshm_size is None else written_dshm_size
    if not isinstance(dshm_size, str) or not K8S_QUANTITY.fullmatch(dshm_size):
        return []  # the settings model names a dshm_size that is no size
    if k8s_quantity_bytes(dshm_size) >= k8s_quantity_bytes(FAQ_DSHM_SIZE):
        return []
    pool_backend = store.get("backend", DEFAULT_BACKEND)
    long_sides = []
    for side in SIDES:
        backends = [backend or pool_backend for _, backend in store_connector_backends(kv_transfer_configs.get(side))]
        engine_config = (user_config.get(engine_section(side)) or {}).get("engine_config") or {}
        length = engine_value(engine_config, "max_model_len") if isinstance(engine_config, Mapping) else None
        if MEMCACHE.name in backends and isinstance(length, int) and not isinstance(length, bool) \
                and length >= FAQ_INPUT_TOKENS:
            long_sides.append(f"{side}'s max_model_len is {length}")
    if not long_sides:
        return []
    written = " (the default)" if written_dshm_size is None else ""
    return [Finding(
        "motor_deploy_config.dshm_size",
        f"is {dshm_size}{written} while {' and '.join(long_sides)} tokens with the MemCache pool: Motor's MemCache "
        f"FAQ reports long-sequence requests crashing decode with shm_crash at a 4Gi /dev/shm, and 128 requests of "
        f"{FAQ_INPUT_TOKENS // 1000}k input and 1k output tokens running at {FAQ_DSHM_SIZE}. Set dshm_size: "
        f"{FAQ_DSHM_SIZE} (more under heavier load), with pods.<side>.limits.memory above it where one is set.",
        example=FAQ_DSHM_SIZE,
    )]
