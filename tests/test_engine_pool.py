"""EnginePool: per-instance kv_transfer_config, env contract, NPU resources by hardware, volumes, and scaling."""

from __future__ import annotations

import json

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from tests.program_runs import env_of, render, render_stack, stack_values

ANNOTATION = "motor-kvpool.io/kv-transfer-config"


def kv_of(rendered, name: str) -> dict:
    return json.loads(rendered.get("Deployment", name)["spec"]["template"]["metadata"]["annotations"][ANNOTATION])


def test_seed_000_memcache_pair_renders_the_configs_the_seed_describes():
    rendered = render_stack("dev")
    sizes = {"dp_size": 1, "tp_size": 2, "pp_size": 1}
    assert kv_of(rendered, "vllm-p0") == {
        "kv_connector": "MultiConnector",
        "kv_role": "kv_producer",
        "engine_id": "<instance_id>",
        "kv_connector_extra_config": {"connectors": [
            {"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "30001",
             "kv_connector_extra_config": {"prefill": sizes, "decode": sizes}},
            {"kv_connector": "AscendStoreConnector", "kv_role": "kv_producer",
             "kv_connector_extra_config": {"backend": "memcache", "lookup_rpc_port": "<instance_id>"}},
        ]},
    }
    decode = kv_of(rendered, "vllm-d0")
    assert (decode["kv_role"], decode["engine_id"]) == ("kv_consumer", "<instance_id>")
    assert decode["kv_connector_extra_config"]["connectors"][0]["kv_port"] == "30002"
    assert decode["kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"] == {
        "backend": "memcache", "lookup_rpc_port": "<instance_id>"
    }


def test_seed_001_layerwise_mooncake():
    rendered = render_stack("mooncake-layerwise")
    prefill = kv_of(rendered, "vllm-p0")
    extra = prefill["kv_connector_extra_config"]
    assert extra["use_layerwise"] is True
    assert extra["connectors"][0]["kv_connector"] == "MooncakeLayerwiseConnector"
    assert extra["connectors"][0]["kv_connector_extra_config"]["send_type"] == "PUT"
    # the seed wrote "0" and "1" by hand; Motor's engine server writes the id its controller gave the instance
    assert extra["connectors"][1]["kv_connector_extra_config"] == {"backend": "mooncake", "lookup_rpc_port": "<instance_id>"}
    assert kv_of(rendered, "vllm-d0")["kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"][
        "lookup_rpc_port"] == "<instance_id>"
    # seed 001 line 86: decode's layerwise connector takes kv_port 30001, as prefill's does
    assert [kv_of(rendered, name)["kv_connector_extra_config"]["connectors"][0]["kv_port"]
            for name in ("vllm-p0", "vllm-d0")] == ["30001", "30001"]


def test_omitted_store_backend_and_roles_are_filled_in():
    values = stack_values("dev")
    for side in ("prefill", "decode"):
        kv = values[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"]
        del kv["kv_role"]
        for connector in kv["kv_connector_extra_config"]["connectors"]:
            del connector["kv_role"]
            connector.get("kv_connector_extra_config", {}).pop("backend", None)
    rendered = render(values)
    connectors = kv_of(rendered, "vllm-d0")["kv_connector_extra_config"]["connectors"]
    assert [c["kv_role"] for c in connectors] == ["kv_consumer", "kv_consumer"]
    assert connectors[1]["kv_connector_extra_config"]["backend"] == "memcache"


def test_ucm_prefill_instance_1():
    rendered = render_stack("ucm")
    kv = kv_of(rendered, "vllm-p1")
    assert kv["engine_id"] == "<instance_id>"
    ucm = kv["kv_connector_extra_config"]["connectors"][1]
    assert (ucm["kv_connector"], ucm["kv_role"]) == ("UCMConnector", "kv_both")
    assert "lookup_rpc_port" not in ucm["kv_connector_extra_config"]
    prefill_volumes = rendered.get("Deployment", "vllm-p1")["spec"]["template"]["spec"]["volumes"]
    assert {"name": "mindie-motor-store-0",
            "persistentVolumeClaim": {"claimName": "mindie-motor-store-0", "readOnly": False}} in prefill_volumes
    decode_volumes = rendered.get("Deployment", "vllm-d0")["spec"]["template"]["spec"]["volumes"]
    assert "mindie-motor-store-0" not in [v["name"] for v in decode_volumes]
    claim = rendered.get("PersistentVolumeClaim", "mindie-motor-store-0")
    assert claim["spec"] == {"storageClassName": "nfs-rwx-sc", "accessModes": ["ReadWriteMany"],
                             "resources": {"requests": {"storage": "512Gi"}}}
    shm = next(v for v in prefill_volumes if v["name"] == "dshm")
    assert shm == {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "128Gi"}}


