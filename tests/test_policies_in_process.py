"""Every policy of the pack in-process, as pulumi-policy's own tests run one (sdk/python/lib/test/test_policy.py):
the pack's catalog imported, `StackValidationArgs` / `ResourceValidationArgs` built from the resources a real
program run rendered, `policy.validate(args, report)` with a closure that collects what is reported.

Per policy: one compliant fixture (an example stack as rendered) and one change that breaks it. A test asserts the
policy's name, its enforcement level and the resources it reports (type, name); the words of each message are
asserted once, in the rules tests (tests/test_rules*.py). tests/test_policy_pack.py keeps what only the pack's
own process and the analyzer protocol show."""

from __future__ import annotations

import dataclasses
import functools
import os
from typing import Any, Callable
from unittest import mock

import pulumi
import pytest
from pulumi_policy import (
    EnforcementLevel,
    PolicyCustomTimeouts,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
    StackValidationPolicy,
)

from kvpool.cli.engine.mock_engine import ProgramRun, RecordedResource, run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from tests.policy_fixtures import (
    CONFIGMAP,
    DEPLOYMENT,
    SERVICE_SET,
    STACK_REFERENCE,
    connectors,
    edit,
    edit_user_config,
    engine_env,
    kv,
    pod_spec,
    with_config,
)
from tests.program_runs import PROJECT_DIR, render, stack_values
from tools.reference.policies import catalog

MANDATORY, ADVISORY = EnforcementLevel.MANDATORY, EnforcementLevel.ADVISORY
MOTOR_CONFIG = (CONFIGMAP, "control-plane-motor-config")
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:Role"
ROLE_BINDING = "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"


POLICIES = {policy.name: policy for policy in catalog().POLICIES}


@dataclasses.dataclass(frozen=True)
class Reported:
    policy: str
    level: EnforcementLevel
    resource: tuple[str, str]  # (type, name) of the resource reported, ("stack", "") for the stack as a whole


def _options(resource: RecordedResource) -> PolicyResourceOptions:
    return PolicyResourceOptions(
        protect=resource.protect, ignore_changes=[], delete_before_replace=None, aliases=[],
        custom_timeouts=PolicyCustomTimeouts(0, 0, 0), additional_secret_outputs=[], parent=resource.parent_urn,
    )


def _props(resource: RecordedResource) -> dict[str, Any]:
    return {key: value for key, value in resource.inputs.items() if not key.startswith("__")}


def validate(name: str, run: ProgramRun, config: StackConfig, **policy_config: Any) -> list[Reported]:
    """What policy `name` reports over the run, with its config schema's defaults under `policy_config`. The stack's
    config and name are where the pack finds them under the CLI: Pulumi's config and PULUMI_STACK."""
    policy = POLICIES[name]
    schema = policy.config_schema.properties if policy.config_schema else {}
    settings = {key: spec["default"] for key, spec in schema.items() if "default" in spec} | policy_config
    by_urn = {resource.urn: resource for resource in run.resources}
    found: list[Reported] = []

    def reporter(default_urn: str | None) -> Callable[..., None]:
        def report(message: str, urn: str | None = None) -> None:
            assert message
            target = by_urn.get(urn or default_urn or "")
            found.append(Reported(policy.name, policy.enforcement_level,
                                  (target.type, target.name) if target else ("stack", "")))
        return report

    pulumi.runtime.set_all_config(dict(config.values), list(config.secret_keys))
    try:
        with mock.patch.dict(os.environ, {"PULUMI_STACK": config.stack}):
            if isinstance(policy, StackValidationPolicy):
                resources = [
                    PolicyResource(r.type, _props(r), r.urn, r.name, _options(r), None, None, [], {})
                    for r in run.resources
                ]
                policy.validate(StackValidationArgs(resources, settings), reporter(None))
            else:
                for r in run.resources:
                    args = ResourceValidationArgs(r.type, _props(r), r.urn, r.name, _options(r), None, settings)
                    policy.validate(args, reporter(r.urn))
    finally:
        pulumi.runtime.set_all_config({}, [])
    return found


