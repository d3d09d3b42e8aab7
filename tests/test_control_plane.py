"""ControlPlane: motor-config, controller/coordinator and their Services, narrow RBAC; InferServiceSet mode."""

from __future__ import annotations

import json

import pulumi
import pytest

from kvpool.cli.engine.mock_engine import ProgramError, run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.cli.views.blast_radius import workloads as preview_workloads
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.components.workloads import Workloads
from kvpool.internal.motor_config import MOTOR_FILES
from kvpool.settings.deploy import DEPLOY_PY_NODE_PORTS
from tests.program_runs import PROJECT_DIR, deployer_folder, env_of, render, render_stack, stack_values
from tests.service_configs import HOST_LOG_DIRS, memcache_pool, plain_pd, with_host_log_dirs


def test_motor_config_holds_the_effective_user_config():
    rendered = render_stack("dev")
    data = rendered.get("ConfigMap", "motor-config")["data"]
    # without motor_deployer_dir: only what motor-kvpool generates (the MemCache conf Motor's scripts copy)
    assert list(data) == ["kv_store_backends.memcache.mmc-local.conf", "user_config.json"]
    effective = json.loads(data["user_config.json"])
    assert effective["motor_deploy_config"]["job_id"] == "dev"
    assert effective["kv_cache_store_config"] == {
        "additional_labels": {}, "additional_annotations": {}, "backend": "memcache", "port": 50088,
        "config_store_port": 50089, "metrics_port": 50090, "local_service_mode": "inprocess",
        "dram_size": "2GB",  # Motor's node manager reads it (LocalService.prepare)
    }


def test_motor_files_are_read_at_deploy_time_under_deploy_pys_keys(tmp_path, motor_checkout):
    values = stack_values("dev")
    values["motor_deployer_dir"] = str(deployer_folder(tmp_path, motor_checkout))
    data = render(values, stack="dev").get("ConfigMap", "motor-config")["data"]
    assert sorted(data) == sorted([key for key, _ in MOTOR_FILES] + ["user_config.json"])
    assert data["boot.sh"] == "# startup/boot.sh\n"
    assert data["kv_store_backends.mooncake.mooncake.sh"] == "# startup/roles/kv_store_backends/mooncake/mooncake.sh\n"
    # deploy.py's update_shell_safely: env.json sections as functions on top of the role scripts
    assert data["controller.sh"] == (
        "function set_controller_env() {\n    export CANN_INSTALL_PATH='/usr/local/Ascend'\n    export PYTHONHASHSEED='0'\n"
        "    export ENGINE_TYPE='vllm'\n    export MODEL_NAME='qwen3-8B'\n"
        "    export SERVICE_ID='dev'\n}\n# startup/roles/controller.sh\n"
    )
    engine = data["engine.sh"]
    assert [line for line in engine.splitlines() if line.startswith("function")] == [
        "function set_union_env() {", "function set_decode_env() {", "function set_prefill_env() {",
        "function set_encode_env() {",
    ]
    prefill = engine[engine.index("function set_prefill_env"):].split("}\n")[0]
    assert "    export PYTHONHASHSEED='0'\n" in prefill
    assert "    export MMC_LOCAL_CONFIG_PATH='/usr/local/Ascend/pyMotor/conf/mmc-local.conf'\n" in prefill
    # the MemCache conf Motor's sync_mmc_local_config copies is ours: the store's Service and configured ports
    assert data["kv_store_backends.memcache.mmc-local.conf"].startswith(
        "ock.mmc.meta_service_url = tcp://mindie-motor-kvs-master.dev.svc.cluster.local:50088\n"
    )


def test_a_deployer_folder_missing_a_file_is_refused_naming_it(tmp_path, motor_checkout):
    folder = deployer_folder(tmp_path, motor_checkout)
    (folder / "probe" / "probe.py").unlink()
    values = stack_values("dev")
    values["motor_deployer_dir"] = str(folder)
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert str(caught.value) == (
        f"motor_deployer_dir: {folder} lacks probe/probe.py, which deploy.py puts in motor-config; point "
        "motor_deployer_dir at Motor's examples/deployer folder (the one holding deploy.py)"
    )


