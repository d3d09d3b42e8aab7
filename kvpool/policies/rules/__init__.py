"""The consistency rules of a KV-pool service, as pure functions over plain data.

One rule, one place: `registry.RULES` lists every rule once; the settings layer (`kvpool.settings.service`) runs its
mandatory entries to fail fast on `pulumi up`, and the policy pack (`kvpool/policies/catalog.py`) makes a policy of
each for `pulumi preview --policy-pack`. This package
imports nothing from the rest of the project, because `pulumi policy publish` ships only the pack's folder; its
modules import one another relatively, so it loads both as `kvpool.policies.rules` (the program) and as `rules` (the pack).

Every rule takes the plain dictionaries of MindIE Motor's `user_config.json` / `env.json` sections and returns a
list of `Finding`s; an empty list means the rule holds. Sources are cited per rule. One module per concern:

- `backends`: each KV store backend's facts (BACKENDS), as plain values
- `units`: Kubernetes quantities, Mooncake sizes, vllm-ascend versions (the one home of size parsing)
- `sections`: sides, sections and connectors of a configuration; `Finding`
- `connectors`: kv_role by side, the dispatch connector, the layout Motor's engine server starts with, hybrid
  attention, layerwise transfer with a pool
- `model_metadata`: what Motor's coordinator reads about the model (max_model_len)
- `model_kv`: the model's shape (config.json or a table of common models) and its KV bytes per token
- `engine_memory`: an engine container's memory limit against its /dev/shm and pool memory
- `pool_sizing`: a pool's capacity, write rate, block lifetime and eviction frontier; the pools that cannot work
- `store`: one backend, Mooncake eviction and lease, fabric segments, its transport, a standalone store's Motor, protection
- `ucm`: UCMConnector's place and storage
- `kv_conductor`: KV-cache affinity and the prefill KV-event ports
- `env`: ASCEND timeouts as vllm-ascend applies them, one hash seed
- `security`: plain-text secrets, host paths, system namespaces, privileged pods
- `naming`: duplicate object names
- `ports`: ports sharing a network namespace (a Motor role's pod, a host-network worker's node)
- `instances`: Motor's instance counts and the size of one instance
- `registry`: every rule with its policy's name, level, the stacks it applies to and its words (RULES), from which
  the settings' checks (check_service) and the pack's policies are built
- `service_set`: the one walk of an InferServiceSet's roles and the objects they describe

Callers import the package (`from kvpool.policies import rules; rules.check_x(...)`); every public name is here.
"""