# What no example shows: mooncake-ha's store in standalone mode (the store process Motor's node manager starts in
# each engine container).
VARIANTS = {"mooncake-ha-standalone": ("mooncake-ha", {"store_mode": "standalone"})}


@functools.lru_cache(maxsize=None)
def example(stack: str, as_stack: str | None = None) -> tuple[ProgramRun, StackConfig]:
    """An example stack's run, rendered once per module (`as_stack`: the same config under another stack name)."""
    base, store_changes = VARIANTS.get(stack, (stack, {}))
    config = load_stack_config(PROJECT_DIR, base)
    if store_changes:
        config = with_config(config, kv_cache_store_config=lambda store: {**store, **store_changes})
    if as_stack:
        config = dataclasses.replace(config, stack=as_stack)
    return run_program(PROJECT_DIR, config), config


@dataclasses.dataclass(frozen=True)
class Case:
    policy: str
    stack: str
    change: Callable[[ProgramRun], ProgramRun]
    reported: list[tuple[str, str]]
    level: EnforcementLevel = MANDATORY
    config: dict[str, Any] = dataclasses.field(default_factory=dict)  # stack config the run does not see


def _unchanged(run: ProgramRun) -> ProgramRun:
    return run


def _ucm_on_decode(uc: dict) -> None:
    decode = kv(uc, "decode")
    uc["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"] = {
        "kv_connector": "MultiConnector", "kv_role": "kv_consumer",
        "kv_connector_extra_config": {"connectors": [decode, {"kv_connector": "UCMConnector", "kv_role": "kv_both"}]},
    }


def _ucm_store(uc: dict) -> dict:
    return connectors(uc, "prefill")[1]["kv_connector_extra_config"]["ucm_connectors"][0]["ucm_connector_config"]


def _unknown_dispatch_connector(uc: dict) -> None:
    for side in ("prefill", "decode"):
        connectors(uc, side)[0]["kv_connector"] = "P2pNcclConnector"


def _transfer_connector_second(uc: dict) -> None:
    connectors(uc, "decode")[1] = {"kv_connector": "MooncakeConnectorV1", "kv_port": "30003"}


def _prefill_engine(uc: dict) -> dict:
    return uc["motor_engine_prefill_config"]["engine_config"]


def _limit_memory(memory: str) -> Callable[[dict], None]:
    def change(spec: dict) -> None:
        spec["containers"][0]["resources"]["limits"]["memory"] = memory
    return change


def _twin(run: ProgramRun) -> ProgramRun:
    original = run.resource(DEPLOYMENT, "prefill-vllm-p0")
    twin = dataclasses.replace(original, name="prefill-vllm-p0-twin", urn=original.urn + "-twin")
    return dataclasses.replace(run, resources=[*run.resources, twin])


def _escalate(spec: dict) -> None:
    spec["hostPID"] = True
    spec["containers"][0]["securityContext"] = {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}


def _into_kube_system(inputs: dict) -> None:
    inputs["metadata"]["namespace"] = "kube-system"


