"""Every example stack boots through Motor's own boot.sh, role by role: no missing file, no read-only write, and
each engine process is handed the store client config we intend (Motor's scripts regenerate and copy some)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvpool.internal.hardware import HARDWARE
from kvpool.internal.motor_config import MOTOR_FILES
from kvpool.policies.rules.service_set import (
    is_service_set,
    role_pod_template,
    service_set_roles,
)
from tests.conformance.motor_boot import Boot, boot
from tests.program_runs import Rendered, render, stack_values

STACKS = ("dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "ucm", "service-set", "service-a", "service-b",
          "kv-affinity")
# Stacks with kv_conductor_config: the only ones that deploy the kv_conductor role.
CONDUCTOR_STACKS = ("kv-affinity",)
# (workload, container) of each Motor role; the store runs its own binaries (tests/live checks those).
# In a service set each role is one template named after the role.
ROLES = {
    "prefill": ("vllm-p0", "vllm"),
    "decode": ("vllm-d0", "vllm"),
    "controller": ("mindie-motor-controller", "controller"),
    "coordinator": ("mindie-motor-coordinator", "coordinator"),
    "kv_conductor": ("mindie-motor-kv-conductor", "kv-conductor"),
}


def roles_of(stack: str) -> list[str]:
    return [role for role in ROLES if role != "kv_conductor" or stack in CONDUCTOR_STACKS]


def rendered_with_motor(stack: str, motor_checkout: Path) -> Rendered:
    def values(name: str) -> dict[str, Any]:
        return {**stack_values(name), "motor_deployer_dir": str(motor_checkout / "examples" / "deployer")}

    references = None
    if stack == "service-b":
        owner = render(values("service-a"), stack="service-a").run.outputs
        references = {"organization/motor-kvpool/service-a": owner}
    return render(values(stack), stack=stack, stack_references=references)


def pod_spec(rendered: Rendered, workload: str) -> dict[str, Any]:
    """A workload's pod spec, from its Deployment or from its role inside the InferServiceSet."""
    if ("Deployment", workload) in rendered.objects:
        return rendered.get("Deployment", workload)["spec"]["template"]["spec"]
    role_name = next(role for role, (name, _) in ROLES.items() if name == workload)
    sets = [body for body in rendered.objects.values() if is_service_set(body)]
    for role in (role for body in sets for role in service_set_roles(body)):
        if role["name"] == role_name:
            return role_pod_template(role)["spec"]
    raise AssertionError(f"no workload {workload}")


def config_maps(rendered: Rendered) -> dict[str, dict[str, str]]:
    return {name: rendered.get("ConfigMap", name)["data"] for kind, name in rendered.objects if kind == "ConfigMap"}


def secrets(rendered: Rendered) -> dict[str, dict[str, str]]:
    """Each rendered Secret's data (secret_env's: kvpool/internal/secret_env.py writes it as stringData)."""
    return {name: rendered.get("Secret", name)["stringData"] for kind, name in rendered.objects if kind == "Secret"}


def user_config_of(rendered: Rendered) -> dict[str, Any]:
    return json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])