from .backends import (
    BACKENDS,
    DEFAULT_BACKEND,
    MEMCACHE,
    MOONCAKE,
    YUANRONG,
    Backend,
    backend_facts,
    mooncake_floor,
    runs_standalone_store,
)
from .connectors import (
    DISPATCH_PROFILES,
    LAYERWISE_PATCH_FIXED_IN,
    check_dispatch_connector,
    check_engine_server_layout,
    check_hybrid_attention_connector,
    check_kv_role_by_side,
    check_layerwise_pool_backend,
    check_layerwise_pool_patch,
    check_pool_readers,
    check_transfer_connectors_match,
    dispatch_plan,
    hybrid_attention_reason,
)
from .engine_memory import check_engine_memory_limit
from .env import (
    ASCEND_CONNECT_TIMEOUT_DEFAULT_MS,
    HCCL_RDMA_RETRY_CNT_DEFAULT,
    HCCL_RDMA_TIMEOUT_DEFAULT,
    NUMERIC_ENV,
    SECRET_ENV_SECTIONS,
    check_cann_install_path,
    check_hash_seed,
    check_numeric_env,
    check_secret_env_shadowing,
    effective_connect_timeout_ms,
    effective_transfer_timeout_ms,
    env_int,
)
from .host_paths import (
    DATA_PARENTS,
    DEFAULT_HOST_LOG_DIR,
    DEFAULT_WEIGHT_MOUNT_PATH,
    LOG_SECTION_BY_ROLE,
    MOTOR_HOST_PATHS,
    YUANRONG_SOCKET_HOST_DIR,
    HostRoot,
    allowed_host_paths,
    check_host_paths,
    check_pod_host_paths,
    declared_root_problem,
    host_log_dir,
    host_path_backsteps,
    host_path_problem,
    normal_host_path,
)
from .kv_conductor import (
    KV_CACHE_AFFINITY,
    KV_EVENTS_CONFIG,
    MOTOR_DEFAULT_BLOCK_SIZE,
    check_kv_cache_affinity,
    check_kv_event_ports,
    coordinator_reads_model,
    kv_event_port,
    kv_event_ports,
)
from .model_kv import (
    DTYPE_BYTES,
    KNOWN_MODELS,
    MAX_MODEL_CONFIG_BYTES,
    ModelShape,
    known_model,
    model_shape,
    read_model_config,
    resolve_shape,
)
from .model_metadata import check_max_model_len
from .naming import check_duplicate_names
from .pool_sizing import (
    ENGINE_MEMORY_REQUEST,
    FRONTIER,
    MOONCAKE_EVICTION_PERIOD_S,
    PoolSizing,
    bytes_text,
    check_block_lifetime,
    check_engine_pod_memory,
    check_pool_capacity,
    check_standalone_segment_limit,
    default_min_lifetime_seconds,
    engine_pod_pool_bytes,
    engine_ranks,
    min_lifetime_seconds,
    pool_sizing,
    requests_bytes,
    unit_bytes_for_requests,
    unit_bytes_for_resident,
    unit_text,
)
from .ports import (
    NODE_PORT_KEYS,
    NODE_RESERVED_PORTS,
    ROLE_PORTS,
    check_ports,
    role_port,
)
from .sections import (
    DEFAULT_DSHM_SIZE,
    DISPATCH_CONNECTORS,
    HYBRID_CONNECTOR,
    MULTI_CONNECTOR,
    ROLE_BY_SIDE,
    SIDES,
    STORE_CONNECTOR,
    UCM_CONNECTOR,
    Finding,
    connectors_of,
    engine_env_section,
    engine_envs,
    engine_section,
    kv_transfer_configs,
    kv_transfer_path,
    store_connector_backends,
    transfer_connector,
    uses_pool,
)
from .security import (
    NOT_SECRET_LAST_WORDS,
    PRIVILEGED_CAPABILITIES,
    READ_VERBS,
    SECRET_WORDS,
    SHELL_ENV_NAMES,
    SYSTEM_NAMESPACES,
    changes_the_shell,
    check_plaintext_conf_secrets,
    check_plaintext_config_secrets,
    check_plaintext_secrets,
    check_privileged_container,
    check_privileged_pod,
    check_shell_env_names,
    check_system_namespace,
    conf_entries,
    is_read_only_configmap_role,
    looks_secret,
)
from .instances import (
    MAX_PODS_PER_INSTANCE,
    MOTOR_MAX_INSTANCES,
    check_instance_counts,
    check_instance_shape,
    check_instance_sizes,
)
from .registry import ADVISORY, MANDATORY, RULES, Rule, Service, Stacks, check_service
from .service_set import (
    SERVICE_SET_TYPE,
    role_pod_template,
    service_set_objects,
    service_set_roles,
)
from .store import (
    MOONCAKE_LEASE_TTL_DEFAULT_MS,
    SUSTAINABLE_EVICTION_RATIO,
    SUSTAINABLE_HIGH_WATERMARK,
    UCM_BACKEND_MESSAGE,
    check_backend_consistency,
    check_fabric_segment_alignment,
    check_lease_exceeds_timeouts,
    check_mooncake_eviction,
    check_mooncake_eviction_headroom,
    check_not_ucm_store_backend,
    check_referenced_backend,
    check_mooncake_protocol,
    check_standalone_store_motor,
    store_protection_problem,
)
from .ucm import check_ucm_placement, check_ucm_storage, check_ucm_wheel, ucm_store_configs
from .units import (
    K8S_QUANTITY,
    MOONCAKE_SIZE,
    is_decimal,
    k8s_quantity_bytes,
    mooncake_size_bytes,
    parse_version,
)