def test_the_old_scripts_setting_says_what_to_write_instead():
    values = stack_values("dev")
    values["motor_scripts_dir"] = "../MindIE-Motor/examples/deployer/startup"
    with pytest.raises(ProgramError) as caught:
        render(values, stack="dev")
    assert str(caught.value) == (
        "stack 'dev': 1 problem\n  - motor-kvpool:motor_scripts_dir: motor_scripts_dir is replaced by "
        "motor_deployer_dir: motor-config needs deploy.py's whole file set (startup/, startup/roles/, probe/, "
        "prestop/); point motor_deployer_dir at Motor's examples/deployer folder"
    )


def test_up_without_motor_scripts_is_refused_and_preview_warns():
    config = load_stack_config(PROJECT_DIR, "dev")
    preview_run = run_program(PROJECT_DIR, config, preview=True)
    assert preview_run.log_messages == [
        "warning: motor_deployer_dir is unset: motor-config has none of Motor's scripts; `pulumi up` will refuse"
    ]
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config, preview=False)
    assert str(caught.value) == (
        "motor_deployer_dir is unset: Motor's pods run boot.sh and the scripts it sources from ConfigMap "
        "motor-config; set motor-kvpool:motor_deployer_dir to Motor's examples/deployer folder"
    )


def _control_plane_ports(rendered) -> dict[str, tuple[str, list[tuple[int, int | None]]]]:
    return {
        name: (rendered.get("Service", name)["spec"]["type"],
               [(p["port"], p.get("nodePort")) for p in rendered.get("Service", name)["spec"]["ports"]])
        for name in rendered.names("Service")
        if name != "mindie-motor-kvs-master"
    }


def test_services_keep_deploy_pys_names_and_ports_and_ask_for_no_node_port():
    """A NodePort is allocated once per cluster: unasked, a second service would be refused (issue 34)."""
    assert _control_plane_ports(render_stack("dev")) == {
        "mindie-motor-controller-service": ("ClusterIP", [(1026, None)]),
        "mindie-motor-controller-observability-service": ("ClusterIP", [(1027, None)]),
        "mindie-motor-coordinator-infer": ("ClusterIP", [(1025, None)]),
        "mindie-motor-coordinator-mgmt": ("ClusterIP", [(1026, None)]),
        "mindie-motor-coordinator-obs": ("ClusterIP", [(1027, None)]),
    }


def test_deploy_pys_node_ports_when_written():
    values = stack_values("dev")
    values["motor_deploy_config"].update(DEPLOY_PY_NODE_PORTS)
    assert _control_plane_ports(render(values)) == {
        "mindie-motor-controller-service": ("ClusterIP", [(1026, None)]),
        "mindie-motor-controller-observability-service": ("NodePort", [(1027, 31027)]),
        "mindie-motor-coordinator-infer": ("NodePort", [(1025, 31015)]),
        "mindie-motor-coordinator-mgmt": ("ClusterIP", [(1026, None)]),
        "mindie-motor-coordinator-obs": ("NodePort", [(1027, 31017)]),
    }


def test_rbac_is_exactly_what_motors_controller_calls():
    """tests/conformance/test_motor_rbac.py runs Motor's client against these rules; here, the objects."""
    rendered = render_stack("dev")
    assert rendered.names("Role") == ["mindie-controller-configmaps-dev"]
    assert rendered.get("Role", "mindie-controller-configmaps-dev")["metadata"]["namespace"] == "kube-system"
    assert rendered.get("Role", "mindie-controller-configmaps-dev")["rules"] == [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}
    ]
    assert rendered.get("ClusterRole", "mindie-controller-nodes-dev")["rules"] == [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["list", "watch"]}
    ]
    assert rendered.get("ClusterRole", "mindie-controller-pods-dev")["rules"] == [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}
    ]
    controller = rendered.get("Deployment", "mindie-motor-controller")["spec"]["template"]["spec"]
    assert controller["serviceAccountName"] == "mindie-motor-controller"


def test_coordinator_gets_the_store_host_but_not_the_client_files():
    rendered = render_stack("dev")
    env = env_of(rendered.container("Deployment", "mindie-motor-coordinator", "coordinator"))
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.dev.svc.cluster.local"
    assert "MMC_LOCAL_CONFIG_PATH" not in env
    # it fetches the store's /metrics (Motor's metrics_collector.py) and dials no client port of the store
    labels = rendered.get("Deployment", "mindie-motor-coordinator")["spec"]["template"]["metadata"]["labels"]
    assert labels["motor-kvpool.io/metrics-scraper"] == "true"
    assert "motor-kvpool.io/kv-client" not in labels
    controller = rendered.get("Deployment", "mindie-motor-controller")["spec"]["template"]["metadata"]["labels"]
    assert not {"motor-kvpool.io/kv-client", "motor-kvpool.io/metrics-scraper"} & set(controller)


