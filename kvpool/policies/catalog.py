"""The policies of the motor-kvpool pack: each wraps one rule of the rules package (one rule, one place).

Names say kind, verb and property; descriptions start "Checks that" and cite where the rule comes from; the
message of a violation is the rule's own text, naming the field to edit and what to write.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import rules
from .service_view import ServiceView, holds_store, pod_templates, service_view

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY
Check = Callable[[ServiceView, dict[str, Any]], list[rules.Finding]]


def _stack_policy(
    name: str, description: str, level: EnforcementLevel, check: Check, remediation: str,
    severity: Severity = Severity.HIGH, config_schema: PolicyConfigSchema | None = None,
) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        view = service_view(args.resources)
        if view is None:
            return
        for finding in check(view, dict(args.get_config() or {})):
            report(str(finding), view.config_urn)

    return StackValidationPolicy(
        name=name, description=description, validate=validate, enforcement_level=level,
        config_schema=config_schema, remediation_steps=remediation, severity=severity,
    )


def _store(view: ServiceView) -> dict[str, Any]:
    return view.user_config.get("kv_cache_store_config") or {}


def _kv_roles(view: ServiceView, _: dict) -> list[rules.Finding]:
    return [f for side, config in view.kv_transfer_configs().items() for f in rules.check_kv_role_by_side(side, config)]


def _lease(view: ServiceView, _: dict) -> list[rules.Finding]:
    if not view.owns_store:
        return []  # the owner's lease; the consumer checks its timeouts against it when it reads the contract
    return rules.check_lease_exceeds_timeouts(_store(view), view.engine_envs, view.kv_transfer_configs())


def _backend(view: ServiceView, _: dict) -> list[rules.Finding]:
    store = _store(view)
    if not store:
        return []
    backend = store.get("backend", rules.DEFAULT_BACKEND)
    findings = rules.check_backend_consistency(backend, view.kv_transfer_configs())
    if view.referenced_store is not None:
        # The store actually used is the referenced stack's: its backend must match too.
        stack, contract = view.referenced_store
        findings += rules.check_referenced_backend(backend, stack, contract.get("backend"))
    return findings


def _owned_store(view: ServiceView) -> dict[str, Any]:
    """The store section when this stack runs the store; a consumer's server-side settings are not its own."""
    return _store(view) if view.owns_store else {}


def _eviction_headroom(view: ServiceView, config: dict) -> list[rules.Finding]:
    return rules.check_mooncake_eviction_headroom(
        _owned_store(view), view.kv_transfer_configs(), config["maxHighWatermark"], config["minEvictionRatio"]
    )


def _pool_capacity(view: ServiceView, _: dict) -> list[rules.Finding]:
    if not view.owns_store:
        return []  # the owner's pool: sized and checked in the owner's stack
    return rules.check_pool_capacity(rules.pool_sizing(view.user_config, view.sizing))


def _engine_pod_memory(view: ServiceView, _: dict) -> list[rules.Finding]:
    if not view.owns_store:
        return []  # the owner's segment: checked against its engine pods in its stack
    return rules.check_engine_pod_memory(view.user_config, view.engine_resources)


def _block_lifetime(view: ServiceView, _: dict) -> list[rules.Finding]:
    if not view.owns_store:
        return []
    return rules.check_block_lifetime(view.user_config, view.engine_envs, view.sizing)


def _duplicate_names(args: StackValidationArgs, report: ReportViolation) -> None:
    # By URN, not in the order the engine lists them (its snapshot order, unlike the offline runner's): the same
    # object of a pair is "the second" under `pulumi preview` and offline.
    kube = sorted((r for r in args.resources
                   if r.resource_type.startswith("kubernetes:") and not r.resource_type.startswith("kubernetes:pulumi")),
                  key=lambda r: r.urn)
    keys = [(r.resource_type, (r.props.get("metadata") or {}).get("namespace", ""),
             (r.props.get("metadata") or {}).get("name", r.name)) for r in kube]
    for index, message in rules.check_duplicate_names(keys):
        report(message, kube[index].urn)


def _env_values(containers: Iterable[dict]) -> Iterable[tuple[str, dict[str, Any]]]:
    for container in containers:
        yield container.get("name", "?"), {e["name"]: e.get("value") for e in container.get("env") or []}


