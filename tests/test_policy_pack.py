"""The motor-kvpool policy pack, run as the Pulumi CLI runs it (its own process, the analyzer gRPC protocol),
over real program runs of the example stacks with one change each. Tests named after a seed FAQ item show the
policy that stops that FAQ's trap."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from typing import Any, Callable

import pytest

from kvpool.mock_engine import ProgramRun, run_program
from kvpool.policy_runner import run_policy_pack
from kvpool.stack_config import StackConfig, load_stack_config
from tests.program_runs import PROJECT_DIR, render, stack_values

PACK = PROJECT_DIR / "policies"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


def program(stack: str, **config_changes: Any) -> tuple[ProgramRun, StackConfig]:
    config = load_stack_config(PROJECT_DIR, stack)
    return run_program(PROJECT_DIR, config), _with_config(config, **config_changes)


def _with_config(config: StackConfig, **changes: Any) -> StackConfig:
    values = dict(config.values)
    for key, change in changes.items():
        full = f"motor-kvpool:{key}"
        values[full] = change(json.loads(values[full])) if callable(change) else change
        values[full] = values[full] if isinstance(values[full], str) else json.dumps(values[full])
    return dataclasses.replace(config, values=values)


def edit(run: ProgramRun, type_: str, name: str, change: Callable[[dict], None]) -> ProgramRun:
    """The run with one resource's inputs changed, as if the program had rendered them so."""
    resources = []
    for resource in run.resources:
        if resource.type == type_ and resource.name == name:
            inputs = copy.deepcopy(resource.inputs)
            change(inputs)
            resource = dataclasses.replace(resource, inputs=inputs)
        resources.append(resource)
    return dataclasses.replace(run, resources=resources)


def edit_user_config(run: ProgramRun, change: Callable[[dict], None]) -> ProgramRun:
    def rewrite(inputs: dict) -> None:
        user_config = json.loads(inputs["data"]["user_config.json"])
        change(user_config)
        inputs["data"]["user_config.json"] = json.dumps(user_config)

    return edit(run, CONFIGMAP, "motor-config", rewrite)


def engine_env(name: str, variable: str, value: str) -> Callable[[dict], None]:
    def change(inputs: dict) -> None:
        env = inputs["spec"]["template"]["spec"]["containers"][0]["env"]
        env[:] = [entry for entry in env if entry["name"] != variable] + [{"name": variable, "value": value}]

    return change