def test_a_coordinator_with_a_conductor_mounts_the_weights_read_only_for_its_tokenizer():
    """Motor's coordinator loads the prefill model's tokenizer when it has a conductor (kv-affinity); deploy.py mounts
    weight_mount_path on the coordinator as on the engines (tests/conformance runs Motor's TokenizerManager on it)."""
    values = stack_values("kv-affinity")
    values["motor_deploy_config"]["weight_mount_path"] = "/data/models"
    values["motor_engine_prefill_config"]["engine_config"]["model"] = "/data/models/qwen3_8B"
    pod = render(values, stack="kv-affinity").get("Deployment", "mindie-motor-coordinator")["spec"]["template"]["spec"]
    assert pod["volumes"][-1] == {"name": "weight-mount", "hostPath": {"path": "/data/models", "type": "Directory"}}
    assert pod["containers"][0]["volumeMounts"][-1] == {
        "name": "weight-mount", "mountPath": "/data/models", "readOnly": True,
    }


@pytest.mark.parametrize("stack", ("dev", "service-set"))
def test_a_coordinator_without_a_conductor_reads_no_weights_and_mounts_none(stack):
    (pod,) = [pod for role, pod in motor_pod_specs(render_stack(stack)) if role == "mindie-motor-coordinator"]
    assert [v["name"] for v in pod["volumes"]] == ["motor-config", "plog-path"]
    assert [m["name"] for m in pod["containers"][0]["volumeMounts"]] == ["motor-config", "plog-path"]


def test_a_port_in_motors_api_config_that_is_not_a_port_is_refused():
    values = stack_values("dev")
    for port in ("abc", 70000):
        values["motor_coordinator_config"] = {"api_config": {"coordinator_api_infer_port": port}}
        with pytest.raises(ProgramError) as caught:
            render(values)
        # The ports rule speaks for the field (the pass-through schema's type line for it is not repeated).
        assert str(caught.value) == (
            f"stack 'svc': 1 problem\n  - motor_coordinator_config.api_config.coordinator_api_infer_port: {port!r} "
            f"is not a port number (1-65535)."
        )


def test_unreadable_motor_scripts_are_refused(tmp_path, motor_checkout):
    folder = deployer_folder(tmp_path, motor_checkout)
    (folder / "startup" / "boot.sh").write_bytes(b"\xff\xfe binary")
    values = stack_values("dev")
    values["motor_deployer_dir"] = str(folder)
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert str(caught.value) == f"motor_deployer_dir: {folder}/startup/boot.sh: is UTF-16 text; save it as UTF-8"


def test_infer_service_set_holds_every_role_with_crd_prefixed_service_names():
    rendered = render_stack("service-set")
    assert rendered.names("Deployment") == [] and rendered.names("Service") == []
    iss = rendered.get("InferServiceSet", "vllm")
    roles = {role["name"]: role for role in iss["spec"]["template"]["roles"]}
    assert sorted(roles) == ["controller", "coordinator", "decode", "kv-store", "prefill"]
    assert (roles["prefill"]["replicas"], roles["decode"]["replicas"]) == (1, 1)
    assert [s["name"] for s in roles["kv-store"]["services"]] == ["mindie-motor-kvs-master"]
    prefill = roles["prefill"]["spec"]["template"]["spec"]["containers"][0]
    env = env_of(prefill)
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master-vllm-0-kv-store.service-set.svc.cluster.local"
    assert env["CONTROLLER_SERVICE"] == (
        "mindie-motor-controller-service-vllm-0-controller.service-set.svc.cluster.local"
    )
    assert rendered.run.outputs["kv_store"]["host"] == (
        "mindie-motor-kvs-master-vllm-0-kv-store.service-set.svc.cluster.local"
    )