def _plaintext_secrets(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type == "kubernetes:core/v1:ConfigMap":
        data = args.props.get("data") or {}
        findings = rules.check_plaintext_secrets(data, "data")
        for key in data:
            if str(key).endswith(".json"):  # motor-config's user_config.json: its pass-through sections
                try:
                    document = json.loads(data[key])
                except (TypeError, ValueError, RecursionError):
                    continue
                findings += rules.check_plaintext_config_secrets(document, f"data[{key}]")
            elif str(key).endswith(".conf") and isinstance(data[key], str):  # the MemCache LocalService conf
                findings += rules.check_plaintext_conf_secrets(data[key], f"data[{key}]")
        for finding in findings:
            report(f"ConfigMap {args.name}: {finding}")
    for template in pod_templates(args.resource_type, args.props):
        for container, env in _env_values((template.get("spec") or {}).get("containers") or []):
            for finding in rules.check_plaintext_secrets(env, f"containers[{container}].env"):
                report(f"{args.resource_type.split(':')[-1]} {args.name}: {finding}")


def _kind(resource_type: str) -> str:
    return resource_type.split(":")[-1]


def _undeclared_host_paths(args: StackValidationArgs, report: ReportViolation) -> None:
    """Every hostPath of every pod against the service's allow-list, built from the user_config.json in motor-config
    as the settings build it (a stack without motor-config: Motor's node paths and the default weights only)."""
    view = service_view(args.resources)
    allowed = rules.allowed_host_paths(view.user_config if view is not None else {})
    for resource in args.resources:
        for template in pod_templates(resource.resource_type, resource.props):
            for finding in rules.check_pod_host_paths(template.get("spec") or {}, allowed):
                report(f"{_kind(resource.resource_type)} {resource.name}: {finding}", resource.urn)


def _privileged_containers(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for template in pod_templates(args.resource_type, args.props):
        for finding in rules.check_privileged_pod(template.get("spec") or {}, "spec"):
            report(f"{_kind(args.resource_type)} {args.name}: {finding}")


def _shell_env_names(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for template in pod_templates(args.resource_type, args.props):
        spec = template.get("spec") or {}
        names = {f"{_kind(args.resource_type)} {args.name}: containers.{container.get('name', '?')}.env":
                 [entry.get("name", "") for entry in container.get("env") or []]
                 for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]}
        for finding in rules.check_shell_env_names(names):
            report(str(finding))


def _system_namespaces(args: StackValidationArgs, report: ReportViolation) -> None:
    """Nothing in a namespace Kubernetes owns, but for the read-only ConfigMap Role Motor's controller needs there
    (kvpool/internal/rbac.py: MindX DL writes its device reports to kube-system) and its binding to our account."""
    kube = [r for r in args.resources if r.resource_type.startswith("kubernetes:")]
    readers = {
        ((r.props.get("metadata") or {}).get("namespace"), (r.props.get("metadata") or {}).get("name"))
        for r in kube
        if _kind(r.resource_type) == "Role" and rules.is_read_only_configmap_role(list(r.props.get("rules") or []))
    }
    for resource in kube:
        kind, metadata = _kind(resource.resource_type), resource.props.get("metadata") or {}
        namespace = metadata.get("name") if kind == "Namespace" else metadata.get("namespace")
        if (namespace, metadata.get("name")) in readers and kind == "Role":
            continue
        if kind == "RoleBinding":
            ref = resource.props.get("roleRef") or {}
            subjects = list(resource.props.get("subjects") or [])
            if ref.get("kind") == "Role" and (namespace, ref.get("name")) in readers and subjects and all(
                s.get("kind") == "ServiceAccount" and not rules.check_system_namespace(s.get("namespace"), "")
                for s in subjects
            ):
                continue
        for finding in rules.check_system_namespace(namespace, f"{kind} {metadata.get('name', resource.name)}"):
            report(str(finding), resource.urn)


def _store_protection(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if not holds_store(args.resource_type, args.props):
        return
    stack = os.environ.get("PULUMI_STACK", "")
    problem = rules.store_protection_problem(args.name, stack, args.get_config()["productionStacks"], args.opts.protect)
    if problem:
        report(problem)


POLICIES = [
    _stack_policy(
        "kvpool-configure-kv-role-by-side",
        "Checks that prefill connectors are kv_producer, decode connectors kv_consumer and UCMConnector kv_both "
        "(seed 000, FAQ 1: a wrong kv_role stops KV transfer between P and D).",
        MANDATORY, _kv_roles, "Write the side's role, or leave kv_role out so that it is filled in.",
    ),
    _stack_policy(
        "kvpool-configure-lease-above-ascend-timeouts",
        "Checks that Mooncake's default_kv_lease_ttl exceeds ASCEND_CONNECT_TIMEOUT and ASCEND_TRANSFER_TIMEOUT of "
        f"every engine, an unset timeout counting as vllm-ascend's effective default ({rules.effective_transfer_timeout_ms({})} ms "
        "for the transfer timeout) (seed 000, FAQ 3).",
        MANDATORY, _lease, "Lower the engines' ASCEND timeouts below the lease, or raise default_kv_lease_ttl.",
    ),
    _stack_policy(
        "kvpool-configure-consistent-store-backend",
        "Checks that every AscendStoreConnector backend equals kv_cache_store_config.backend, and the backend of the "
        "store a StackReference points at (target_stack) (seed 000, FAQ 5).",
        MANDATORY, _backend, "Set the same backend in both places.",
    ),
    _stack_policy(
        "kvpool-disallow-ucm-as-store-backend",
        "Checks that UCM is configured as UCMConnector, never as a store backend (seed 000, FAQ 6).",
        MANDATORY, lambda view, _: rules.check_not_ucm_store_backend(_store(view), view.kv_transfer_configs()),
        "Use UCMConnector as connectors[1] of prefill; backend mooncake there only creates a Mooncake master.",
    ),
    _stack_policy(
        "kvpool-configure-hybrid-attention-connector",
        "Checks that a hybrid-attention model transfers KV with MooncakeHybridConnector on both sides (seed 000, FAQ "
        "7: decode crashes and restarts otherwise): declared with hybrid_attention, or read from the engine config "
        "(no_disable_hybrid_kv_cache_manager) and the model's config.json where the preview reads it (compress_ratios, "
        "mixed layer_types).",
        MANDATORY, lambda view, _: rules.check_hybrid_attention_connector(view.user_config, view.hybrid_attention),
        "Set connectors[0] (or the single connector) to MooncakeHybridConnector on both sides.",
    ),
    _stack_policy(
        "kvpool-configure-mooncake-eviction-ratios",
        "Checks that a Mooncake store sets eviction_high_watermark_ratio and eviction_ratio within range "
        "(seed 000: deploy.py refuses Mooncake without them; mooncake_master exits on a ratio outside [0, 1]).",
        MANDATORY, lambda view, _: rules.check_mooncake_eviction(_owned_store(view)), "Set both ratios, e.g. 0.6 and 0.4.",
    ),
    _stack_policy(
        "kvpool-configure-sustainable-mooncake-eviction",
        "Checks that Mooncake's eviction leaves a sustained writer room. Thresholds from the frontier measured on "
        "the real mooncake_master (bench/results/eviction.md): a writer filling 3x the pool back to back, about a "
        "quarter of it per 10 ms eviction period, kept every put in every run at 0.6/0.4, 0.5/0.4 and 0.4/0.4, "
        "79-100 % at 0.7/0.2, 40-54 % at 0.9/0.1; llm-d users report the same.",
        ADVISORY, _eviction_headroom, "Lower the watermark and raise the eviction ratio, or pace the writers.",
        severity=Severity.MEDIUM,
        config_schema=PolicyConfigSchema(
            properties={
                "maxHighWatermark": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.6},
                "minEvictionRatio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.4},
            }
        ),
    ),
    _stack_policy(
        "kvpool-configure-pool-capacity",
        "Checks that the KV pool holds something, and at least one max_model_len request's KV for each engine that "
        "writes to it, below the eviction watermark; KV bytes per token from the model's config.json or the "
        "planner's table (docs/sizing.md; Mooncake issue 197: a full pool fails every put with NO_AVAILABLE_HANDLE).",
        MANDATORY, _pool_capacity, "Raise the pool's size to the value the message names.",
    ),
    _stack_policy(
        "kvpool-configure-mooncake-segment-limit",
        "Checks that a standalone Mooncake store's global_segment_size is at most 64 GiB (kvcache-ai/Mooncake issue "
        "1382: mooncake_store_service fails to register a larger segment; the embedded store splits it, PR 647).",
        MANDATORY, lambda view, _: rules.check_standalone_segment_limit(_owned_store(view)),
        "Use a segment of at most 64GB, or store_mode embedded.",
    ),
    _stack_policy(
        "kvpool-configure-engine-pod-pool-memory",
        f"Checks that the pool memory of one engine pod's ranks (a Mooncake segment and local buffer, or a MemCache "
        f"LocalService, per rank: vllm-ascend's KVPoolWorker starts one in every worker) fits the memory the engine "
        f"pod requests (pods.prefill.requests.memory, pods.decode.requests.memory; default "
        f"{rules.ENGINE_MEMORY_REQUEST}).",
        MANDATORY, _engine_pod_memory,
        "Lower the segment to the size the message names, raise the side's pods.<side>.requests.memory, or spread the "
        "ranks over more pods.",
    ),
    _stack_policy(
        "kvpool-configure-block-lifetime",
        "Checks that a block stays in the KV pool at least kv_pool_sizing.min_block_lifetime_seconds (default: the "
        "engines' longest ASCEND connect or transfer timeout) at the writers' rate, under the stack's eviction "
        "settings (docs/sizing.md).",
        ADVISORY, _block_lifetime,
        "Raise the pool's size, or set kv_pool_sizing.prefill_tokens_per_second to the measured rate.",
        severity=Severity.MEDIUM,
    ),
    _stack_policy(
        "kvpool-configure-ucm-placement",
        "Checks that UCMConnector sits only on prefill and only as connectors[1] of a MultiConnector (seed 000: "
        "decode never loads UCM; Motor refuses UCM at connectors[0]).",
        MANDATORY, lambda view, _: rules.check_ucm_placement(view.kv_transfer_configs()),
        "Move UCMConnector to prefill connectors[1]; give decode only the transfer connector.",
    ),
    _stack_policy(
        "kvpool-configure-ucm-storage",
        "Checks that UCM's storage_backends is a mounted storage[] volume, that /dev/shm is larger than its cache "
        "buffer and that its Posix budget fits the volume (Motor's UCM deployment guide).",
        MANDATORY,
        lambda view, _: rules.check_ucm_storage(
            view.kv_transfer_configs()["prefill"],
            (view.user_config.get("motor_deploy_config") or {}).get("storage") or [],
            (view.user_config.get("motor_deploy_config") or {}).get("dshm_size", rules.DEFAULT_DSHM_SIZE),
        ),
        "Mount a storage entry at storage_backends; size dshm_size and the volume above UCM's capacities.",
    ),
    _stack_policy(
        "kvpool-configure-dispatch-connector",
        "Checks that each side advertises a P/D plan Motor dispatches with, the same on both: connectors[0] in its "
        "whitelist (MooncakeConnectorV1, MooncakeHybridConnector, NixlConnector hand off; MooncakeLayerwiseConnector "
        "triggers) or motor_engine_<side>_config.dispatch_profile set (Motor's PD disaggregation design: unknown "
        "connectors fail closed, and a handoff prefill pairs with no trigger decode).",
        MANDATORY, lambda view, _: rules.check_dispatch_connector(view.user_config),
        "Use a whitelisted transfer connector, or set dispatch_profile alike on both sides.",
    ),
    _stack_policy(
        "kvpool-configure-matched-transfer-connectors",
        "Checks that prefill and decode run the two ends of one P/D transfer: the same connector (connectors[0] of "
        "a MultiConnector, or the single one) with the same use_layerwise and send_type (seed 000: P and D transfer "
        "KV through one connector; otherwise decode never receives prefill's KV cache).",
        MANDATORY, lambda view, _: rules.check_transfer_connectors_match(view.kv_transfer_configs()),
        "Write the same transfer connector and transfer options on both sides.",
    ),
    _stack_policy(
        "kvpool-engine-server-connector-layout",
        "Checks that each engine's kv_transfer_config is one Motor's engine server starts with: present on prefill "
        "and decode, and a MultiConnector's connectors[1] a store connector (AscendStoreConnector, "
        "MooncakeConnectorStoreV1, UCMConnector); otherwise the engine fails before vLLM starts.",
        MANDATORY, lambda view, _: rules.check_engine_server_layout(view.kv_transfer_configs()),
        "Give each side a kv_transfer_config, with the store connector second in a MultiConnector.",
    ),
    _stack_policy(
        "kvpool-configure-layerwise-pool-patch",
        "Checks that layerwise transfer with a KV pool does not run on vllm-ascend before v0.17.0rc2 without Motor's "
        "vllm_multi_connector.patch (seed 001).",
        ADVISORY,
        lambda view, _: rules.check_layerwise_pool_patch(view.vllm_ascend_version, view.kv_transfer_configs()),
        "Apply vllm_multi_connector.patch in the image, or use vllm-ascend v0.17.0rc2 or later.",
        severity=Severity.MEDIUM,
    ),
    _stack_policy(
        "kvpool-configure-consistent-hash-seed",
        "Checks that PYTHONHASHSEED is set, not random, and equal on every engine that uses the pool (vllm-ascend kv_pool: "
        "different seeds hash blocks differently and every lookup misses).",
        MANDATORY, lambda view, _: rules.check_hash_seed(view.engine_envs, view.kv_transfer_configs()),
        "Set one fixed PYTHONHASHSEED (e.g. \"0\") for every engine.",
    ),
    _stack_policy(
        "kvpool-configure-distinct-ports",
        "Checks that the ports of each Motor role's pod (api_config: infer, management, observability) are distinct "
        "port numbers, and that a Yuanrong store's host-network worker port is none of the node's own daemons' ports "
        "(22, 10250, ...: Kubernetes \"Ports and Protocols\"), below 1024 or a NodePort of the service.",
        MANDATORY,
        lambda view, _: rules.check_ports(view.user_config),
        "Give each port of a role its own number (api_config), and the worker a free unprivileged port.",
    ),
    _stack_policy(
        "kvpool-configure-numeric-env",
        f"Checks that the engines' variables a process parses as a number ({', '.join(rules.NUMERIC_ENV)}) hold "
        "whole numbers and PYTHONHASHSEED one Python accepts (Motor node_manager.py:628, coordinator.py:118, "
        "fastapi_middleware.py:100,108; vllm-ascend kv_transfer/utils/utils.py).",
        MANDATORY,
        lambda view, _: rules.check_numeric_env(
            {rules.engine_env_section(side): env for side, env in view.engine_envs.items()}
        ),
        "Write the variable as digits only, e.g. \"10000\".",
    ),
    _stack_policy(
        "kvpool-configure-layerwise-pool-backend",
        "Checks that use_layerwise on AscendStoreConnector is combined only with the memcache backend "
        "(vllm-ascend layerwise_kv_pool).",
        MANDATORY,
        lambda view, _: rules.check_layerwise_pool_backend(
            view.kv_transfer_configs(), _store(view).get("backend", rules.DEFAULT_BACKEND)
        ),
        "Remove use_layerwise from the store connector, or switch the store to memcache.",
    ),
    _stack_policy(
        "kvpool-configure-instance-counts",
        "Checks that prefill and decode instance counts are within Motor's 1..16 (deploy.py INSTANCE_NUM_MAX).",
        MANDATORY,
        lambda view, _: rules.check_instance_counts(view.user_config.get("motor_deploy_config") or {}),
        "Use 1 to 16 instances per role.",
    ),
    _stack_policy(
        "kvpool-configure-instance-sizes",
        "Checks that an instance spans 1..16 pods and that its DP x TP x PP ranks fit the NPUs of its pods (vLLM runs "
        "one rank per NPU).",
        MANDATORY,
        lambda view, _: rules.check_instance_sizes(view.user_config),
        "Lower data/tensor/pipeline_parallel_size, or raise the instance's pods or NPUs per pod.",
    ),
    _stack_policy(
        "kvpool-configure-fabric-segment-alignment",
        "Checks that Mooncake's global_segment_size is a whole number of GiB when ASCEND_ENABLE_USE_FABRIC_MEM=1 "
        "(vllm-ascend kv_pool, A3 fabric memory).",
        MANDATORY, lambda view, _: rules.check_fabric_segment_alignment(_owned_store(view), view.engine_envs),
        "Use a segment size that is a multiple of 1GB.",
    ),
    _stack_policy(
        "kvpool-configure-kv-cache-affinity",
        "Checks that scheduler_type kv_cache_affinity comes with a KV conductor, and a conductor with what it indexes: "
        "prefill kv-events-config in the form Motor's coordinator registers, prefix caching, the block size the "
        "coordinator reads, and a Mooncake pool when it follows the pool's master (Motor KV_cache_affinity.md, "
        "conductor_api_client.py, mooncake_config.py).",
        MANDATORY, lambda view, _: rules.check_kv_cache_affinity(view.user_config),
        "Add kv_conductor_config and prefill kv-events-config {publisher: zmq, enable_kv_cache_events: true, "
        "endpoint: tcp://*:<port>}; keep prefix caching on; follow the pool's master only with backend mooncake.",
    ),
    _stack_policy(
        "kvpool-configure-kv-event-ports",
        "Checks that the prefill KV-event ports (endpoint and replay_endpoint, one per DP rank) collide with no other "
        "port of the prefill pod (KV transfer, vLLM's DP RPC and API ports, a standalone store): vLLM's KV-event "
        "publisher binds them in the pod.",
        MANDATORY, lambda view, _: rules.check_kv_event_ports(view.user_config),
        "Move kv-events-config's endpoint or replay_endpoint to ports no other process of the pod binds.",
    ),
    StackValidationPolicy(
        name="kvpool-disallow-duplicate-names",
        description="Checks that no two Kubernetes objects of one kind share a namespace and name.",
        validate=_duplicate_names, enforcement_level=MANDATORY, severity=Severity.HIGH,
        remediation_steps="Rename one of the objects.",
    ),
    ResourceValidationPolicy(
        name="kvpool-disallow-plaintext-secrets",
        description="Checks that no ConfigMap entry (user_config.json's sections and the MemCache conf included) or "
        "container env value with a secret-looking name holds plain text (secrets only as Pulumi secrets).",
        validate=_plaintext_secrets, enforcement_level=MANDATORY, severity=Severity.CRITICAL,
        remediation_steps="Store the value with `pulumi config set --secret` and deliver it through a Secret.",
    ),
    StackValidationPolicy(
        name="kvpool-disallow-undeclared-host-paths",
        description="Checks that every hostPath of every pod is on the allow-list: a node path Motor's deployer mounts "
        "(the Ascend driver's files, /etc/hccn.conf, /var/coredump, the RDMA devices, A5's UB transport), writable "
        "only where the pod writes it, or below Motor's log folder /root/ascend/log or a root the stack declares "
        "(weight_mount_path read-only, motor_deploy_config.host_path_roots.logs and .storage, each below /mnt, /data "
        "or /srv). Everything else (/etc/cron.d, /root/.kube, /usr/local/bin ...) is refused.",
        validate=_undeclared_host_paths, enforcement_level=MANDATORY, severity=Severity.CRITICAL,
        remediation_steps="Mount a folder below a root declared in motor_deploy_config.host_path_roots (below /mnt, "
        "/data or /srv), or Motor's node path read-only as Motor mounts it.",
    ),
    StackValidationPolicy(
        name="kvpool-disallow-system-namespaces",
        description="Checks that no object lives in a namespace Kubernetes owns (kube-system, kube-public, "
        "kube-node-lease, default), except the read-only ConfigMap Role Motor's controller holds where MindX DL writes "
        "its device reports, and its binding (kvpool/internal/rbac.py).",
        validate=_system_namespaces, enforcement_level=MANDATORY, severity=Severity.HIGH,
        remediation_steps="Set motor_deploy_config.job_id to a namespace of the service's own.",
    ),
    ResourceValidationPolicy(
        name="kvpool-disallow-shell-env-names",
        description="Checks that no container's environment sets a variable bash or the dynamic loader acts on "
        "(BASH_ENV, SHELLOPTS, PS4, IFS, BASH_FUNC_*, LD_*, GLIBC_TUNABLES ...): every Motor container starts with "
        "bash -c, so such a value would run as code however it is quoted.",
        validate=_shell_env_names, enforcement_level=MANDATORY, severity=Severity.CRITICAL,
        remediation_steps="Remove the variable from env.json and secret_env; set a library preload in the image.",
    ),
    ResourceValidationPolicy(
        name="kvpool-disallow-privileged-containers",
        description="Checks that no container is privileged, adds a capability that amounts to root on the node "
        "(SYS_ADMIN, NET_ADMIN, ALL ...) or allows privilege escalation, and that no pod shares the node's PID or IPC "
        "namespace.",
        validate=_privileged_containers, enforcement_level=MANDATORY, severity=Severity.CRITICAL,
        remediation_steps="Remove privileged, the added capabilities and hostPID/hostIPC.",
    ),
    ResourceValidationPolicy(
        name="kvpool-enable-store-protection",
        description="Checks that the KV store objects of a production stack are protected from deletion (one pool "
        "serves every consumer; deleting it empties all their caches).",
        validate=_store_protection, enforcement_level=MANDATORY, severity=Severity.HIGH,
        remediation_steps="Set kv_cache_store_config.protect: true.",
        config_schema=PolicyConfigSchema(
            properties={"productionStacks": {"type": "string", "default": r"(prod|production)([-_].*)?|.*[-_]prod"}}
        ),
    ),
]