def _store_objects(stack: str) -> list[tuple[str, str]]:
    """The objects of the store's component in a stack as rendered (what the protection policy guards)."""
    run, _ = example(stack)
    return sorted(
        (r.type, r.name) for r in run.resources
        if r.type.startswith("kubernetes:")
        and ((r.inputs.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component") == "kv-store"
    )


CASES = [
    Case("kvpool-configure-kv-role-by-side", "dev",
         lambda run: edit_user_config(run, lambda uc: kv(uc, "prefill").update(kv_role="kv_consumer")), [MOTOR_CONFIG]),
    Case("kvpool-configure-lease-above-ascend-timeouts", "mooncake-layerwise",
         lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", engine_env("ASCEND_TRANSFER_TIMEOUT", "20000")), [MOTOR_CONFIG]),
    Case("kvpool-configure-consistent-store-backend", "dev",
         lambda run: edit_user_config(
             run, lambda uc: connectors(uc, "decode")[1]["kv_connector_extra_config"].update(backend="mooncake")),
         [MOTOR_CONFIG]),
    Case("kvpool-disallow-ucm-as-store-backend", "ucm",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(backend="ucm")),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-hybrid-attention-connector", "dev", _unchanged, [MOTOR_CONFIG, MOTOR_CONFIG],
         config={"motor_engine_decode_config": lambda section: {**section, "hybrid_attention": True}}),
    Case("kvpool-configure-mooncake-eviction-ratios", "mooncake-layerwise",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].pop("eviction_ratio")),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-sustainable-mooncake-eviction", "mooncake-layerwise",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(
             eviction_high_watermark_ratio=0.9, eviction_ratio=0.1)),
         [MOTOR_CONFIG], ADVISORY),
    Case("kvpool-configure-pool-capacity", "mooncake-layerwise",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(global_segment_size="0GB")),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-mooncake-segment-limit", "mooncake-ha-standalone",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(global_segment_size="65GB")),
         [MOTOR_CONFIG]),
    # kv-affinity's pods run 4 ranks (DP 2 x TP 2): 4 x (20GB + 1GB buffer) is more than the pod's 64Gi, on each side.
    Case("kvpool-configure-engine-pod-pool-memory", "kv-affinity",
         lambda run: edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(global_segment_size="20GB")),
         [MOTOR_CONFIG, MOTOR_CONFIG]),
    # ucm's engines mount a 128Gi /dev/shm (dshm_size): a decode pod limited to 64Gi would be OOM-killed filling it.
    Case("kvpool-configure-engine-memory-limit", "ucm",
         lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", pod_spec(_limit_memory("64Gi"))), [MOTOR_CONFIG]),
    # The stack's kv_pool_sizing asks blocks to live longer than the example's 29GB segments keep them (18.56 s).
    Case("kvpool-configure-block-lifetime", "mooncake-layerwise", _unchanged, [MOTOR_CONFIG], ADVISORY,
         config={"kv_pool_sizing": {"min_block_lifetime_seconds": 19}}),
    Case("kvpool-configure-ucm-placement", "ucm", lambda run: edit_user_config(run, _ucm_on_decode), [MOTOR_CONFIG]),
    Case("kvpool-configure-ucm-storage", "ucm",
         lambda run: edit_user_config(run, lambda uc: _ucm_store(uc).update(storage_backends="/data/ucm")),
         [MOTOR_CONFIG]),
    # dev pools through MemCache at the default 4Gi /dev/shm: fine at its 2048 tokens, not at the FAQ's 80k inputs.
    Case("kvpool-configure-memcache-long-context-shm", "dev",
         lambda run: edit_user_config(run, lambda uc: uc["motor_engine_decode_config"]["engine_config"].update(
             max_model_len=81920)), [MOTOR_CONFIG], ADVISORY),
    Case("kvpool-configure-dispatch-connector", "dev", lambda run: edit_user_config(run, _unknown_dispatch_connector),
         [MOTOR_CONFIG, MOTOR_CONFIG]),
    Case("kvpool-configure-matched-transfer-connectors", "mooncake-layerwise",
         lambda run: edit_user_config(run, lambda uc: connectors(uc, "decode")[0].update(kv_connector="MooncakeConnectorV1")),
         [MOTOR_CONFIG]),
    Case("kvpool-engine-server-connector-layout", "dev", lambda run: edit_user_config(run, _transfer_connector_second),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-layerwise-pool-patch", "mooncake-layerwise", _unchanged, [MOTOR_CONFIG, MOTOR_CONFIG],
         ADVISORY, config={"vllm_ascend_version": "v0.16.0"}),
    Case("kvpool-configure-consistent-hash-seed", "dev",
         lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", engine_env("PYTHONHASHSEED", "1")), [MOTOR_CONFIG]),
    Case("kvpool-configure-layerwise-pool-backend", "mooncake-layerwise",
         lambda run: edit_user_config(
             run, lambda uc: connectors(uc, "prefill")[1]["kv_connector_extra_config"].update(use_layerwise=True)),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-kv-cache-affinity", "kv-affinity",
         lambda run: edit_user_config(run, lambda uc: _prefill_engine(uc).update({"enable-prefix-caching": False})),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-kv-event-ports", "kv-affinity",
         lambda run: edit_user_config(
             run, lambda uc: _prefill_engine(uc)["kv-events-config"].update(replay_endpoint="tcp://*:5557")),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-instance-counts", "dev",
         lambda run: edit_user_config(run, lambda uc: uc["motor_deploy_config"].update(d_instances_num=17)),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-instance-sizes", "dev",
         lambda run: edit_user_config(run, lambda uc: _prefill_engine(uc).update(tensor_parallel_size=64)),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-distinct-ports", "dev",
         lambda run: edit_user_config(run, lambda uc: uc["motor_coordinator_config"].setdefault("api_config", {}).update(
             coordinator_api_mgmt_port=1025)),
         [MOTOR_CONFIG]),
    Case("kvpool-configure-numeric-env", "dev",
         lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", engine_env("ASCEND_TRANSFER_TIMEOUT", "10s")), [MOTOR_CONFIG]),
    Case("kvpool-configure-fabric-segment-alignment", "mooncake-layerwise",
         lambda run: edit(
             edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(global_segment_size="1536MB")),
             DEPLOYMENT, "prefill-vllm-p0", engine_env("ASCEND_ENABLE_USE_FABRIC_MEM", "1")),
         [MOTOR_CONFIG]),
    Case("kvpool-disallow-duplicate-names", "dev", _twin, [(DEPLOYMENT, "prefill-vllm-p0-twin")]),
    Case("kvpool-disallow-plaintext-secrets", "dev",
         lambda run: edit(run, DEPLOYMENT, "prefill-vllm-p0", engine_env("HF_TOKEN", "hf_abc123")), [(DEPLOYMENT, "prefill-vllm-p0")]),
    Case("kvpool-disallow-undeclared-host-paths", "dev",
         lambda run: edit(run, DEPLOYMENT, "prefill-vllm-p0", pod_spec(
             lambda spec: spec["volumes"].append({"name": "host", "hostPath": {"path": "/etc/cron.d"}}))),
         [(DEPLOYMENT, "prefill-vllm-p0")]),
    Case("kvpool-disallow-system-namespaces", "dev", lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", _into_kube_system),
         [(DEPLOYMENT, "decode-vllm-d0")]),
    Case("kvpool-disallow-shell-env-names", "dev",
         lambda run: edit(run, DEPLOYMENT, "prefill-vllm-p0", engine_env("BASH_ENV", "$(id)")), [(DEPLOYMENT, "prefill-vllm-p0")]),
    Case("kvpool-disallow-privileged-containers", "dev",
         lambda run: edit(run, DEPLOYMENT, "decode-vllm-d0", pod_spec(_escalate)), [(DEPLOYMENT, "decode-vllm-d0")] * 3),
]


def test_every_policy_of_the_pack_has_a_case():
    covered = {case.policy for case in CASES} | {"kvpool-enable-store-protection"}  # its own tests below
    assert covered == set(POLICIES)


@pytest.mark.parametrize("case", CASES, ids=[case.policy for case in CASES])
def test_policy_passes_the_example_and_stops_one_change(case: Case):
    run, config = example(case.stack)
    assert validate(case.policy, run, config) == []
    assert POLICIES[case.policy].enforcement_level == case.level
    reported = validate(case.policy, case.change(run), with_config(config, **case.config))
    assert sorted(reported, key=lambda r: r.resource) == [Reported(case.policy, case.level, r) for r in sorted(case.reported)]


def test_sustainable_eviction_thresholds_come_from_the_policy_config():
    run, config = example("mooncake-layerwise")
    seeds_values = edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(
        eviction_high_watermark_ratio=0.9, eviction_ratio=0.1))
    policy = "kvpool-configure-sustainable-mooncake-eviction"
    assert validate(policy, seeds_values, config, maxHighWatermark=0.95, minEvictionRatio=0.05) == []
    assert len(validate(policy, seeds_values, config, maxHighWatermark=0.95)) == 1