def node_weights(rendered: Rendered, folder: Path) -> dict[str, Path]:
    """The node's weight_mount_path as a local folder holding, at the prefill model's path, a tiny tokenizer made
    with the `tokenizers` package Motor's coordinator loads it through (a two-word WordLevel vocabulary, not a model)."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    user_config = user_config_of(rendered)
    node_dir = user_config["motor_deploy_config"]["weight_mount_path"]
    model = Path(user_config["motor_engine_prefill_config"]["engine_config"]["model"])
    local = folder / model.relative_to(node_dir)
    local.mkdir(parents=True)
    tokenizer = Tokenizer(models.WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(local / "tokenizer.json"))
    (local / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "unk_token": "[UNK]"})
    )
    return {node_dir: folder}


def boot_role(
    rendered: Rendered, role: str, motor_checkout: Path, tmp_path: Path, hooks: bool = False, probes: bool = False,
    unprivileged: bool = False,
) -> Boot:
    """`hooks`: then run the container's exec probes and preStop hook; `probes`: the probes against Motor's own node
    manager; `unprivileged`: as nobody (motor_boot.boot)."""
    workload, container = ROLES[role]
    family = HARDWARE[user_config_of(rendered)["motor_deploy_config"]["hardware_type"]].family
    return boot(
        pod_spec(rendered, workload), container, config_maps(rendered), family, motor_checkout, tmp_path / "pod",
        node_dirs=node_weights(rendered, tmp_path / "node-weights"), hooks=hooks, probes=probes,
        secrets=secrets(rendered), unprivileged=unprivileged,
    )


def test_motor_config_holds_deploy_pys_file_set(
    rendered: dict[str, Rendered], motor_checkout: Path, tmp_path: Path
) -> None:
    """The keys deploy.py's create_motor_config_configmap passes to kubectl, taken from running Motor's code."""
    import sys

    sys.path.insert(0, str(motor_checkout / "examples" / "deployer"))
    try:
        from lib.generator import k8s_utils
    finally:
        sys.path.pop(0)
    captured: list[list[str]] = []
    k8s_utils.apply_configmap = captured.append  # deploy.py's kubectl call
    (tmp_path / "user_config.json").write_text("{}")
    k8s_utils.g_user_config_path = str(tmp_path / "user_config.json")
    k8s_utils.create_motor_config_configmap("svc")
    keys = {arg.removeprefix("--from-file=").split("=")[0].rsplit("/", 1)[-1] for arg in captured[0] if arg.startswith("--from-file=")}
    assert keys == {key for key, _ in MOTOR_FILES} | {"user_config.json"}
    for stack, run in rendered.items():
        assert set(run.get("ConfigMap", "motor-config")["data"]) == keys, stack


@pytest.mark.parametrize(("stack", "role"), [(stack, role) for stack in STACKS for role in roles_of(stack)])
def test_role_boots_through_motors_scripts(
    rendered: dict[str, Rendered], stack: str, role: str, motor_checkout: Path, tmp_path: Path
) -> None:
    result = boot_role(rendered[stack], role, motor_checkout, tmp_path)
    assert result.failures() == [], result.output
    if role == "kv_conductor":
        process = result.command("mooncake_conductor")  # kv_conductor.sh starts the binary, no Motor module
    else:
        module = "motor.node_manager.main" if role in ("prefill", "decode") else f"motor.{role}.main"
        process = result.process(module)
    # Motor's processes read the synced copy of our user_config.json, and the env.json values we set.
    user_config = process["files"]["USER_CONFIG_PATH"]
    assert user_config["path"] == "/usr/local/Ascend/pyMotor/conf/user_config.json"
    assert user_config["text"] == rendered[stack].get("ConfigMap", "motor-config")["data"]["user_config.json"]
    assert process["env"]["ROLE"] == role
    assert process["env"]["SERVICE_ID"] == json.loads(user_config["text"])["motor_deploy_config"]["job_id"]
    if role != "kv_conductor":
        motor = process["motor"]
        assert "error" not in motor, motor.get("error")
        assert motor["config_path"] == user_config["path"]


@pytest.mark.parametrize("stack", STACKS)
def test_coordinator_loads_its_config_tokenizer_and_store_metrics_url_with_motors_code(
    rendered: dict[str, Rendered], stack: str, motor_checkout: Path, tmp_path: Path
) -> None:
    """Motor's CoordinatorConfig.from_json, TokenizerManager and MetricsCollector in the booted coordinator pod: with a
    conductor it loads the prefill model's tokenizer from the pod's weight mount (a worker without it crashes at
    start); it fetches the pool's metrics from the store Service's metrics port, or nothing without a Service."""
    result = boot_role(rendered[stack], "coordinator", motor_checkout, tmp_path)
    motor = result.process("motor.coordinator.main")["motor"]
    assert "error" not in motor, motor.get("error")
    user_config = user_config_of(rendered[stack])
    store = user_config["kv_cache_store_config"]
    owner = {"service-b": "service-a"}.get(stack, stack)
    host = (f"mindie-motor-kvs-master-vllm-0-kv-store.{owner}.svc.cluster.local" if stack == "service-set"
            else f"mindie-motor-kvs-master.{owner}.svc.cluster.local")
    if stack == "yuanrong":  # its workers run on the nodes behind no Service: Motor has no URL to fetch
        assert motor["store_metrics_urls"] == []
    else:
        assert motor["store_metrics_urls"] == [f"http://{host}:{store['metrics_port']}/metrics"]
    if stack in CONDUCTOR_STACKS:
        assert motor["scheduler_type"] == "kv_cache_affinity"
        assert motor["conductor"] == {"service": f"kv-conductor.{stack}.svc.cluster.local", "port": 13333,
                                      "model_path": "/mnt/weight/qwen3_8B"}
        assert motor["tokenizer"] == [1, 2]  # "hello world" through the fixture's vocabulary
    else:
        assert motor["conductor"]["service"] == "" and motor["tokenizer"] is None


def engine_process(rendered: dict[str, Rendered], stack: str, side: str, checkout: Path, tmp_path: Path) -> dict:
    result = boot_role(rendered[stack], side, checkout, tmp_path)
    assert result.failures() == [], result.output
    return result.process("motor.node_manager.main")


def mooncake_client(process: dict) -> dict[str, Any]:
    client = process["files"]["MOONCAKE_CONFIG_PATH"]
    assert client["exists"], process["env"]["MOONCAKE_CONFIG_PATH"]
    return json.loads(client["text"])


def test_ha_engines_find_the_leader_through_etcd(rendered, motor_checkout, tmp_path) -> None:
    """Motor's engine.sh rebuilds a client file pointing at the master Service; ours (etcd://) must win."""
    client = mooncake_client(engine_process(rendered, "mooncake-ha", "prefill", motor_checkout, tmp_path))
    assert client["master_server_address"] == (
        "etcd://mindie-motor-kv-store-etcd-0.mindie-motor-kv-store-etcd-peers.mooncake-ha.svc.cluster.local:2379;"
        "mindie-motor-kv-store-etcd-1.mindie-motor-kv-store-etcd-peers.mooncake-ha.svc.cluster.local:2379;"
        "mindie-motor-kv-store-etcd-2.mindie-motor-kv-store-etcd-peers.mooncake-ha.svc.cluster.local:2379"
    )
    assert client["global_segment_size"] == "29GB"  # mooncake-ha's engines hold the pool (store_mode embedded)


