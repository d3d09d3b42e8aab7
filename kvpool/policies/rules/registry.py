"""The one registry of rules: each entry names a policy, its enforcement level, which stacks it applies to, what it
checks and how to fix it. The settings run every mandatory entry over the service's configuration (check_service);
the pack (kvpool/policies/catalog.py) makes one policy of every entry, in this order. Plain values only (levels and
severities as pulumi_policy spells them): this package imports nothing of the pack's SDK."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .connectors import (
    check_dispatch_connector,
    check_engine_server_layout,
    check_hybrid_attention_connector,
    check_kv_role_by_side,
    check_layerwise_pool_backend,
    check_layerwise_pool_patch,
    check_transfer_connectors_match,
)
from .engine_memory import check_engine_memory_limit
from .env import NUMERIC_ENV, check_hash_seed, check_numeric_env, effective_transfer_timeout_ms
from .host_paths import check_host_paths
from .instances import check_instance_counts, check_instance_sizes, section_as_written
from .kv_conductor import check_kv_cache_affinity, check_kv_event_ports
from .pool_sizing import (
    ENGINE_MEMORY_REQUEST,
    check_block_lifetime,
    check_engine_pod_memory,
    check_pool_capacity,
    check_standalone_segment_limit,
    pool_sizing,
)
from .ports import check_ports
from .backends import DEFAULT_BACKEND
from .sections import DEFAULT_DSHM_SIZE, Finding, engine_envs, kv_transfer_configs
from .security import check_shell_env_names, check_system_namespace
from .shared_memory import FAQ_DSHM_SIZE, FAQ_INPUT_TOKENS, check_memcache_long_context_shm
from .store import (
    check_backend_consistency,
    check_fabric_segment_alignment,
    check_lease_exceeds_timeouts,
    check_mooncake_eviction,
    check_mooncake_eviction_headroom,
    check_not_ucm_store_backend,
    check_referenced_backend,
)
from .ucm import check_ucm_placement, check_ucm_storage

MANDATORY, ADVISORY = "mandatory", "advisory"
CRITICAL, HIGH, MEDIUM = "critical", "high", "medium"


@dataclass(kw_only=True)
class Service:
    """One service's configuration as every rule reads it, whichever view built it: the settings (user_config.json
    and env.json as loaded) or the pack (motor-config and the engine pods, as rendered)."""

    user_config: Mapping[str, Any]
    env_sections: Mapping[str, Mapping[str, Any]]  # env.json's section name -> its variables
    engine_envs: Mapping[str, Mapping[str, Any]]  # side -> what its engine runs with
    # side -> the engine container's `resources` as rendered (pods.<side> of the settings, the engine pods' in the pack)
    engine_resources: Mapping[str, Mapping[str, Any]]
    owns_store: bool  # False when the store is another stack's (target_stack): its settings are checked there
    hybrid_attention: Mapping[str, bool] = field(default_factory=dict)
    vllm_ascend_version: str | None = None
    sizing: Mapping[str, Any] = field(default_factory=dict)  # the stack's kv_pool_sizing section
    # (stack, its `kv_store` output) when the store is another stack's, read through a StackReference.
    referenced_store: tuple[str, Mapping[str, Any]] | None = None

    def kv_transfer_configs(self) -> dict[str, Mapping[str, Any] | None]:
        return kv_transfer_configs(self.user_config)

    @property
    def store(self) -> Mapping[str, Any]:
        return self.user_config.get("kv_cache_store_config") or {}

    @property
    def deploy(self) -> Mapping[str, Any]:
        return section_as_written(self.user_config, "motor_deploy_config")


class Stacks(enum.Enum):
    """Which stacks a rule applies to; the guard is here once, for both views."""

    ANY = "any"
    WITH_POOL = "with a pool"  # kv_cache_store_config set: the stack's own store or another stack's
    OWNER = "owner of a store"  # a consumer's server-side settings are the owner's, checked in the owner's stack

    def hold(self, service: Service) -> bool:
        if self is Stacks.ANY:
            return True
        return bool(service.store) and (self is Stacks.WITH_POOL or service.owns_store)


Check = Callable[[Service, Mapping[str, Any]], list[Finding]]


@dataclass(frozen=True)
class Rule:
    name: str
    description: str
    remediation: str
    level: str
    # Over the service's configuration; None where only the rendered objects show it (the pack checks those).
    check: Check | None
    stacks: Stacks = Stacks.ANY
    severity: str = HIGH
    config: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # the policy's config schema properties

    def findings(self, service: Service, config: Mapping[str, Any]) -> list[Finding]:
        return self.check(service, config) if self.check is not None and self.stacks.hold(service) else []

    def defaults(self) -> dict[str, Any]:
        return {key: spec["default"] for key, spec in self.config.items() if "default" in spec}


def _kv_roles(service: Service, _: Mapping) -> list[Finding]:
    return [f for side, config in service.kv_transfer_configs().items() for f in check_kv_role_by_side(side, config)]


def _backend(service: Service, _: Mapping) -> list[Finding]:
    backend = service.store.get("backend", DEFAULT_BACKEND)
    findings = check_backend_consistency(backend, service.kv_transfer_configs())
    if service.referenced_store is not None:
        # The store actually used is the referenced stack's: its backend must match too.
        stack, contract = service.referenced_store
        findings += check_referenced_backend(backend, stack, contract.get("backend"))
    return findings


def _shell_env_names(service: Service, _: Mapping) -> list[Finding]:
    return check_shell_env_names({f"env.{section}": values for section, values in service.env_sections.items()
                                  if isinstance(values, Mapping)})


RULES: tuple[Rule, ...] = (
    Rule(
        "kvpool-configure-kv-role-by-side",
        "Checks that prefill connectors are kv_producer, decode connectors kv_consumer and UCMConnector kv_both "
        "(seed 000, FAQ 1: a wrong kv_role stops KV transfer between P and D).",
        "Write the side's role, or leave kv_role out so that it is filled in.",
        MANDATORY, _kv_roles,
    ),
    Rule(
        "kvpool-configure-lease-above-ascend-timeouts",
        "Checks that Mooncake's default_kv_lease_ttl exceeds ASCEND_CONNECT_TIMEOUT and ASCEND_TRANSFER_TIMEOUT of "
        f"every engine, an unset timeout counting as vllm-ascend's effective default ({effective_transfer_timeout_ms({})} ms "
        "for the transfer timeout) (seed 000, FAQ 3).",
        "Lower the engines' ASCEND timeouts below the lease, or raise default_kv_lease_ttl.",
        # The owner's lease; the consumer checks its timeouts against it when it reads the contract.
        MANDATORY, lambda s, _: check_lease_exceeds_timeouts(s.store, s.engine_envs, s.kv_transfer_configs()),
        Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-consistent-store-backend",
        "Checks that every AscendStoreConnector backend equals kv_cache_store_config.backend, and the backend of the "
        "store a StackReference points at (target_stack) (seed 000, FAQ 5).",
        "Set the same backend in both places.",
        MANDATORY, _backend, Stacks.WITH_POOL,
    ),
    Rule(
        "kvpool-disallow-ucm-as-store-backend",
        "Checks that UCM is configured as UCMConnector, never as a store backend (seed 000, FAQ 6).",
        "Use UCMConnector as connectors[1] of prefill; backend mooncake there only creates a Mooncake master.",
        MANDATORY, lambda s, _: check_not_ucm_store_backend(s.store, s.kv_transfer_configs()),
    ),
    Rule(
        "kvpool-configure-hybrid-attention-connector",
        "Checks that a hybrid-attention model transfers KV with MooncakeHybridConnector on both sides (seed 000, FAQ "
        "7: decode crashes and restarts otherwise): declared with hybrid_attention, or read from the engine config "
        "(no_disable_hybrid_kv_cache_manager) and the model's config.json where the preview reads it (compress_ratios, "
        "mixed layer_types).",
        "Set connectors[0] (or the single connector) to MooncakeHybridConnector on both sides.",
        MANDATORY, lambda s, _: check_hybrid_attention_connector(s.user_config, s.hybrid_attention),
    ),
    Rule(
        "kvpool-configure-mooncake-eviction-ratios",
        "Checks that a Mooncake store sets eviction_high_watermark_ratio and eviction_ratio within range "
        "(seed 000: deploy.py refuses Mooncake without them; mooncake_master exits on a ratio outside [0, 1]).",
        "Set both ratios, e.g. 0.6 and 0.4.",
        MANDATORY, lambda s, _: check_mooncake_eviction(s.store), Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-sustainable-mooncake-eviction",
        "Checks that Mooncake's eviction leaves a sustained writer room. Thresholds from the frontier measured on "
        "the real mooncake_master (bench/results/eviction.md): a writer filling 3x the pool back to back, about a "
        "quarter of it per 10 ms eviction period, kept every put in every run at 0.6/0.4, 0.5/0.4 and 0.4/0.4, "
        "79-100 % at 0.7/0.2, 40-54 % at 0.9/0.1; llm-d users report the same.",
        "Lower the watermark and raise the eviction ratio, or pace the writers.",
        ADVISORY,
        lambda s, config: check_mooncake_eviction_headroom(
            s.store, s.kv_transfer_configs(), config["maxHighWatermark"], config["minEvictionRatio"]
        ),
        Stacks.OWNER, MEDIUM,
        config={
            "maxHighWatermark": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.6},
            "minEvictionRatio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.4},
        },
    ),
    Rule(
        "kvpool-configure-pool-capacity",
        "Checks that the KV pool holds something, and at least one max_model_len request's KV for each engine that "
        "writes to it, below the eviction watermark; KV bytes per token from the model's config.json or the "
        "planner's table (docs/sizing.md; Mooncake issue 197: a full pool fails every put with NO_AVAILABLE_HANDLE).",
        "Raise the pool's size to the value the message names.",
        MANDATORY, lambda s, _: check_pool_capacity(pool_sizing(s.user_config, s.sizing)), Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-mooncake-segment-limit",
        "Checks that a standalone Mooncake store's global_segment_size is at most 64 GiB (kvcache-ai/Mooncake issue "
        "1382: mooncake_store_service fails to register a larger segment; the embedded store splits it, PR 647).",
        "Use a segment of at most 64GB, or store_mode embedded.",
        MANDATORY, lambda s, _: check_standalone_segment_limit(s.store), Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-engine-pod-pool-memory",
        f"Checks that the pool memory of one engine pod's ranks (a Mooncake segment and local buffer, or a MemCache "
        f"LocalService, per rank: vllm-ascend's KVPoolWorker starts one in every worker) fits the memory the engine "
        f"pod requests (pods.prefill.requests.memory, pods.decode.requests.memory; default "
        f"{ENGINE_MEMORY_REQUEST}).",
        "Lower the segment to the size the message names, raise the side's pods.<side>.requests.memory, or spread the "
        "ranks over more pods.",
        MANDATORY, lambda s, _: check_engine_pod_memory(s.user_config, s.engine_resources), Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-engine-memory-limit",
        "Checks that an engine container's memory limit, where pods.<side>.limits.memory sets one, exceeds its "
        "memory-backed /dev/shm (motor_deploy_config.dshm_size, an emptyDir of medium Memory) plus, in the store's own "
        "stack, the pool memory its pod's ranks hold (as kvpool-configure-engine-pod-pool-memory sums it): Kubernetes "
        "counts what /dev/shm holds against the container's memory limit, so the engine is OOM-killed when vLLM and "
        "the KV pool fill it.",
        "Raise pods.<side>.limits.memory to the size the message names, or lower motor_deploy_config.dshm_size.",
        MANDATORY, lambda s, _: check_engine_memory_limit(s.user_config, s.engine_resources, s.owns_store),
    ),
    Rule(
        "kvpool-configure-block-lifetime",
        "Checks that a block stays in the KV pool at least kv_pool_sizing.min_block_lifetime_seconds (default: the "
        "engines' longest ASCEND connect or transfer timeout) at the writers' rate, under the stack's eviction "
        "settings (docs/sizing.md).",
        "Raise the pool's size, or set kv_pool_sizing.prefill_tokens_per_second to the measured rate.",
        ADVISORY, lambda s, _: check_block_lifetime(s.user_config, s.engine_envs, s.sizing), Stacks.OWNER, MEDIUM,
    ),
    Rule(
        "kvpool-configure-ucm-placement",
        "Checks that UCMConnector sits only on prefill and only as connectors[1] of a MultiConnector (seed 000: "
        "decode never loads UCM; Motor refuses UCM at connectors[0]).",
        "Move UCMConnector to prefill connectors[1]; give decode only the transfer connector.",
        MANDATORY, lambda s, _: check_ucm_placement(s.kv_transfer_configs()),
    ),
    Rule(
        "kvpool-configure-ucm-storage",
        "Checks that UCM's storage_backends is a mounted storage[] volume, that /dev/shm is larger than its cache "
        "buffer and that its Posix budget fits the volume (Motor's UCM deployment guide).",
        "Mount a storage entry at storage_backends; size dshm_size and the volume above UCM's capacities.",
        MANDATORY,
        lambda s, _: check_ucm_storage(s.kv_transfer_configs()["prefill"], s.deploy.get("storage") or [],
                                       s.deploy.get("dshm_size", DEFAULT_DSHM_SIZE)),
    ),
    Rule(
        "kvpool-configure-memcache-long-context-shm",
        f"Checks that the engines' /dev/shm (motor_deploy_config.dshm_size) is at least {FAQ_DSHM_SIZE} where an "
        f"engine loads the MemCache pool with a max_model_len of {FAQ_INPUT_TOKENS} tokens or more (Motor's MemCache "
        f"FAQ: long-sequence requests crash decode with shm_crash at the default 4Gi; 128 requests of 80k input and "
        f"1k output tokens ran at {FAQ_DSHM_SIZE}).",
        f"Set motor_deploy_config.dshm_size: {FAQ_DSHM_SIZE} or more.",
        ADVISORY,
        lambda s, _: check_memcache_long_context_shm(s.user_config, s.kv_transfer_configs(), s.store,
                                                     s.deploy.get("dshm_size")),
        severity=MEDIUM,
    ),
    Rule(
        "kvpool-configure-dispatch-connector",
        "Checks that each side advertises a P/D plan Motor dispatches with, the same on both: connectors[0] in its "
        "whitelist (MooncakeConnectorV1, MooncakeHybridConnector, NixlConnector hand off; MooncakeLayerwiseConnector "
        "triggers) or motor_engine_<side>_config.dispatch_profile set (Motor's PD disaggregation design: unknown "
        "connectors fail closed, and a handoff prefill pairs with no trigger decode).",
        "Use a whitelisted transfer connector, or set dispatch_profile alike on both sides.",
        MANDATORY, lambda s, _: check_dispatch_connector(s.user_config),
    ),
    Rule(
        "kvpool-configure-matched-transfer-connectors",
        "Checks that prefill and decode run the two ends of one P/D transfer: the same connector (connectors[0] of "
        "a MultiConnector, or the single one) with the same use_layerwise and send_type (seed 000: P and D transfer "
        "KV through one connector; otherwise decode never receives prefill's KV cache).",
        "Write the same transfer connector and transfer options on both sides.",
        MANDATORY, lambda s, _: check_transfer_connectors_match(s.kv_transfer_configs()),
    ),
    Rule(
        "kvpool-engine-server-connector-layout",
        "Checks that each engine's kv_transfer_config is one Motor's engine server starts with: present on prefill "
        "and decode, and a MultiConnector's connectors[1] a store connector (AscendStoreConnector, "
        "MooncakeConnectorStoreV1, UCMConnector); otherwise the engine fails before vLLM starts.",
        "Give each side a kv_transfer_config, with the store connector second in a MultiConnector.",
        MANDATORY, lambda s, _: check_engine_server_layout(s.kv_transfer_configs()),
    ),
    Rule(
        "kvpool-configure-layerwise-pool-patch",
        "Checks that layerwise transfer with a KV pool does not run on vllm-ascend before v0.17.0rc2 without Motor's "
        "vllm_multi_connector.patch (seed 001).",
        "Apply vllm_multi_connector.patch in the image, or use vllm-ascend v0.17.0rc2 or later.",
        ADVISORY, lambda s, _: check_layerwise_pool_patch(s.vllm_ascend_version, s.kv_transfer_configs()),
        severity=MEDIUM,
    ),
    Rule(
        "kvpool-configure-consistent-hash-seed",
        "Checks that PYTHONHASHSEED is set, not random, and equal on every engine that uses the pool (vllm-ascend kv_pool: "
        "different seeds hash blocks differently and every lookup misses).",
        "Set one fixed PYTHONHASHSEED (e.g. \"0\") for every engine.",
        MANDATORY, lambda s, _: check_hash_seed(s.engine_envs, s.kv_transfer_configs()),
    ),
    Rule(
        "kvpool-configure-distinct-ports",
        "Checks that the ports of each Motor role's pod (api_config: infer, management, observability) are distinct "
        "port numbers, and that a Yuanrong store's host-network worker port is none of the node's own daemons' ports "
        "(22, 10250, ...: Kubernetes \"Ports and Protocols\"), below 1024 or a NodePort of the service.",
        "Give each port of a role its own number (api_config), and the worker a free unprivileged port.",
        MANDATORY, lambda s, _: check_ports(s.user_config),
    ),
    Rule(
        "kvpool-configure-numeric-env",
        f"Checks that the engines' variables a process parses as a number ({', '.join(NUMERIC_ENV)}) hold "
        "whole numbers and PYTHONHASHSEED one Python accepts (Motor node_manager.py:628, coordinator.py:118, "
        "fastapi_middleware.py:100,108; vllm-ascend kv_transfer/utils/utils.py).",
        "Write the variable as digits only, e.g. \"10000\".",
        MANDATORY, lambda s, _: check_numeric_env(s.env_sections),
    ),
    Rule(
        "kvpool-configure-layerwise-pool-backend",
        "Checks that use_layerwise on AscendStoreConnector is combined only with the memcache backend "
        "(vllm-ascend layerwise_kv_pool).",
        "Remove use_layerwise from the store connector, or switch the store to memcache.",
        MANDATORY,
        lambda s, _: check_layerwise_pool_backend(s.kv_transfer_configs(), s.store.get("backend", DEFAULT_BACKEND)),
    ),
    Rule(
        "kvpool-configure-instance-counts",
        "Checks that prefill and decode instance counts are within Motor's 1..16 (deploy.py INSTANCE_NUM_MAX).",
        "Use 1 to 16 instances per role.",
        MANDATORY, lambda s, _: check_instance_counts(s.deploy),
    ),
    Rule(
        "kvpool-configure-instance-sizes",
        "Checks that an instance spans 1..16 pods and that its DP x TP x PP ranks fit the NPUs of its pods (vLLM runs "
        "one rank per NPU).",
        "Lower data/tensor/pipeline_parallel_size, or raise the instance's pods or NPUs per pod.",
        MANDATORY, lambda s, _: check_instance_sizes(s.user_config),
    ),
    Rule(
        "kvpool-configure-fabric-segment-alignment",
        "Checks that Mooncake's global_segment_size is a whole number of GiB when ASCEND_ENABLE_USE_FABRIC_MEM=1 "
        "(vllm-ascend kv_pool, A3 fabric memory).",
        "Use a segment size that is a multiple of 1GB.",
        MANDATORY, lambda s, _: check_fabric_segment_alignment(s.store, s.engine_envs), Stacks.OWNER,
    ),
    Rule(
        "kvpool-configure-kv-cache-affinity",
        "Checks that scheduler_type kv_cache_affinity comes with a KV conductor, and a conductor with what it indexes: "
        "prefill kv-events-config in the form Motor's coordinator registers, prefix caching, the block size the "
        "coordinator reads, and a Mooncake pool when it follows the pool's master (Motor KV_cache_affinity.md, "
        "conductor_api_client.py, mooncake_config.py).",
        "Add kv_conductor_config and prefill kv-events-config {publisher: zmq, enable_kv_cache_events: true, "
        "endpoint: tcp://*:<port>}; keep prefix caching on; follow the pool's master only with backend mooncake.",
        MANDATORY, lambda s, _: check_kv_cache_affinity(s.user_config),
    ),
    Rule(
        "kvpool-configure-kv-event-ports",
        "Checks that the prefill KV-event ports (endpoint and replay_endpoint, one per DP rank) collide with no other "
        "port of the prefill pod (KV transfer, vLLM's DP RPC and API ports, a standalone store): vLLM's KV-event "
        "publisher binds them in the pod.",
        "Move kv-events-config's endpoint or replay_endpoint to ports no other process of the pod binds.",
        MANDATORY, lambda s, _: check_kv_event_ports(s.user_config),
    ),
    Rule(
        "kvpool-disallow-duplicate-names",
        "Checks that no two Kubernetes objects of one kind share a namespace and name.",
        "Rename one of the objects.",
        MANDATORY, None,
    ),
    Rule(
        "kvpool-disallow-plaintext-secrets",
        "Checks that no ConfigMap entry (user_config.json's sections and the MemCache conf included) or "
        "container env value with a secret-looking name holds plain text (secrets only as Pulumi secrets).",
        "Store the value with `pulumi config set --secret` and deliver it through a Secret.",
        MANDATORY, None, severity=CRITICAL,
    ),
    Rule(
        "kvpool-disallow-undeclared-host-paths",
        "Checks that every hostPath of every pod is on the allow-list: a node path Motor's deployer mounts "
        "(the Ascend driver's files, /etc/hccn.conf, /var/coredump, the RDMA devices, A5's UB transport), writable "
        "only where the pod writes it, or below Motor's log folder /root/ascend/log or a root the stack declares "
        "(weight_mount_path read-only, motor_deploy_config.host_path_roots.logs and .storage, each below /mnt, /data "
        "or /srv). Everything else (/etc/cron.d, /root/.kube, /usr/local/bin ...) is refused.",
        "Mount a folder below a root declared in motor_deploy_config.host_path_roots (below /mnt, "
        "/data or /srv), or Motor's node path read-only as Motor mounts it.",
        MANDATORY, lambda s, _: check_host_paths(s.user_config), severity=CRITICAL,
    ),
    Rule(
        "kvpool-disallow-system-namespaces",
        "Checks that no object lives in a namespace Kubernetes owns (kube-system, kube-public, "
        "kube-node-lease, default), except the read-only ConfigMap Role Motor's controller holds where MindX DL writes "
        "its device reports, and its binding (kvpool/internal/rbac.py).",
        "Set motor_deploy_config.job_id to a namespace of the service's own.",
        MANDATORY, lambda s, _: check_system_namespace(s.deploy.get("job_id"), "motor_deploy_config.job_id"),
    ),
    Rule(
        "kvpool-disallow-shell-env-names",
        "Checks that no container's environment sets a variable bash, the dynamic loader or the C library acts on "
        "(BASH_ENV, SHELLOPTS, PS4, IFS, PATH, BASH_FUNC_*, LD_*, GLIBC_TUNABLES, GCONV_PATH ...): every Motor "
        "container starts with bash -c, so such a value would run as code however it is quoted.",
        "Remove the variable from env.json and secret_env; set a library preload in the image.",
        MANDATORY, _shell_env_names, severity=CRITICAL,
    ),
    Rule(
        "kvpool-disallow-privileged-containers",
        "Checks that no container is privileged, adds a capability that amounts to root on the node "
        "(SYS_ADMIN, NET_ADMIN, ALL ...) or allows privilege escalation, and that no pod shares the node's PID or IPC "
        "namespace.",
        "Remove privileged, the added capabilities and hostPID/hostIPC.",
        MANDATORY, None, severity=CRITICAL,
    ),
    Rule(
        "kvpool-enable-store-protection",
        "Checks that the KV store objects of a production stack are protected from deletion (one pool "
        "serves every consumer; deleting it empties all their caches).",
        "Set kv_cache_store_config.protect: true.",
        MANDATORY, None,
        config={"productionStacks": {"type": "string", "default": r"(prod|production)([-_].*)?|.*[-_]prod"}},
    ),
)


def check_service(
    user_config: Mapping[str, Any],
    env: Mapping[str, Any],
    hybrid_attention: Mapping[str, bool] | None = None,
    owns_store: bool = True,
    sizing: Mapping[str, Any] | None = None,
    *,
    engine_resources: Mapping[str, Any],
) -> list[Finding]:
    """Every mandatory rule of RULES over one service's effective user_config.json and env.json, as the settings
    layer runs them. `owns_store` False: the store is another stack's, so its server-side settings (eviction, lease,
    segment) are that stack's to check. `sizing`: the stack's kv_pool_sizing section (the model's shape, the
    writers' rate). `engine_resources`: side -> the engine container's resources (check_engine_pod_memory)."""
    service = Service(user_config=user_config, env_sections=env, engine_envs=engine_envs(env),
                      engine_resources=engine_resources, owns_store=owns_store,
                      hybrid_attention=hybrid_attention or {}, sizing=sizing or {})
    return [finding for rule in RULES if rule.level == MANDATORY for finding in rule.findings(service, rule.defaults())]