def test_layerwise_pool_patch_is_fixed_in_v0_17_0rc2():
    run, config = example("mooncake-layerwise")
    assert validate("kvpool-configure-layerwise-pool-patch", run, with_config(config, vllm_ascend_version="v0.17.0rc2")) == []


def test_production_store_must_be_protected():
    run, config = example("dev", as_stack="prod-eu")
    store_objects = _store_objects("dev")
    assert len(store_objects) == 4  # Deployment, Service, NetworkPolicy and the meta ConfigMap of the store
    assert validate("kvpool-enable-store-protection", run, config) == [
        Reported("kvpool-enable-store-protection", MANDATORY, resource) for resource in store_objects
    ]
    assert validate("kvpool-enable-store-protection", *example("dev")) == []  # not a production stack
    protected = with_config(config, kv_cache_store_config=lambda store: {**store, "protect": True})
    assert validate("kvpool-enable-store-protection", run_program(PROJECT_DIR, protected), protected) == []


def test_production_store_inside_a_service_set_must_be_protected():
    run, config = example("service-set", as_stack="prod-eu")
    reported = validate("kvpool-enable-store-protection", run, config)
    assert sorted(r.resource for r in reported) == sorted([
        *_store_objects("service-set"),
        (SERVICE_SET, "vllm-vllm"),  # the InferServiceSet holding the store's role
    ])
    protected = with_config(config, kv_cache_store_config=lambda store: {**store, "protect": True})
    assert validate("kvpool-enable-store-protection", run_program(PROJECT_DIR, protected), protected) == []