__all__ = [
    "BACKENDS", "MEMCACHE", "MOONCAKE", "YUANRONG", "Backend", "backend_facts",
    "DTYPE_BYTES", "ENGINE_MEMORY_REQUEST", "FRONTIER", "check_engine_pod_memory", "check_engine_memory_limit", "engine_pod_pool_bytes", "engine_ranks", "KNOWN_MODELS", "MOONCAKE_EVICTION_PERIOD_S", "ModelShape", "PoolSizing", "bytes_text",
    "check_block_lifetime", "check_pool_capacity", "check_standalone_segment_limit", "default_min_lifetime_seconds",
    "known_model", "min_lifetime_seconds", "model_shape", "mooncake_floor", "pool_sizing", "requests_bytes", "resolve_shape",
    "unit_bytes_for_requests", "unit_bytes_for_resident", "unit_text",
    "ASCEND_CONNECT_TIMEOUT_DEFAULT_MS", "DEFAULT_BACKEND", "DEFAULT_DSHM_SIZE", "DEFAULT_HOST_LOG_DIR",
    "DISPATCH_CONNECTORS", "HCCL_RDMA_RETRY_CNT_DEFAULT", "HCCL_RDMA_TIMEOUT_DEFAULT", "HYBRID_CONNECTOR",
    "K8S_QUANTITY", "KV_CACHE_AFFINITY", "KV_EVENTS_CONFIG", "LAYERWISE_PATCH_FIXED_IN", "LOG_SECTION_BY_ROLE",
    "MAX_PODS_PER_INSTANCE", "MOONCAKE_LEASE_TTL_DEFAULT_MS", "MOONCAKE_SIZE", "MOTOR_DEFAULT_BLOCK_SIZE",
    "MOTOR_MAX_INSTANCES", "MULTI_CONNECTOR", "NODE_PORT_KEYS",
    "NODE_RESERVED_PORTS", "NOT_SECRET_LAST_WORDS", "NUMERIC_ENV",
    "PRIVILEGED_CAPABILITIES", "READ_VERBS", "ROLE_BY_SIDE", "ROLE_PORTS", "SECRET_WORDS",
    "SECRET_ENV_SECTIONS", "SERVICE_SET_TYPE", "SIDES", "STORE_CONNECTOR", "SUSTAINABLE_EVICTION_RATIO", "SUSTAINABLE_HIGH_WATERMARK",
    "SYSTEM_NAMESPACES", "UCM_BACKEND_MESSAGE", "UCM_CONNECTOR",
    "Finding", "check_backend_consistency", "check_cann_install_path", "check_dispatch_connector",
    "check_duplicate_names", "check_engine_server_layout", "check_fabric_segment_alignment", "check_hash_seed", "check_host_paths",
    "check_hybrid_attention_connector", "check_instance_counts", "check_instance_shape", "check_instance_sizes",
    "check_kv_cache_affinity",
    "check_kv_event_ports", "check_kv_role_by_side", "check_layerwise_pool_backend", "check_layerwise_pool_patch",
    "check_lease_exceeds_timeouts", "check_max_model_len", "check_mooncake_eviction", "check_mooncake_eviction_headroom",
    "check_not_ucm_store_backend", "check_numeric_env", "check_plaintext_conf_secrets", "check_plaintext_config_secrets", "check_plaintext_secrets",
    "check_ports", "check_privileged_container", "check_privileged_pod", "check_referenced_backend", "check_secret_env_shadowing", "check_service",
    "check_mooncake_protocol", "check_standalone_store_motor", "check_system_namespace", "check_ucm_placement", "check_ucm_storage",
    "conf_entries", "connectors_of", "coordinator_reads_model", "effective_connect_timeout_ms", "effective_transfer_timeout_ms", "engine_env_section",
    "engine_envs", "engine_section", "env_int", "host_log_dir", "host_path_backsteps", "host_path_problem",
    "DATA_PARENTS", "DEFAULT_WEIGHT_MOUNT_PATH", "MOTOR_HOST_PATHS", "YUANRONG_SOCKET_HOST_DIR", "HostRoot",
    "allowed_host_paths", "check_pod_host_paths", "declared_root_problem", "normal_host_path", "is_decimal",
    "is_read_only_configmap_role", "k8s_quantity_bytes", "kv_event_port", "kv_event_ports", "kv_transfer_configs",
    "kv_transfer_path", "looks_secret", "mooncake_size_bytes", "parse_version", "role_pod_template", "role_port", "runs_standalone_store",
    "service_set_objects", "service_set_roles", "store_connector_backends", "store_protection_problem",
    "transfer_connector", "ucm_store_configs", "uses_pool",
    "SHELL_ENV_NAMES", "changes_the_shell", "check_shell_env_names", "MAX_MODEL_CONFIG_BYTES", "read_model_config",
    "ADVISORY", "MANDATORY", "RULES", "Rule", "Service", "Stacks",
    "DISPATCH_PROFILES", "check_transfer_connectors_match", "dispatch_plan", "hybrid_attention_reason", "check_pool_readers", "check_ucm_wheel",
]