def test_embedded_mooncake_engines_contribute_their_segment(rendered, motor_checkout, tmp_path) -> None:
    process = engine_process(rendered, "mooncake-layerwise", "decode", motor_checkout, tmp_path)
    client = mooncake_client(process)
    assert client["master_server_address"] == "mindie-motor-kvs-master.mooncake-layerwise.svc.cluster.local:50088"
    assert client["global_segment_size"] != 0
    assert process["env"]["MOONCAKE_CONFIG_PATH"] == "/etc/motor-kvpool/kv-client/mooncake.json"


@pytest.mark.parametrize("stack", ("dev", "service-b"))
def test_memcache_local_service_conf_is_a_writable_copy_motor_prepares(stack, rendered, motor_checkout, tmp_path) -> None:
    process = engine_process(rendered, stack, "prefill", motor_checkout, tmp_path)
    conf = process["files"]["MMC_LOCAL_CONFIG_PATH"]
    assert conf["path"] == "/usr/local/Ascend/pyMotor/conf/mmc-local.conf"
    assert (conf["exists"], conf["symlink"], conf["writable"]) == (True, False, True)
    owner = "service-a" if stack == "service-b" else stack
    host = f"mindie-motor-kvs-master.{owner}.svc.cluster.local"
    assert f"ock.mmc.meta_service_url = tcp://{host}:50088\n" in conf["text"]
    assert f"ock.mmc.local_service.config_store_url = tcp://{host}:50089\n" in conf["text"]
    assert process["prepare"]["ok"], process["prepare"]
    assert "ock.mmc.local_service.protocol = device_rdma" in process["prepare"]["text"]  # A2, set by Motor


def test_engine_env_json_values_apply_after_set_cann_env(rendered, motor_checkout, tmp_path) -> None:
    """deploy.py's set_prefill_env runs after set_cann_env, so env.json beats CANN's set_env.sh."""
    values = {**stack_values("dev"), "motor_deployer_dir": str(motor_checkout / "examples" / "deployer")}
    values.setdefault("env", {}).setdefault("motor_engine_prefill_env", {})["ASCEND_TOOLKIT_HOME"] = "/opt/cann"
    run = render(values, stack="dev")
    result = boot_role(run, "prefill", motor_checkout, tmp_path)
    assert result.process("motor.node_manager.main")["env"]["ASCEND_TOOLKIT_HOME"] == "/opt/cann"


def test_probe_and_prestop_scripts_exist_in_motor_config(rendered) -> None:
    for stack, run in rendered.items():
        data = run.get("ConfigMap", "motor-config")["data"]
        for role in roles_of(stack):
            workload, name = ROLES[role]
            container = next(c for c in pod_spec(run, workload)["containers"] if c["name"] == name)
            commands = [probe["exec"]["command"][-1] for key, probe in container.items()
                        if key.endswith("Probe") and "exec" in probe]
            commands += [container["lifecycle"]["preStop"]["exec"]["command"][-1]] if "lifecycle" in container else []
            for command in commands:
                script = command.split()[0].removeprefix("$CONFIGMAP_PATH/")
                assert script in data, (stack, role, command)
            assert ("lifecycle" in container) == (role in ("prefill", "decode")), (stack, role)