def test_engine_env_contract():
    rendered = render_stack("mooncake-layerwise")
    env = env_of(rendered.container("Deployment", "vllm-p0", "vllm"))
    ns = "mooncake-layerwise"
    assert {key: env[key] for key in (
        "ROLE", "JOB_NAME", "CONTROLLER_SERVICE", "COORDINATOR_SERVICE", "KVS_MASTER_SERVICE", "KV_STORE_BACKEND",
        "MOONCAKE_CONFIG_PATH", "PYTHONHASHSEED", "ASCEND_CONNECT_TIMEOUT", "ASCEND_TRANSFER_TIMEOUT",
    )} == {
        "ROLE": "prefill",
        "JOB_NAME": f"{ns}-p0",
        "CONTROLLER_SERVICE": f"mindie-motor-controller-service.{ns}.svc.cluster.local",
        "COORDINATOR_SERVICE": f"mindie-motor-coordinator-mgmt.{ns}.svc.cluster.local",
        "KVS_MASTER_SERVICE": f"mindie-motor-kvs-master.{ns}.svc.cluster.local",
        "KV_STORE_BACKEND": "mooncake",
        "MOONCAKE_CONFIG_PATH": "/etc/motor-kvpool/kv-client/mooncake.json",
        "PYTHONHASHSEED": "0",
        "ASCEND_CONNECT_TIMEOUT": "10000",
        "ASCEND_TRANSFER_TIMEOUT": "10000",
    }
    assert env["POD_IP"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    decode_env = env_of(rendered.container("Deployment", "vllm-d0", "vllm"))
    assert decode_env["PYTHONHASHSEED"] == env["PYTHONHASHSEED"]


def test_env_json_values_are_strings_in_the_pod():
    values = stack_values("dev")
    values["env"]["motor_engine_prefill_env"].update(HCCL_BUFFSIZE=200, OMP_PROC_BIND=False)
    env = env_of(render(values).container("Deployment", "vllm-p0", "vllm"))
    assert (env["HCCL_BUFFSIZE"], env["OMP_PROC_BIND"]) == ("200", "false")


def test_env_json_may_not_contradict_the_store_contract():
    values = stack_values("dev")
    values["env"]["motor_engine_decode_env"]["KV_STORE_BACKEND"] = "mooncake"
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert str(caught.value) == (
        "env.motor_engine_decode_env.KV_STORE_BACKEND is 'mooncake' but the KV store needs 'memcache'. Remove them "
        "from env.json: motor-kvpool sets them from the store."
    )


def test_a_conflict_in_motor_common_env_names_that_section():
    values = stack_values("dev")
    values["env"]["motor_common_env"]["KVS_MASTER_SERVICE"] = "elsewhere"
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert str(caught.value).startswith("env.motor_common_env.KVS_MASTER_SERVICE is 'elsewhere' but the KV store needs ")


@pytest.mark.parametrize(
    ("hardware_type", "resource", "selector", "ring", "sp_block"),
    [
        ("800I_A2", "huawei.com/Ascend910", {"accelerator": "huawei-Ascend910", "accelerator-type": "module-910b-8"}, True, None),
        ("800I_A3", "huawei.com/Ascend910", {"accelerator": "huawei-Ascend910", "accelerator-type": "module-a3-16"}, True, "4"),
        ("950-SuperPod-Atlas-8", "huawei.com/npu", {"accelerator": "huawei-npu", "accelerator-type": "950-SuperPod-Atlas-8"}, False, None),
    ],
)
def test_npu_resources_and_node_labels_by_hardware(hardware_type, resource, selector, ring, sp_block):
    values = stack_values("dev")
    values["motor_deploy_config"].update(hardware_type=hardware_type, single_p_instance_pod_num=2)
    values["kv_cache_store_config"]["local_service_mode"] = "inprocess"
    rendered = render(values)
    deployment = rendered.get("Deployment", "vllm-p0")
    pod = deployment["spec"]["template"]
    engine = rendered.container("Deployment", "vllm-p0", "vllm")
    assert deployment["spec"]["replicas"] == 2
    assert engine["resources"]["limits"] == {resource: 2}
    assert pod["spec"]["nodeSelector"] == selector
    assert ("ring-controller.atlas" in pod["metadata"]["labels"]) is ring
    assert pod["metadata"]["annotations"].get("sp-block") == sp_block


def test_names_and_labels_are_deterministic_and_carry_no_run_id():
    first, second = render_stack("dev"), render_stack("dev")
    assert first.objects == second.objects
    labels = first.get("Deployment", "vllm-p0")["spec"]["template"]["metadata"]["labels"]
    assert labels["job-name"] == "dev-p0"
    assert labels["motor-kvpool.io/kv-client"] == "true"


def test_scaling_decode_from_2_to_3_adds_one_deployment_and_changes_only_motor_config():
    values = stack_values("dev")
    values["motor_deploy_config"]["d_instances_num"] = 2
    before = render(values)
    values["motor_deploy_config"]["d_instances_num"] = 3
    after = render(values)
    assert set(after.objects) - set(before.objects) == {("Deployment", "vllm-d2")}
    assert set(before.objects) - set(after.objects) == set()
    changed = {key for key in before.objects if before.objects[key] != after.objects[key]}
    assert changed == {("ConfigMap", "motor-config")}
    # the pods mount motor-config as a volume and carry no hash of it: the change restarts nothing
    template = after.get("Deployment", "vllm-d0")["spec"]["template"]
    assert "motor-config" not in json.dumps(template["metadata"])


def test_motor_common_env_overrides_motor_kvpools_engine_defaults():
    values = stack_values("dev")
    values["env"] = {"motor_common_env": {"PYTHONHASHSEED": "42", "ASCEND_TRANSFER_TIMEOUT": "5000"}}
    rendered = render(values)
    for name in ("vllm-p0", "vllm-d0"):
        env = env_of(rendered.container("Deployment", name, "vllm"))
        assert (env["PYTHONHASHSEED"], env["ASCEND_TRANSFER_TIMEOUT"], env["ASCEND_CONNECT_TIMEOUT"]) == (
            "42", "5000", "10000"
        )


def test_a5_engines_mount_the_ub_transport_files():
    values = stack_values("dev")
    values["motor_deploy_config"]["hardware_type"] = "950-SuperPod-Atlas-8"
    values["kv_cache_store_config"]["local_service_mode"] = "inprocess"
    rendered = render(values)
    volumes = {v["name"]: v["hostPath"] for v in rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]["volumes"]
               if "hostPath" in v}
    assert {name: volumes[name] for name in ("usr-lib64", "hixlep", "route-conf", "urma-admin")} == {
        "usr-lib64": {"path": "/usr/lib64", "type": "Directory"},
        "hixlep": {"path": "/etc/hixlep", "type": "DirectoryOrCreate"},
        "route-conf": {"path": "/lib/route.conf", "type": "File"},
        "urma-admin": {"path": "/usr/bin/urma_admin", "type": "File"},
    }
    a2 = {v["name"] for v in render(stack_values("dev")).get("Deployment", "vllm-p0")["spec"]["template"]["spec"]["volumes"]}
    assert "urma-admin" not in a2 and "hccn-tool" in a2
    pod = rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]
    assert pod["dnsConfig"] == {"options": [{"name": "ndots", "value": "2"}]}