def kv(user_config: dict, side: str) -> dict:
    return user_config[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"]


def connectors(user_config: dict, side: str) -> list[dict]:
    return kv(user_config, side)["kv_connector_extra_config"]["connectors"]


def violations(run: ProgramRun, config: StackConfig, policy_config: dict | None = None) -> list[tuple[str, str, str]]:
    report = run_policy_pack(PACK, run, config, policy_config)
    return [(v.policy_name, v.enforcement_level, v.detail) for v in report.violations]


def only(found: list[tuple[str, str, str]], policy: str, level: str = "mandatory") -> list[str]:
    assert {name for name, _, _ in found} == {policy}, found
    assert {lvl for _, lvl, _ in found} == {level}
    return [detail for _, _, detail in found]


@pytest.fixture(scope="module")
def dev() -> tuple[ProgramRun, StackConfig]:
    return program("dev")


@pytest.fixture(scope="module")
def mooncake() -> tuple[ProgramRun, StackConfig]:
    return program("mooncake-layerwise")


@pytest.fixture(scope="module")
def ucm() -> tuple[ProgramRun, StackConfig]:
    return program("ucm")


def test_pack_lists_every_policy_with_its_level():
    run, config = program("dev")
    report = run_policy_pack(PACK, run, config)
    assert (report.pack_name, report.pack_version) == ("motor-kvpool", "0.1.0")
    assert len(report.policies) == 24
    assert sorted(p.name for p in report.policies if p.enforcement_level == "advisory") == [
        "kvpool-configure-layerwise-pool-patch", "kvpool-configure-sustainable-mooncake-eviction"
    ]


@pytest.mark.parametrize("stack", ["dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "service-set", "service-a"])
def test_example_stacks_pass_every_policy(stack):
    assert violations(*program(stack)) == []


def test_ucm_example_passes_every_policy(ucm):
    assert violations(*ucm) == []


def test_faq1_kv_role_by_side(dev):
    run, config = dev
    changed = edit_user_config(run, lambda uc: kv(uc, "prefill").update(kv_role="kv_consumer"))
    assert only(violations(changed, config), "kvpool-configure-kv-role-by-side") == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_role: is 'kv_consumer' but the prefill side "
        "is kv_producer (seed FAQ 1: a wrong kv_role stops KV transfer between P and D). Write 'kv_producer' or leave "
        "kv_role out and it is filled in."
    ]


def test_faq3_lease_above_ascend_timeouts(mooncake):
    run, config = mooncake
    changed = edit(run, DEPLOYMENT, "vllm-d0", engine_env("vllm-d0", "ASCEND_TRANSFER_TIMEOUT", "20000"))
    assert only(violations(changed, config), "kvpool-configure-lease-above-ascend-timeouts") == [
        "kv_cache_store_config.default_kv_lease_ttl: is 11000 ms but env.motor_engine_decode_env.ASCEND_TRANSFER_TIMEOUT "
        "is 20000 ms; the lease must be longer than the timeout (seed FAQ 3). Set ASCEND_TRANSFER_TIMEOUT below 11000 "
        "(e.g. 10000) in env.motor_engine_decode_env, or raise default_kv_lease_ttl above 20000."
    ]


def test_faq5_backend_consistency(dev):
    run, config = dev
    changed = edit_user_config(
        run, lambda uc: connectors(uc, "decode")[1]["kv_connector_extra_config"].update(backend="mooncake")
    )
    [detail] = only(violations(changed, config), "kvpool-configure-consistent-store-backend")
    assert detail.startswith("motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config."
                             "connectors[1].kv_connector_extra_config.backend: is 'mooncake' but "
                             "kv_cache_store_config.backend is 'memcache'")


def test_faq6_ucm_is_not_a_store_backend(ucm):
    run, config = ucm
    changed = edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(backend="ucm"))
    found = violations(changed, config)
    assert ("kvpool-disallow-ucm-as-store-backend", "mandatory",
            "kv_cache_store_config.backend: " + "is 'ucm', but UCM is not a KV store backend: configure UCMConnector "
            "as connectors[1] of prefill (its store_pipeline and storage_backends say where prefixes go), and keep "
            "kv_cache_store_config.backend at mooncake for the P/D transfer (seed FAQ 6).") in found


def test_faq7_hybrid_attention_connector(dev):
    run, config = dev
    flagged = _with_config(config, motor_engine_decode_config=lambda section: {**section, "hybrid_attention": True})
    [detail] = only(violations(run, flagged), "kvpool-configure-hybrid-attention-connector")
    assert detail.startswith("motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config."
                             "connectors[0].kv_connector: is 'MooncakeConnectorV1' but the model uses hybrid attention")


def test_mooncake_eviction_ratios(mooncake):
    run, config = mooncake
    changed = edit_user_config(run, lambda uc: uc["kv_cache_store_config"].pop("eviction_ratio"))
    [detail] = only(violations(changed, config), "kvpool-configure-mooncake-eviction-ratios")
    assert detail.startswith("kv_cache_store_config.eviction_ratio: is required for backend 'mooncake'")


def test_sustainable_eviction_is_advisory_and_its_thresholds_are_configuration(mooncake):
    run, config = mooncake
    seeds_values = edit_user_config(
        run, lambda uc: uc["kv_cache_store_config"].update(eviction_high_watermark_ratio=0.9, eviction_ratio=0.1)
    )
    [detail] = only(violations(seeds_values, config), "kvpool-configure-sustainable-mooncake-eviction", "advisory")
    assert "got 33-59% of their puts through at 0.9/0.1 against 47-100% at 0.7/0.2" in detail
    relaxed = {"kvpool-configure-sustainable-mooncake-eviction": {"maxHighWatermark": 0.95, "minEvictionRatio": 0.05}}
    assert violations(seeds_values, config, relaxed) == []
    strict = {"kvpool-configure-sustainable-mooncake-eviction": {"enforcementLevel": "mandatory"}}
    assert [level for _, level, _ in violations(seeds_values, config, strict)] == ["mandatory"]


def test_ucm_placement(ucm):
    run, config = ucm
    ucm_connector = {"kv_connector": "UCMConnector", "kv_role": "kv_both"}

    def ucm_on_decode(uc: dict) -> None:
        decode = kv(uc, "decode")
        uc["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"] = {
            "kv_connector": "MultiConnector", "kv_role": "kv_consumer",
            "kv_connector_extra_config": {"connectors": [decode, ucm_connector]},
        }

    [detail] = only(violations(edit_user_config(run, ucm_on_decode), config), "kvpool-configure-ucm-placement")
    assert detail.endswith("UCMConnector on decode: in Motor's P/D scheme decode never loads UCM (seed 000); remove "
                           "it and keep only the transfer connector.")


def test_ucm_storage(ucm):
    run, config = ucm

    def elsewhere(uc: dict) -> None:
        store = connectors(uc, "prefill")[1]["kv_connector_extra_config"]["ucm_connectors"][0]["ucm_connector_config"]
        store["storage_backends"] = "/data/ucm"

    [detail] = only(violations(edit_user_config(run, elsewhere), config), "kvpool-configure-ucm-storage")
    assert "'/data/ucm' is not the mount_path of a motor_deploy_config.storage entry (mounted: /mnt/ucm)" in detail


def test_dispatch_connector(dev):
    run, config = dev

    def unknown(uc: dict) -> None:
        for side in ("prefill", "decode"):
            connectors(uc, side)[0]["kv_connector"] = "P2pNcclConnector"

    found = only(violations(edit_user_config(run, unknown), config), "kvpool-configure-dispatch-connector")
    assert len(found) == 2 and "is not in Motor's P/D dispatch whitelist" in found[0]


def test_layerwise_pool_patch_is_advisory(mooncake):
    run, config = mooncake
    old = _with_config(config, vllm_ascend_version="v0.16.0")
    found = only(violations(run, old), "kvpool-configure-layerwise-pool-patch", "advisory")
    assert len(found) == 2 and "needs Motor's vllm_multi_connector.patch (seed 001)" in found[0]
    assert violations(run, _with_config(config, vllm_ascend_version="v0.17.0rc2")) == []


def test_consistent_hash_seed(dev):
    run, config = dev
    changed = edit(run, DEPLOYMENT, "vllm-d0", engine_env("vllm-d0", "PYTHONHASHSEED", "1"))
    assert only(violations(changed, config), "kvpool-configure-consistent-hash-seed") == [
        "env.motor_engine_decode_env.PYTHONHASHSEED: is '1' but prefill uses '0'; pool lookups only hit with one seed "
        "on every engine."
    ]


def test_layerwise_pool_backend(mooncake):
    run, config = mooncake
    changed = edit_user_config(
        run, lambda uc: connectors(uc, "prefill")[1]["kv_connector_extra_config"].update(use_layerwise=True)
    )
    [detail] = only(violations(changed, config), "kvpool-configure-layerwise-pool-backend")
    assert "the layerwise KV pool works only with backend 'memcache'" in detail


def test_instance_counts(dev):
    run, config = dev
    changed = edit_user_config(run, lambda uc: uc["motor_deploy_config"].update(d_instances_num=17))
    assert only(violations(changed, config), "kvpool-configure-instance-counts") == [
        "motor_deploy_config.d_instances_num: is 17; Motor supports 1 to 16 instances per role."
    ]


def test_fabric_segment_alignment(mooncake):
    run, config = mooncake
    changed = edit_user_config(run, lambda uc: uc["kv_cache_store_config"].update(global_segment_size="1536MB"))
    changed = edit(changed, DEPLOYMENT, "vllm-p0", engine_env("vllm-p0", "ASCEND_ENABLE_USE_FABRIC_MEM", "1"))
    [detail] = only(violations(changed, config), "kvpool-configure-fabric-segment-alignment")
    assert detail.startswith("kv_cache_store_config.global_segment_size: is '1536MB', but ASCEND_ENABLE_USE_FABRIC_MEM=1")


def test_standalone_store_memory():
    run, config = program("mooncake-ha")

    def small(inputs: dict) -> None:
        sidecar = inputs["spec"]["template"]["spec"]["containers"][1]
        sidecar["resources"]["limits"]["memory"] = "4Gi"

    assert only(violations(edit(run, DEPLOYMENT, "vllm-p0", small), config), "kvpool-configure-standalone-store-memory") == [
        "vllm-p0/mooncake-store.resources.limits.memory: is 4Gi but the store's segment is 8GB; the container would be "
        "OOM-killed when the pool fills. Raise the limit above the segment."
    ]


def test_duplicate_names(dev):
    run, config = dev
    original = run.resource(DEPLOYMENT, "vllm-p0")
    twin = dataclasses.replace(original, name="vllm-p0-twin", urn=original.urn + "-twin")
    found = only(violations(dataclasses.replace(run, resources=[*run.resources, twin]), config),
                 "kvpool-disallow-duplicate-names")
    assert found == ["kubernetes:apps/v1:Deployment dev/vllm-p0 is declared twice; the second would overwrite the "
                     "first in the cluster. Give one of them another name."]


def test_plaintext_secrets(dev):
    run, config = dev
    changed = edit(run, DEPLOYMENT, "vllm-p0", engine_env("vllm-p0", "HF_TOKEN", "hf_abc123"))
    assert only(violations(changed, config), "kvpool-disallow-plaintext-secrets") == [
        "Deployment vllm-p0: containers[vllm].env.HF_TOKEN: looks like a secret but is plain text; keep it as a Pulumi "
        "secret delivered through a Kubernetes Secret: `pulumi config set --secret --path secret_env.HF_TOKEN VALUE`."
    ]


def test_production_store_must_be_protected():
    config = dataclasses.replace(load_stack_config(PROJECT_DIR, "dev"), stack="prod-eu")
    run = run_program(PROJECT_DIR, config)
    found = only(violations(run, config), "kvpool-enable-store-protection")
    assert len(found) == 4  # Deployment, Service, NetworkPolicy and the meta ConfigMap of the store
    assert found[0].endswith("is not protected: a `pulumi destroy` or a rename would delete the pool every service "
                             "reads. Set kv_cache_store_config.protect: true.")
    protected = _with_config(config, kv_cache_store_config=lambda store: {**store, "protect": True})
    assert violations(run_program(PROJECT_DIR, protected), protected) == []


def test_readme_policy_table_matches_the_pack():
    report = run_policy_pack(PACK, *program("dev"))
    readme = (PROJECT_DIR / "README.md").read_text()
    table = re.findall(r"^\| `(kvpool-[a-z-]+)` \| (mandatory|advisory) \|", readme, flags=re.MULTILINE)
    assert sorted(table) == sorted((p.name, p.enforcement_level) for p in report.policies)


def test_production_store_inside_a_service_set_must_be_protected():
    config = dataclasses.replace(load_stack_config(PROJECT_DIR, "service-set"), stack="prod-eu")
    run = run_program(PROJECT_DIR, config)
    found = violations(run, config)
    assert sorted((name, detail.split(" belongs")[0]) for name, _, detail in found) == [
        ("kvpool-enable-store-protection", "mindie-motor-kv-store"),  # the NetworkPolicy
        ("kvpool-enable-store-protection", "mindie-motor-kv-store-meta-conf"),
        ("kvpool-enable-store-protection", "vllm"),  # the InferServiceSet holding the store's role
    ]
    protected = _with_config(config, kv_cache_store_config=lambda store: {**store, "protect": True})
    run = run_program(PROJECT_DIR, protected)
    assert run.resource("kubernetes:mindcluster.huawei.com/v1:InferServiceSet", "vllm").protect is True
    assert violations(run, protected) == []


def test_a_segment_size_in_bytes_passes_the_standalone_memory_policy():
    config = load_stack_config(PROJECT_DIR, "mooncake-ha")
    config = _with_config(config, kv_cache_store_config=lambda store: {**store, "global_segment_size": 8 * 2**30})
    run = run_program(PROJECT_DIR, config)
    sidecar = run.resource(DEPLOYMENT, "vllm-p0").inputs["spec"]["template"]["spec"]["containers"][1]
    assert {"name": "MOONCAKE_GLOBAL_SEGMENT_SIZE", "value": "8589934592"} in sidecar["env"]
    assert violations(run, config) == []


def test_faq5_backend_of_the_referenced_stack():
    """The pack on its own: a consumer whose StackReference returns another backend (the CLI hands AnalyzeStack the
    reference's outputs)."""
    provider = load_stack_config(PROJECT_DIR, "service-a")
    outputs = run_program(PROJECT_DIR, provider).outputs
    consumer = load_stack_config(PROJECT_DIR, "service-b")
    run = run_program(PROJECT_DIR, consumer, stack_references={"organization/motor-kvpool/service-a": outputs})
    assert violations(run, consumer) == []
    reference = run.resource("pulumi:pulumi:StackReference", "organization/motor-kvpool/service-a")
    assert reference.inputs["outputs"]["kv_store"]["backend"] == "memcache"
    changed = edit(run, "pulumi:pulumi:StackReference", reference.name,
                   lambda inputs: inputs["outputs"]["kv_store"].update(backend="mooncake"))
    assert only(violations(changed, consumer), "kvpool-configure-consistent-store-backend") == [
        "kv_cache_store_config.backend: is 'memcache' but the store of organization/motor-kvpool/service-a "
        "(target_stack) runs 'mooncake'; write backend: mooncake and the same in every AscendStoreConnector."
    ]


def test_plaintext_secrets_in_user_config_json(dev):
    run, config = dev
    changed = edit_user_config(run, lambda uc: uc["motor_engine_prefill_config"]["engine_config"].update(hf_token="hf_x"))
    assert only(violations(changed, config), "kvpool-disallow-plaintext-secrets") == [
        "ConfigMap motor-config: data[user_config.json].motor_engine_prefill_config.engine_config.hf_token: looks like "
        "a secret but is plain text; keep it as a Pulumi secret delivered through a Kubernetes Secret: `pulumi config "
        "set --secret --path secret_env.HF_TOKEN VALUE`."
    ]


def pod_spec(change: Callable[[dict], None]) -> Callable[[dict], None]:
    return lambda inputs: change(inputs["spec"]["template"]["spec"])


@pytest.mark.parametrize("path", ["/", "/etc", "/var/run/docker.sock", "/proc", "/sys/fs", "/root", "/var/lib/kubelet"])
def test_sensitive_host_paths(dev, path):
    run, config = dev
    changed = edit(run, DEPLOYMENT, "vllm-p0", pod_spec(
        lambda spec: spec["volumes"].append({"name": "host", "hostPath": {"path": path}})))
    [detail] = only(violations(changed, config), "kvpool-disallow-sensitive-host-paths")
    assert detail.startswith(f"Deployment vllm-p0: volumes[host].hostPath.path: {path!r} ")


def test_the_ascend_host_paths_engines_need_pass():
    """hccn_tool, /etc/hccn.conf, the driver's version.info, plog, coredump, the RDMA devices, and A5's libraries."""
    values = stack_values("dev")
    values["motor_deploy_config"]["hardware_type"] = "950-SuperPod-Atlas-8"
    values["kv_cache_store_config"]["local_service_mode"] = "inprocess"
    a5 = render(values, stack="dev").run
    volumes = a5.resource(DEPLOYMENT, "vllm-p0").inputs["spec"]["template"]["spec"]["volumes"]
    assert {"/usr/lib64", "/etc/hccn.conf", "/root/ascend/log"} <= {v["hostPath"]["path"] for v in volumes if "hostPath" in v}
    assert violations(a5, load_stack_config(PROJECT_DIR, "dev")) == []


def test_privileged_containers(dev):
    run, config = dev

    def escalate(spec: dict) -> None:
        spec["hostPID"] = True
        spec["containers"][0]["securityContext"] = {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}

    assert sorted(only(violations(edit(run, DEPLOYMENT, "vllm-d0", pod_spec(escalate)), config),
                       "kvpool-disallow-privileged-containers")) == sorted([
        "Deployment vllm-d0: spec.hostPID: is true: the pod sees the node's processes; remove it.",
        "Deployment vllm-d0: spec.containers[vllm].securityContext.privileged: is true: the container gets every "
        "device and capability of the node; remove it.",
        "Deployment vllm-d0: spec.containers[vllm].securityContext.capabilities.add: adds SYS_ADMIN, which amount to "
        "root on the node; remove them.",
    ])


def test_system_namespaces(dev):
    run, config = dev

    def into_kube_system(inputs: dict) -> None:
        inputs["metadata"]["namespace"] = "kube-system"

    found = only(violations(edit(run, DEPLOYMENT, "vllm-d0", into_kube_system), config), "kvpool-disallow-system-namespaces")
    assert found == ["Deployment vllm-d0: is 'kube-system', a namespace Kubernetes itself uses; give the service a "
                     "namespace of its own (job_id defaults to the stack name)."]


def test_the_controllers_configmap_role_in_kube_system_passes_but_not_a_wider_one(dev):
    run, config = dev
    roles = [r for r in run.resources if r.type == "kubernetes:rbac.authorization.k8s.io/v1:Role"]
    assert [r.inputs["metadata"]["namespace"] for r in roles] == ["kube-system"]  # passes: test_example_stacks_pass
    widened = edit(run, roles[0].type, roles[0].name, lambda inputs: inputs["rules"][0]["verbs"].append("update"))
    found = only(violations(widened, config), "kvpool-disallow-system-namespaces")
    assert sorted(detail.split(":")[0] for detail in found) == [f"Role {roles[0].name}", f"RoleBinding {roles[0].name}"]
