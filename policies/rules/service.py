"""Every mandatory rule over one service's effective configuration, as the settings layer runs them, and Motor's
instance-count limit."""

from __future__ import annotations

from typing import Any, Mapping

from .connectors import (
    check_dispatch_connector, check_hybrid_attention_connector, check_kv_role_by_side, check_layerwise_pool_backend,
)
from .env import check_hash_seed
from .kv_conductor import check_kv_cache_affinity, check_kv_event_ports
from .sections import DEFAULT_BACKEND, DEFAULT_DSHM_SIZE, SIDES, Finding, engine_envs, kv_transfer_configs
from .security import check_deploy_host_paths, check_host_log_dirs, check_system_namespace
from .store import (
    check_backend_consistency, check_fabric_segment_alignment, check_lease_exceeds_timeouts, check_mooncake_eviction,
    check_not_ucm_store_backend, check_standalone_store_protocol,
)
from .ucm import check_ucm_placement, check_ucm_storage


MOTOR_MAX_INSTANCES = 16  # deploy.py INSTANCE_NUM_MAX


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
    findings += check_host_log_dirs(user_config)
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
            findings += check_standalone_store_protocol(store)
    findings += check_kv_cache_affinity(user_config)
    findings += check_kv_event_ports(user_config)
    return findings


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