def test_controller_and_coordinator_mount_the_nodes_log_folder_as_deploy_pys_templates_do():
    """Motor's common.sh chmods $MOTOR_LOG_ROOT_PATH (/root/ascend/log in the ucm stack) in every role and logs there."""
    rendered = render_stack("ucm")
    for name in ("mindie-motor-controller", "mindie-motor-coordinator"):
        pod = rendered.get("Deployment", name)["spec"]["template"]["spec"]
        assert pod["volumes"][-1] == {
            "name": "plog-path", "hostPath": {"path": "/root/ascend/log", "type": "DirectoryOrCreate"}
        }
        assert pod["containers"][0]["volumeMounts"][-1] == {"name": "plog-path", "mountPath": "/root/ascend/log"}


def exec_probe(stage: str, failure_threshold: int) -> dict:
    return {"exec": {"command": ["bash", "-c", f"$CONFIGMAP_PATH/probe.sh {stage}"]}, "periodSeconds": 10,
            "timeoutSeconds": 30, "failureThreshold": failure_threshold}


def test_controller_and_coordinator_probes_have_deploy_pys_timing_and_a_timeout_probe_py_can_meet():
    """deploy.py's controller_template.yaml:86-111 and coordinator_template.yaml:51-76, with a 30 s timeout on the
    startup probe too: the kubelet's default of 1 s is shorter than probe.py's Python start and httpx import."""
    rendered = render_stack("dev")
    for name in ("mindie-motor-controller", "mindie-motor-coordinator"):
        container = rendered.get("Deployment", name)["spec"]["template"]["spec"]["containers"][0]
        probes = {key: value for key, value in container.items() if key.endswith("Probe")}
        assert probes == {
            "startupProbe": exec_probe("startup", 100),
            "readinessProbe": exec_probe("readiness", 5),
            "livenessProbe": exec_probe("liveness", 5),
        }, name


@pytest.mark.parametrize("stack", ("dev", "service-set"))
def test_each_role_mounts_its_host_log_dir_at_the_pods_log_folder(stack):
    rendered = render(with_host_log_dirs(stack_values(stack)), stack=stack)
    engines = HOST_LOG_DIRS["motor_nodemanger_config"]  # deploy.py: every engine pod takes the node manager's
    want = {
        "mindie-motor-controller": {HOST_LOG_DIRS["motor_controller_config"]},
        "mindie-motor-coordinator": {HOST_LOG_DIRS["motor_coordinator_config"]},
        "prefill": {engines}, "decode": {engines},
    }
    got: dict[str, set[str]] = {}
    for role, pod in motor_pod_specs(rendered):
        (volume,) = [v for v in pod["volumes"] if v["name"] == "plog-path"]
        (mount,) = [m for c in pod["containers"] for m in c["volumeMounts"] if m["name"] == "plog-path"]
        assert volume["hostPath"]["type"] == "DirectoryOrCreate" and mount["mountPath"] == "/root/ascend/log"
        got.setdefault(role, set()).add(volume["hostPath"]["path"])
    assert got == want
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    assert user_config["motor_coordinator_config"]["logging_config"]["host_log_dir"] == "/data/logs/coordinator"


MOTOR_COMPONENTS = ("mindie-motor-controller", "mindie-motor-coordinator", "prefill", "decode")


def motor_pod_specs(rendered):
    """(app.kubernetes.io/component, pod spec) of every Motor pod template: Deployments' or the set's roles'."""
    objects = {f"{kind}/{name}": body for (kind, name), body in rendered.objects.items()}
    for workload in preview_workloads(objects).values():
        if workload.component in MOTOR_COMPONENTS:
            yield workload.component, workload.template["spec"]


def test_a_second_workload_for_one_role_of_a_service_set_is_refused():
    workloads = Workloads("service-set", "infer_service_set")
    spec = {"replicas": 1, "template": {"spec": {"containers": []}}}
    assert workloads.deployment("vllm-p0", "prefill", {"name": "vllm-p0"}, spec, pulumi.ResourceOptions()) is None
    with pytest.raises(ValueError) as caught:
        workloads.deployment("vllm-p1", "prefill", {"name": "vllm-p1"}, spec, pulumi.ResourceOptions())
    assert str(caught.value) == (
        "role 'prefill' already has a workload in the InferServiceSet; 'vllm-p1' would replace it"
    )