def test_the_policy_pack_walks_every_role_of_a_service_set():
    run, config = example("service-set")
    assert validate("kvpool-disallow-plaintext-secrets", run, config) == []

    def token_in_every_role(inputs: dict) -> None:
        for role in inputs["spec"]["template"]["roles"]:
            role["spec"]["template"]["spec"]["containers"][0].setdefault("env", []).append(
                {"name": "HF_TOKEN", "value": "hf_x"})

    reported = validate("kvpool-disallow-plaintext-secrets", edit(run, SERVICE_SET, "vllm-vllm", token_in_every_role), config)
    roles = run.resource(SERVICE_SET, "vllm-vllm").inputs["spec"]["template"]["roles"]
    assert [r.resource for r in reported] == [(SERVICE_SET, "vllm-vllm")] * len(roles)


def test_a_secret_in_user_config_json_is_reported_on_motor_config():
    run, config = example("dev")
    changed = edit_user_config(run, lambda uc: _prefill_engine(uc).update(hf_token="hf_x"))
    assert [r.resource for r in validate("kvpool-disallow-plaintext-secrets", changed, config)] == [MOTOR_CONFIG]


def test_the_pool_memory_policy_reads_each_engine_pods_own_request():
    """mooncake-layerwise's one rank holds 29GB + 1GB buffer: within the 64Gi its pods ask by default, not within a
    decode pod asking 16Gi (pods.decode.requests.memory), nor within a pod asking nothing."""
    run, config = example("mooncake-layerwise")
    policy = "kvpool-configure-engine-pod-pool-memory"
    assert validate(policy, run, config) == []

    def asks(memory: str | None) -> Callable[[dict], None]:
        def change(spec: dict) -> None:
            requests = spec["containers"][0]["resources"]["requests"]
            requests.pop("memory")
            requests.update({"memory": memory} if memory else {})
        return change

    assert validate(policy, edit(run, DEPLOYMENT, "decode-vllm-d0", pod_spec(asks("31Gi"))), config) == []
    for memory in ("16Gi", None):
        reported = validate(policy, edit(run, DEPLOYMENT, "decode-vllm-d0", pod_spec(asks(memory))), config)
        assert reported == [Reported(policy, MANDATORY, MOTOR_CONFIG)], memory