@pytest.mark.parametrize("stack", ("dev", "mooncake-ha"))
def test_engines_probe_only_the_readiness_route_motors_node_manager_serves(stack):
    """Motor's node manager serves GET /readiness and no /startup or /liveness (node_manager_api.py), and deploy.py's
    engine template carries no probe: a startup or liveness probe would get 404 until the kubelet kills the engine."""
    rendered = render_stack(stack)
    for name in ("vllm-p0", "vllm-d0"):
        container = rendered.get("Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        probes = {key: value for key, value in container.items() if key.endswith("Probe")}
        assert probes == {"readinessProbe": {
            "exec": {"command": ["bash", "-c", "$CONFIGMAP_PATH/probe.sh readiness"]},
            "periodSeconds": 10, "timeoutSeconds": 30, "failureThreshold": 5,
        }}, (stack, name)


CANN_WARNING = (
    "warning: env.motor_common_env.CANN_INSTALL_PATH: is unset, and {sections} do not set it: Motor's set_cann_env "
    "sources \"$CANN_INSTALL_PATH/ascend-toolkit/set_env.sh\", which is /ascend-toolkit/set_env.sh unless the image "
    "sets CANN_INSTALL_PATH; set it to the image's CANN folder (Motor's env examples: /usr/local/Ascend)."
)


ALL_THREE = "env.motor_coordinator_env, env.motor_engine_prefill_env, env.motor_engine_decode_env"


@pytest.mark.parametrize(("section", "value", "unset"), [
    (None, None, ALL_THREE),
    ("motor_engine_prefill_env", "/usr/local/Ascend", "env.motor_coordinator_env, env.motor_engine_decode_env"),
    ("motor_common_env", " ", ALL_THREE),  # blank: the path is built from an empty variable all the same
])
def test_preview_warns_when_set_cann_env_would_source_a_path_built_from_an_empty_variable(section, value, unset):
    """Motor's common.sh set_cann_env (run by engine.sh and coordinator.sh) sources
    "$CANN_INSTALL_PATH/ascend-toolkit/set_env.sh"."""
    values = stack_values("dev")
    del values["env"]["motor_common_env"]["CANN_INSTALL_PATH"]
    if section is not None:
        values["env"][section]["CANN_INSTALL_PATH"] = value
    messages = render(values).run.log_messages
    assert [line for line in messages if "CANN" in line] == [CANN_WARNING.format(sections=unset)]


def test_no_cann_warning_when_motor_common_env_sets_it():
    assert not [line for line in render_stack("dev").run.log_messages if "CANN" in line]


POOL_WARNINGS = {  # issue 44 items 9 and 10: the plan says who uses the pool
    "decode without the store connector": (
        "warning: motor_engine_decode_config.engine_config.kv_transfer_config: loads no AscendStoreConnector while "
        "prefill does, so decode will read nothing from the KV pool: every block it needs comes over prefill's "
        "transfer (seed 000: P and D both load the store connector); add AscendStoreConnector as connectors[1] of a "
        "MultiConnector on decode too."
    ),
    "a store no engine loads": (
        "warning: kv_cache_store_config: this stack deploys a KV store that none of its engines loads (no "
        "AscendStoreConnector on prefill or decode): it serves only the stacks whose target_stack names this one. "
        "Motor's UCM sample has one for its deployer's sake alone (seed FAQ 6); leave kv_cache_store_config out if no "
        "stack uses the store."
    ),
}


def _decode_transfer_only(values: dict) -> dict:
    decode = values["motor_engine_decode_config"]["engine_config"]
    decode["kv_transfer_config"] = decode["kv_transfer_config"]["kv_connector_extra_config"]["connectors"][0]
    return values


@pytest.mark.parametrize(("stack", "change", "expected"), [
    ("dev", _decode_transfer_only, ["decode without the store connector"]),
    ("ucm", lambda values: values, ["a store no engine loads"]),
    ("dev", lambda values: values, []),
    ("mooncake-layerwise", lambda values: values, []),
])
def test_the_plan_says_which_engines_use_the_pool(stack, change, expected):
    messages = render(change(stack_values(stack)), stack=stack).run.log_messages
    assert [line for line in messages if "KV pool" in line or "KV store" in line] == [POOL_WARNINGS[k] for k in expected]


def test_the_plan_asks_for_the_ucm_wheel_where_the_image_does_not_name_ucm():
    """Issue 44 item 12: UCMConnector is imported from the UCM wheel (seed 000)."""
    assert not [line for line in render_stack("ucm").run.log_messages if "UCM wheel" in line]
    values = stack_values("ucm")
    values["motor_deploy_config"]["image_name"] = "mindie-motor-vllm:3.0.0b2"
    assert [line for line in render(values, stack="ucm").run.log_messages if "UCM wheel" in line] == [
        "warning: motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]."
        "kv_connector: UCMConnector is imported from ucm.integration.vllm.ucm_connector, which only the UCM wheel "
        "installs (seed 000: UCM needs its wheel in the engine image), and image 'mindie-motor-vllm:3.0.0b2' does not "
        "name UCM: make sure the image installs it (pip install of the UCM wheel in its Dockerfile), or vLLM fails at "
        "start."
    ]