def test_secret_env_reaches_pods_only_through_a_secret():
    values = stack_values("dev")
    values["secret_env"] = {"HF_TOKEN": "hf_abc123"}
    config = StackConfig("motor-kvpool", "dev", {f"motor-kvpool:{k}": json.dumps(v) for k, v in values.items()},
                         secret_keys=["motor-kvpool:secret_env"])
    run = run_program(PROJECT_DIR, config)
    secret = run.resource("kubernetes:core/v1:Secret", "motor-kvpool-secret-env")
    assert secret.inputs["stringData"] == {"HF_TOKEN": "hf_abc123"}
    assert ("stringData",) in secret.secret_paths
    objects = {(o.kind, o.name): o for o in kubernetes_objects(run.resources)}
    for name in ("vllm-p0", "vllm-d0", "mindie-motor-controller", "mindie-motor-coordinator"):
        container = objects[("Deployment", name)].body["spec"]["template"]["spec"]["containers"][0]
        assert container["envFrom"] == [{"secretRef": {"name": "motor-kvpool-secret-env"}}]
        assert "hf_abc123" not in json.dumps(container)
    assert "hf_abc123" not in json.dumps(objects[("ConfigMap", "motor-config")].body)


def test_no_secret_without_secret_env():
    rendered = render_stack("dev")
    assert rendered.names("Secret") == []
    assert "envFrom" not in rendered.container("Deployment", "vllm-p0", "vllm")


def config_with(values: dict, secret_keys: list[str]) -> StackConfig:
    return StackConfig("motor-kvpool", "dev", {f"motor-kvpool:{k}": json.dumps(v) for k, v in values.items()},
                       secret_keys=secret_keys)


def test_a_secret_outside_secret_env_is_refused():
    values = stack_values("dev")
    values["env"]["motor_engine_prefill_env"]["MY_ENDPOINT_CRED_X"] = "s3cr3t"
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config_with(values, ["motor-kvpool:env"]))
    assert str(caught.value) == (
        "stack 'dev': 1 problem\n  - motor-kvpool:env: is a secret, but settings are rendered into ConfigMaps and "
        "plain env; keep secrets under secret_env (`pulumi config set --secret --path secret_env.NAME VALUE`)"
    )


def test_a_plain_text_secret_env_is_refused():
    values = stack_values("dev")
    values["secret_env"] = {"HF_TOKEN": "hf_abc123"}
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config_with(values, []))
    assert str(caught.value) == (
        "stack 'dev': 1 problem\n  - motor-kvpool:secret_env: is stored in plain text; set each value with "
        "`pulumi config set --secret --path secret_env.NAME VALUE` so that it stays encrypted"
    )


def test_a_reference_to_a_secret_env_name_is_refused_where_the_pod_loads_the_secret():
    """Issue 45 §1: Kubernetes fills $(HF_TOKEN) in from the Secret in the containers that load it, where Motor's
    set_*_env functions re-export the text (tests/test_motor_env_shell.py); the KV conductor's pod does not load it,
    so its $(HF_TOKEN) is text in both."""
    values = stack_values("dev")
    values["secret_env"] = {"HF_TOKEN": "hf_abc123"}
    values["env"]["motor_common_env"]["HUB_ARGS"] = "--token=$(HF_TOKEN)"
    values["env"]["motor_kv_conductor_env"] = {"HUB_ARGS": "--token=$(HF_TOKEN)"}
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config_with(values, ["motor-kvpool:secret_env"]))
    assert str(caught.value) == (
        "stack 'dev': 1 problem\n  - env.motor_common_env.HUB_ARGS: references $(HF_TOKEN), a name of secret_env, "
        "which Kubernetes fills in from the Secret, while Motor's set_*_env functions re-export the text `$(HF_TOKEN)`, "
        "so Motor's processes would see that text; put the whole value in secret_env instead, under this variable's "
        "name."
    )


def test_a_secret_env_name_that_env_json_also_sets_is_refused_naming_both():
    """Issue 33 class 10: a container's env entry beats its envFrom one, so the plain value hid the secret silently."""
    values = stack_values("dev")
    values["secret_env"] = {"HTTPS_PROXY": "http://user:pw@proxy:3128", "OTHER": "x"}
    values["env"]["motor_common_env"]["HTTPS_PROXY"] = "http://proxy:3128"
    values["env"]["motor_engine_decode_env"]["HTTPS_PROXY"] = "http://proxy:3128"
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config_with(values, ["motor-kvpool:secret_env"]))
    assert str(caught.value) == "stack 'dev': 2 problems\n" + "".join(
        f"  - env.{section}.HTTPS_PROXY: secret_env.HTTPS_PROXY sets the same variable, and this plain value would hide "
        f"the secret in every pod that gets both (Kubernetes prefers env over envFrom); remove one of "
        f"env.{section}.HTTPS_PROXY and secret_env.HTTPS_PROXY.{end}"
        for section, end in (("motor_common_env", "\n"), ("motor_engine_decode_env", ""))
    )


