"""Every mandatory rule over one service's effective configuration, as the settings layer runs them, Motor's
instance-count limit and the size of one instance."""

from __future__ import annotations

from typing import Any, Mapping

from .connectors import (
    check_dispatch_connector,
    check_engine_server_layout,
    check_hybrid_attention_connector,
    check_kv_role_by_side,
    check_layerwise_pool_backend,
    check_transfer_connectors_match,
)
from .env import check_hash_seed, check_numeric_env
from .host_paths import check_host_paths
from .kv_conductor import check_kv_cache_affinity, check_kv_event_ports
from .pool_sizing import (
    check_engine_pod_memory,
    check_pool_capacity,
    check_standalone_segment_limit,
    pool_sizing,
)
from .ports import check_ports
from .sections import (
    DEFAULT_BACKEND,
    DEFAULT_DSHM_SIZE,
    SIDES,
    Finding,
    engine_envs,
    engine_section,
    kv_transfer_configs,
)
from .security import check_shell_env_names, check_system_namespace
from .store import (
    check_backend_consistency,
    check_fabric_segment_alignment,
    check_lease_exceeds_timeouts,
    check_mooncake_eviction,
    check_not_ucm_store_backend,
)
from .ucm import check_ucm_placement, check_ucm_storage

MOTOR_MAX_INSTANCES = 16  # deploy.py INSTANCE_NUM_MAX
# Pods of one instance: Motor's largest example spans 4 (GLM-5 on A2); 16 pods of 16 NPUs is a 256-NPU engine.
MAX_PODS_PER_INSTANCE = 16
PARALLEL_SIZES = ("data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size")


def check_service(
    user_config: Mapping[str, Any],
    env: Mapping[str, Any],
    hybrid_attention: Mapping[str, bool] | None = None,
    owns_store: bool = True,
    sizing: Mapping[str, Any] | None = None,
    *,
    engine_resources: Mapping[str, Any],
) -> list[Finding]:
    """Every mandatory rule over one service's effective user_config.json and env.json. `owns_store` False: the
    store is another stack's, so its server-side settings (eviction, lease, segment) are that stack's to check.
    `sizing`: the stack's kv_pool_sizing section (the model's shape, the writers' rate). `engine_resources`: side ->
    the engine container's resources (check_engine_pod_memory)."""
    kv = kv_transfer_configs(user_config)
    engines = engine_envs(env)
    deploy = user_config.get("motor_deploy_config") or {}
    findings: list[Finding] = []
    for side in SIDES:
        findings += check_kv_role_by_side(side, kv[side])
    findings += check_ucm_placement(kv)
    findings += check_ucm_storage(kv["prefill"], deploy.get("storage") or [], deploy.get("dshm_size", DEFAULT_DSHM_SIZE))
    findings += check_hybrid_attention_connector(user_config, hybrid_attention or {})
    findings += check_dispatch_connector(user_config)
    findings += check_transfer_connectors_match(kv)
    findings += check_engine_server_layout(kv)
    findings += check_hash_seed(engines, kv)
    findings += check_numeric_env(env)
    findings += check_shell_env_names({f"env.{section}": values for section, values in env.items()
                                       if isinstance(values, Mapping)})
    findings += check_instance_shape(user_config)
    findings += check_host_paths(user_config)
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
            findings += check_standalone_segment_limit(store)
            findings += check_pool_capacity(pool_sizing(user_config, sizing))
            findings += check_engine_pod_memory(user_config, engine_resources)
    findings += check_kv_cache_affinity(user_config)
    findings += check_kv_event_ports(user_config)
    findings += check_ports(user_config)
    return findings


def check_instance_shape(user_config: Mapping[str, Any]) -> list[Finding]:
    """The instance rules, which hold on user_config as written (they read no default the settings model fills in):
    the settings loader also runs them when the model refuses a field nothing can stand in for (an unknown
    hardware_type), so that one report still says every problem."""
    return check_instance_counts(_section(user_config, "motor_deploy_config")) + check_instance_sizes(user_config)


def _section(user_config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """A section as written, or none where the file has something else there (reported by the settings model)."""
    section = user_config.get(name)
    return section if isinstance(section, Mapping) else {}


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


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_instance_sizes(user_config: Mapping[str, Any]) -> list[Finding]:
    """An instance spans 1..MAX_PODS_PER_INSTANCE pods, and its vLLM world (DP x TP x PP ranks, one NPU each) fits the
    NPUs of its pods: a larger world never starts, and an unbounded one is no configuration (Motor's examples all
    fit, e.g. GLM-5 on A2: prefill DP 4 x TP 8 on 4 pods of 8 NPUs)."""
    deploy = _section(user_config, "motor_deploy_config")
    findings = []
    for side in SIDES:
        letter = side[0]
        pods_key, npus_key = f"single_{letter}_instance_pod_num", f"{letter}_pod_npu_num"
        pods, npus = _int_or_none(deploy.get(pods_key, 1)), _int_or_none(deploy.get(npus_key))
        if pods is None or not 1 <= pods <= MAX_PODS_PER_INSTANCE:
            findings.append(Finding(
                f"motor_deploy_config.{pods_key}",
                f"is {pods if pods is not None else deploy.get(pods_key)!r}; one {side} instance spans 1 to "
                f"{MAX_PODS_PER_INSTANCE} pods.",
            ))
            continue
        engine = _section(user_config, engine_section(side)).get("engine_config")
        if npus is None or not isinstance(engine, Mapping):
            continue
        sizes = {key: _int_or_none(engine.get(key, 1)) or 1 for key in PARALLEL_SIZES}
        world = sizes["data_parallel_size"] * sizes["tensor_parallel_size"] * sizes["pipeline_parallel_size"]
        if world > pods * npus:
            findings.append(Finding(
                f"{engine_section(side)}.engine_config",
                f"data_parallel_size x tensor_parallel_size x pipeline_parallel_size is "
                f"{' x '.join(str(size) for size in sizes.values())} = {world} ranks, but an instance has {pods} "
                f"pod(s) x {npus} NPUs ({npus_key}) = {pods * npus} NPUs and vLLM places one rank per NPU; lower the "
                f"sizes or raise {npus_key} / {pods_key}.",
            ))
    return findings