def test_the_backend_of_the_referenced_stack():
    """A consumer whose StackReference returns another backend than its own config says."""
    provider = load_stack_config(PROJECT_DIR, "service-a")
    outputs = run_program(PROJECT_DIR, provider).outputs
    consumer = load_stack_config(PROJECT_DIR, "service-b")
    run = run_program(PROJECT_DIR, consumer, stack_references={"organization/motor-kvpool/service-a": outputs})
    policy = "kvpool-configure-consistent-store-backend"
    assert validate(policy, run, consumer) == []
    reference = run.resource(STACK_REFERENCE, "organization/motor-kvpool/service-a")
    changed = edit(run, STACK_REFERENCE, reference.name, lambda inputs: inputs["outputs"]["kv_store"].update(backend="mooncake"))
    assert validate(policy, changed, consumer) == [Reported(policy, MANDATORY, MOTOR_CONFIG)]


def test_the_ascend_host_paths_engines_need_pass():
    """hccn_tool, /etc/hccn.conf, the driver's version.info, plog, coredump, the RDMA devices, and A5's libraries."""
    values = stack_values("dev")
    values["motor_deploy_config"]["hardware_type"] = "950-SuperPod-Atlas-8"
    values["kv_cache_store_config"]["local_service_mode"] = "inprocess"
    a5 = render(values, stack="dev").run
    volumes = a5.resource(DEPLOYMENT, "prefill-vllm-p0").inputs["spec"]["template"]["spec"]["volumes"]
    assert {"/usr/lib64", "/etc/hccn.conf", "/root/ascend/log"} <= {v["hostPath"]["path"] for v in volumes if "hostPath" in v}
    assert validate("kvpool-disallow-undeclared-host-paths", a5, load_stack_config(PROJECT_DIR, "dev")) == []


def _hostpath_storage(values: dict, roots: list[str]) -> None:
    values["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": "/data/ucm", "mount_path": "/mnt/ucm"}]
    values["motor_deploy_config"]["host_path_roots"] = {"storage": roots}


def test_a_storage_hostpath_passes_below_its_declared_root_as_motor_config_carries_it():
    """The pack's allow-list is the settings': built from the user_config.json in motor-config. The rendered
    storage hostPath passes with its declaration, and is refused once the declaration is gone (or names /etc)."""
    values = stack_values("ucm")
    _hostpath_storage(values, ["/data/ucm"])
    run = render(values, stack="ucm").run
    config = load_stack_config(PROJECT_DIR, "ucm")
    volumes = run.resource(DEPLOYMENT, "prefill-vllm-p0").inputs["spec"]["template"]["spec"]["volumes"]
    assert "/data/ucm" in {v["hostPath"]["path"] for v in volumes if "hostPath" in v}
    policy = "kvpool-disallow-undeclared-host-paths"
    assert validate(policy, run, config) == []
    for roots in ([], ["/etc"], ["/data/ucm/../.."]):
        undeclared = edit_user_config(
            run, lambda uc, roots=roots: uc["motor_deploy_config"].update(host_path_roots={"storage": roots}))
        assert validate(policy, undeclared, config) == [
            Reported(policy, MANDATORY, (DEPLOYMENT, "prefill-vllm-p0")), Reported(policy, MANDATORY, (DEPLOYMENT, "prefill-vllm-p1"))
        ]


def test_the_controllers_configmap_role_in_kube_system_passes_but_not_a_wider_one():
    run, config = example("dev")
    [role] = [r for r in run.resources if r.type == ROLE]
    assert role.inputs["metadata"]["namespace"] == "kube-system"  # passes: the case's compliant fixture
    widened = edit(run, ROLE, role.name, lambda inputs: inputs["rules"][0]["verbs"].append("update"))
    reported = validate("kvpool-disallow-system-namespaces", widened, config)
    assert sorted(r.resource for r in reported) == [(ROLE, role.name), (ROLE_BINDING, role.name)]