def test_a_misspelt_string_key_is_named_as_unknown():
    values = stack_values("dev")
    values["motor_deployer_dirr"] = "../deployer"
    with pytest.raises(ProgramError) as caught:
        run_program(PROJECT_DIR, config_with(values, []))
    assert str(caught.value) == (
        "stack 'dev': 1 problem\n  - motor-kvpool:motor_deployer_dirr: unknown configuration key; did you mean "
        "motor-kvpool:motor_deployer_dir?"
    )


@pytest.mark.parametrize("target", ["/proc/self/environ", "/etc/shadow", "../../outside.sh"])
def test_a_motor_file_symlinked_out_of_the_deployer_folder_is_refused(tmp_path, motor_checkout, target):
    """motor_deployer_dir may lie outside the project, but only deploy.py's files inside it are read."""
    folder = deployer_folder(tmp_path, motor_checkout)
    (folder.parent / "outside.sh").write_text("SECRET=1\n")  # ../../outside.sh from startup/
    (folder / "startup" / "boot.sh").unlink()
    (folder / "startup" / "boot.sh").symlink_to(target)
    values = stack_values("dev")
    values["motor_deployer_dir"] = str(folder)
    with pytest.raises(ProgramError) as caught:
        render(values)
    resolved = (folder / "startup" / "boot.sh").resolve()
    assert str(caught.value) == (
        f"motor_deployer_dir: startup/boot.sh resolves to {resolved}, outside Motor's deployer folder {folder}; "
        f"motor-kvpool reads only files inside it (a symlink or `..` may not lead out). Copy the file into Motor's "
        f"deployer folder."
    )


def test_a_symlink_inside_the_deployer_folder_is_followed(tmp_path, motor_checkout):
    folder = deployer_folder(tmp_path, motor_checkout)
    (folder / "startup" / "boot.sh").unlink()
    (folder / "startup" / "boot.sh").symlink_to("common.sh")
    values = stack_values("dev")
    values["motor_deployer_dir"] = str(folder)
    assert render(values).get("ConfigMap", "motor-config")["data"]["boot.sh"] == "# startup/common.sh\n"


def _flat(value: object, path: str = "") -> dict[str, object]:
    if isinstance(value, dict):
        return {key: leaf for name, item in value.items() for key, leaf in _flat(item, f"{path}.{name}" if path else name).items()}
    if isinstance(value, list):
        return {key: leaf for index, item in enumerate(value) for key, leaf in _flat(item, f"{path}[{index}]").items()}
    return {path: value}


def test_a_pool_changes_the_control_plane_only_by_what_the_coordinator_needs_of_the_store():
    """Seed 000 line 19: the pool does not change how the controller and coordinator are deployed. The controller is
    the same object; the coordinator gains the store's host and backend (deploy.py gives it these two) and the label
    that lets it fetch the store's metrics."""
    def render_multi(service: dict) -> dict[str, dict[str, object]]:
        service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
        rendered = render(service)
        return {name: _flat(rendered.get("Deployment", name))
                for name in ("mindie-motor-controller", "mindie-motor-coordinator")}

    without, with_pool = render_multi(plain_pd()), render_multi(memcache_pool())
    changed = {name: {key: (without[name].get(key), with_pool[name].get(key))
                      for key in without[name].keys() | with_pool[name].keys()
                      if without[name].get(key) != with_pool[name].get(key)} for name in without}
    assert changed == {
        "mindie-motor-controller": {},
        "mindie-motor-coordinator": {
            "spec.template.metadata.labels.motor-kvpool.io/metrics-scraper": (None, "true"),
            "spec.template.spec.containers[0].env[11].name": (None, "KVS_MASTER_SERVICE"),
            "spec.template.spec.containers[0].env[11].value": (None, "mindie-motor-kvs-master.svc.svc.cluster.local"),
            "spec.template.spec.containers[0].env[12].name": (None, "KV_STORE_BACKEND"),
            "spec.template.spec.containers[0].env[12].value": (None, "memcache"),
        },
    }
