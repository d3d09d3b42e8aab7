"""KV-cache affinity scheduling: the KVConductor's exact objects (from its arguments alone, and in a service), the
coordinator's KV_CONDUCTOR_SERVICE, the settings and rules that refuse what Motor would not run, and env.json's
motor_kv_conductor_env."""

from __future__ import annotations

import copy
import dataclasses
import json
from typing import Any

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from kvpool.components.kv_conductor import (
    KVConductor,
    KVConductorArgs,
    conductor_config,
)
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.workloads import Workloads
from kvpool.internal.checksums import digest
from kvpool.internal.motor_config import MOTOR_FILES
from kvpool.internal.ports import Port
from kvpool.program.args import kv_conductor_args
from kvpool.settings.pods import ContainerResources
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import Rendered, env_of, render, render_component, stack_values
from tests.service_configs import problems_of

NAME = "mindie-motor-kv-conductor"


def affinity() -> dict[str, Any]:
    return copy.deepcopy(stack_values("kv-affinity"))


def prefill_engine(service: dict[str, Any]) -> dict[str, Any]:
    return service["motor_engine_prefill_config"]["engine_config"]


@pytest.fixture(scope="module")
def rendered() -> Rendered:
    return render(affinity(), stack="kv-affinity")


# --- the component from its arguments alone ----------------------------------------------------------------------

POOL = KVStoreEndpoint(
    backend="mooncake", host="mindie-motor-kvs-master.pool.svc.cluster.local", port=50100, metrics_port=9003,
    namespace="pool", deploy_mode="multi_deployment",
)
LABELS = {
    "app": NAME,
    "app.kubernetes.io/component": "kv-conductor",
    "app.kubernetes.io/managed-by": "motor-kvpool",
    "app.kubernetes.io/name": NAME,
    "app.kubernetes.io/part-of": "svc",
    "deploy-name": NAME,
}
EVENT_EGRESS = {
    "to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/component": "prefill",
                                            "app.kubernetes.io/part-of": "svc"}}}],
    "ports": [{"port": 5557, "endPort": 5558, "protocol": "TCP"}, {"port": 6667, "protocol": "TCP"}],
}


def conductor_args(deploy_mode: str = "multi_deployment", **changes: Any) -> KVConductorArgs:
    args = KVConductorArgs(
        namespace="svc",
        workloads=Workloads("svc", deploy_mode),
        image="motor:1",
        port=Port(name="api", port=14000),
        env={"KVS_MASTER_SERVICE": POOL.host, "RUST_LOG": "info"},
        restart_inputs={"motor-env": {"RUST_LOG": "info"}, "kv-conductor-config": {"http_server_port": 14000},
                        "motor-scripts": None},
        kv_event_ports=(range(5557, 5559), range(6667, 6668)),
        resources=ContainerResources.model_validate({"requests": {"cpu": "2"}, "limits": {"memory": "3Gi"}}),
        followed_pool=POOL,
    )
    return dataclasses.replace(args, **changes)


def test_the_component_renders_its_arguments_and_nothing_else():
    rendered = render_component(lambda: KVConductor("kv-conductor", conductor_args()))
    assert sorted(rendered.objects) == [("Deployment", NAME), ("NetworkPolicy", NAME), ("Service", "kv-conductor")]
    deployment = rendered.get("Deployment", NAME)
    assert deployment["metadata"] == {"name": NAME, "namespace": "svc", "labels": LABELS}
    pod = deployment["spec"]["template"]
    assert pod["metadata"] == {
        "labels": {**LABELS, "motor-kvpool.io/kv-client": "true"},  # it follows a pool: the store admits it
        # restart_inputs, each by name; None (no Motor scripts) is no input
        "annotations": {"checksum/kv-conductor-config": digest({"http_server_port": 14000}),
                        "checksum/motor-env": digest({"RUST_LOG": "info"})},
    }
    container = rendered.container("Deployment", NAME, "kv-conductor")
    assert container["image"] == "motor:1"
    assert container["ports"] == [{"name": "api", "containerPort": 14000, "protocol": "TCP"}]
    assert container["resources"] == {"requests": {"cpu": "2"}, "limits": {"memory": "3Gi"}}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["tcpSocket"] == {"port": "api"}, probe
    # motor-kvpool's own (field references, ROLE, JOB_NAME, Motor's paths and Services), then `env` in its order
    assert [entry["name"] for entry in container["env"]][-4:] == [
        "COORDINATOR_INFER_SERVICE", "COORDINATOR_OBS_SERVICE", "KVS_MASTER_SERVICE", "RUST_LOG",
    ]
    env = env_of(container)
    assert (env["ROLE"], env["JOB_NAME"], env["RUST_LOG"]) == ("kv_conductor", "svc-kv-conductor", "info")
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.pool.svc.cluster.local"
    assert rendered.get("Service", "kv-conductor")["spec"] == {
        "type": "ClusterIP", "selector": {"app": NAME},
        "ports": [{"name": "api", "port": 14000, "targetPort": 14000, "protocol": "TCP"}],
    }
    assert rendered.get("NetworkPolicy", NAME)["spec"] == {
        "podSelector": {"matchLabels": {"app": NAME}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "mindie-motor-coordinator"}}}],
                     "ports": [{"port": 14000, "protocol": "TCP"}]}],
        "egress": [
            EVENT_EGRESS,
            # the pool of another namespace: its master's pods, by that namespace
            {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "pool"}},
                     "podSelector": {"matchLabels": {"app": "mindie-motor-kv-store"}}}],
             "ports": [{"port": 50100, "protocol": "TCP"}]},
            {"to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
        ],
    }


def test_without_a_followed_pool_it_is_no_kv_client_and_dials_the_engines_only():
    rendered = render_component(lambda: KVConductor("kv-conductor", conductor_args(followed_pool=None)))
    labels = rendered.get("Deployment", NAME)["spec"]["template"]["metadata"]["labels"]
    assert labels == LABELS
    assert rendered.get("NetworkPolicy", NAME)["spec"]["egress"] == [EVENT_EGRESS]
    alone = conductor_args(followed_pool=None, kv_event_ports=())
    rendered = render_component(lambda: KVConductor("kv-conductor", alone))
    assert rendered.get("NetworkPolicy", NAME)["spec"]["egress"] == []


def test_in_a_service_set_the_workload_and_service_are_a_role_and_the_policy_stays_a_plain_object():
    args = conductor_args("infer_service_set")

    def build() -> None:
        conductor = KVConductor("kv-conductor", args)
        assert conductor.deployment is None and conductor.service is None
        args.workloads.finish()

    rendered = render_component(build)
    assert sorted(rendered.objects) == [("InferServiceSet", "vllm"), ("NetworkPolicy", NAME)]
    (role,) = rendered.get("InferServiceSet", "vllm")["spec"]["template"]["roles"]
    assert role["name"] == "kv-conductor"
    assert role["services"] == [{"name": "kv-conductor", "spec": {
        "type": "ClusterIP", "ports": [{"name": "api", "port": 14000, "targetPort": 14000, "protocol": "TCP"}],
    }}]


def test_each_settings_field_reaches_its_argument_in_one_function():
    settings = load_from_pulumi_config(affinity(), "kv-affinity")
    workloads = Workloads("kv-affinity", "multi_deployment")
    own_pool = dataclasses.replace(POOL, host="mindie-motor-kvs-master.kv-affinity.svc.cluster.local", port=50088,
                                   namespace="kv-affinity")
    role_envs = {"motor_kv_conductor_env": {"A": "1"}}
    motor_files = {key: f"# {key}" for key, _ in MOTOR_FILES}
    args = kv_conductor_args(settings, workloads, own_pool, role_envs, motor_files)
    assert args.port == Port(name="http", port=13333)  # kv_conductor_config.http_server_port
    assert args.image == affinity()["motor_deploy_config"]["image_name"]
    # the pool's master, and motor_common_env (the stack sets CANN_INSTALL_PATH there)
    assert args.env == {"KVS_MASTER_SERVICE": own_pool.host, "CANN_INSTALL_PATH": "/usr/local/Ascend"}
    assert args.kv_event_ports == (range(5557, 5559), range(6667, 6669))  # the prefill engines' kv-events-config
    assert args.followed_pool == own_pool  # kv_conductor_config.kvevent_instance
    assert args.restart_inputs == {
        # what boot.sh runs for ROLE=kv_conductor, not the other roles' scripts
        "motor-scripts": {key: f"# {key}" for key in ("boot.sh", "common.sh", "kv_conductor.sh", "mooncake_config.py")},
        "motor-env": {"A": "1"},
        "kv-conductor-config": {"http_server_port": 13333, "kvevent_instance": {"mooncake_master": {
            "type": "Mooncake", "endpoint": f"tcp://{own_pool.host}:50088",
            "modelname": prefill_engine(affinity())["served_model_name"],
        }}},
    }
    # the conductor's file is a copy: the user_config it was made from keeps its section as written
    user_config = settings.user_config()
    conductor_config(user_config, own_pool, prefill_engine(affinity())["served_model_name"])
    assert user_config["kv_conductor_config"]["kvevent_instance"] == {"mooncake_master": {"type": "Mooncake"}}
    without_events = affinity()
    del without_events["kv_conductor_config"]["kvevent_instance"]
    settings = load_from_pulumi_config(without_events, "kv-affinity")
    assert kv_conductor_args(settings, workloads, own_pool, role_envs, {}).followed_pool is None


def test_deployment_as_deploy_py_renders_it(rendered):
    deployment = rendered.get("Deployment", NAME)
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["selector"] == {"matchLabels": {"app": NAME}}
    pod = deployment["spec"]["template"]
    assert pod["metadata"]["labels"]["app"] == NAME and pod["metadata"]["labels"]["deploy-name"] == NAME
    assert pod["metadata"]["labels"]["motor-kvpool.io/kv-client"] == "true"  # it dials the pool's master
    assert sorted(pod["metadata"]["annotations"]) == ["checksum/kv-conductor-config", "checksum/motor-env"]
    spec = pod["spec"]
    assert spec["automountServiceAccountToken"] is False and spec["securityContext"] == {"fsGroup": 1001}
    assert spec["volumes"] == [{"name": "motor-config", "configMap": {"name": "motor-config", "defaultMode": 0o550}}]
    container = rendered.container("Deployment", NAME, "kv-conductor")
    assert container["command"] == ["/bin/bash", "-c", "source /mnt/configmap/boot.sh"]
    assert container["image"] == affinity()["motor_deploy_config"]["image_name"]
    assert container["ports"] == [{"name": "http", "containerPort": 13333, "protocol": "TCP"}]
    assert container["resources"] == {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}}
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "Unconfined"},
    }
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["tcpSocket"] == {"port": "http"}, probe
    env = env_of(container)
    assert env["ROLE"] == "kv_conductor"
    assert env["CONFIG_PATH"] == "/usr/local/Ascend/pyMotor/conf" and env["CONFIGMAP_PATH"] == "/mnt/configmap"
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.kv-affinity.svc.cluster.local"


def test_service_and_coordinator_env(rendered):
    service = rendered.get("Service", "kv-conductor")
    assert service["spec"] == {
        "type": "ClusterIP", "selector": {"app": NAME},
        "ports": [{"name": "http", "port": 13333, "targetPort": 13333, "protocol": "TCP"}],
    }
    coordinator = env_of(rendered.container("Deployment", "mindie-motor-coordinator", "coordinator"))
    assert coordinator["KV_CONDUCTOR_SERVICE"] == "kv-conductor.kv-affinity.svc.cluster.local"
    assert rendered.run.outputs["kv_conductor"] == {
        "service": "kv-conductor.kv-affinity.svc.cluster.local", "port": 13333,
    }
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    assert user_config["kv_conductor_config"] == {
        "http_server_port": 13333, "kvevent_instance": {"mooncake_master": {"type": "Mooncake"}},
    }


def test_network_policy_admits_the_coordinator_and_dials_the_event_ports(rendered):
    assert rendered.get("NetworkPolicy", NAME)["spec"] == {
        "podSelector": {"matchLabels": {"app": NAME}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "mindie-motor-coordinator"}}}],
                     "ports": [{"port": 13333, "protocol": "TCP"}]}],
        "egress": [
            # two DP ranks per prefill pod: 5557-5558 and 6667-6668, where vLLM's publisher binds them
            {"to": [{"podSelector": {"matchLabels": {"app.kubernetes.io/component": "prefill",
                                                     "app.kubernetes.io/part-of": "kv-affinity"}}}],
             "ports": [{"port": 5557, "endPort": 5558, "protocol": "TCP"},
                       {"port": 6667, "endPort": 6668, "protocol": "TCP"}]},
            {"to": [{"podSelector": {"matchLabels": {"app": "mindie-motor-kv-store"}}}],
             "ports": [{"port": 50088, "protocol": "TCP"}]},
            {"to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
        ],
    }


def test_without_kvevent_instance_the_conductor_neither_dials_the_pool_nor_is_its_client():
    service = affinity()
    del service["kv_conductor_config"]["kvevent_instance"]
    rendered = render(service, stack="kv-affinity")
    labels = rendered.get("Deployment", NAME)["spec"]["template"]["metadata"]["labels"]
    assert "motor-kvpool.io/kv-client" not in labels
    assert len(rendered.get("NetworkPolicy", NAME)["spec"]["egress"]) == 1


def test_no_conductor_without_its_section():
    rendered = render(stack_values("mooncake-layerwise"), stack="mooncake-layerwise")
    assert NAME not in rendered.names("Deployment") and "kv-conductor" not in rendered.names("Service")
    assert "KV_CONDUCTOR_SERVICE" not in env_of(rendered.container("Deployment", "mindie-motor-coordinator", "coordinator"))


def test_service_set_holds_the_conductor_role_under_deploy_pys_names():
    service = affinity()
    service["motor_deploy_config"]["deploy_mode"] = "infer_service_set"
    rendered = render(service, stack="kv-affinity")
    roles = {role["name"]: role for role in rendered.get("InferServiceSet", "vllm")["spec"]["template"]["roles"]}
    assert roles["kv-conductor"]["services"][0]["name"] == "kv-conductor"
    coordinator = roles["coordinator"]["spec"]["template"]["spec"]["containers"][0]
    assert env_of(coordinator)["KV_CONDUCTOR_SERVICE"] == "kv-conductor-vllm-0-kv-conductor.kv-affinity.svc.cluster.local"
    assert NAME in rendered.names("NetworkPolicy")  # a plain object in either mode


def test_env_json_section_is_applied_and_guarded():
    service = affinity()
    service["env"] = {"motor_kv_conductor_env": {"RUST_LOG": "debug"}}
    rendered = render(service, stack="kv-affinity")
    assert env_of(rendered.container("Deployment", NAME, "kv-conductor"))["RUST_LOG"] == "debug"
    service["env"] = {"motor_kv_conductor_env": {"KVS_MASTER_SERVICE": "elsewhere"}}
    with pytest.raises(ProgramError) as caught:
        render(service, stack="kv-affinity")
    assert ("env.motor_kv_conductor_env.KVS_MASTER_SERVICE is 'elsewhere' but the KV conductor needs "
            "'mindie-motor-kvs-master.kv-affinity.svc.cluster.local'") in str(caught.value)


# --- refusals: settings layer and policy pack share kvpool/policies/rules/ -------------------------------------------


def test_affinity_without_a_conductor():
    service = affinity()
    del service["kv_conductor_config"]
    assert problems_of(service, "kv-affinity") == [
        "motor_coordinator_config.scheduler_config.scheduler_type: is kv_cache_affinity but kv_conductor_config is "
        "not set: no conductor is deployed, the coordinator gets no KV_CONDUCTOR_SERVICE and routes by load alone "
        "(Motor logs a fallback per request); add kv_conductor_config (e.g. http_server_port: 13333) or choose "
        "another scheduler_type."
    ]


def test_conductor_without_kv_events():
    service = affinity()
    del prefill_engine(service)["kv-events-config"]
    assert problems_of(service, "kv-affinity") == [
        "motor_engine_prefill_config.engine_config.kv-events-config: is missing: kv_conductor_config deploys the "
        "conductor, but the prefill engines publish no KV events for it to index; add kv-events-config {publisher: "
        "zmq, enable_kv_cache_events: true, endpoint: \"tcp://*:5557\", topic: kv-events}."
    ]


def test_kv_events_spelled_with_underscores():
    service = affinity()
    prefill_engine(service)["kv_events_config"] = prefill_engine(service).pop("kv-events-config")
    assert problems_of(service, "kv-affinity")[0].startswith(
        "motor_engine_prefill_config.engine_config.kv_events_config: Motor's coordinator reads kv-events-config"
    )


def test_conductor_without_prefix_caching():
    service = affinity()
    prefill_engine(service)["enable-prefix-caching"] = False
    assert problems_of(service, "kv-affinity") == [
        "motor_engine_prefill_config.engine_config.enable-prefix-caching: turns prefix caching off: vLLM publishes "
        "KV block events from its prefix cache only, so the conductor would index nothing; remove it."
    ]


def test_endpoint_in_a_form_the_coordinator_does_not_register():
    service = affinity()
    prefill_engine(service)["kv-events-config"]["endpoint"] = "tcp://0.0.0.0:5557"
    assert problems_of(service, "kv-affinity") == [
        "motor_engine_prefill_config.engine_config.kv-events-config.endpoint: is 'tcp://0.0.0.0:5557'; Motor's "
        "coordinator registers tcp://<pod IP>:<port + DP rank> by splitting it at '*:' (conductor_api_client.py) "
        "and registers nothing for any other form: write tcp://*:<port>."
    ]


def test_event_port_colliding_with_the_transfer_ports():
    service = affinity()
    # kv_port 30001 with DP 2 x TP 2: vllm-ascend binds 30001-30004
    prefill_engine(service)["kv-events-config"]["replay_endpoint"] = "tcp://*:30003"
    assert problems_of(service, "kv-affinity") == [
        "motor_engine_prefill_config.engine_config.kv-events-config.replay_endpoint: binds ports 30003-30004 (one "
        "per DP rank) in every prefill pod, and motor_engine_prefill_config.engine_config.kv_transfer_config"
        ".kv_connector_extra_config.connectors[0].kv_port (the KV transfer ports) takes 30001-30004 there too (port "
        "30003): one of them fails to bind; choose ports apart."
    ]


def test_event_and_replay_ranges_overlapping():
    service = affinity()
    prefill_engine(service)["kv-events-config"]["replay_endpoint"] = "tcp://*:5558"
    assert problems_of(service, "kv-affinity")[0].startswith(
        "motor_engine_prefill_config.engine_config.kv-events-config.replay_endpoint: binds ports 5558-5559 (one per "
        "DP rank) in every prefill pod, and motor_engine_prefill_config.engine_config.kv-events-config.endpoint (the "
        "other KV-event endpoint) takes 5557-5558"
    )


def test_conductor_following_a_pool_of_another_backend():
    service = affinity()
    service["kv_cache_store_config"] = {"backend": "memcache"}
    for side in ("prefill", "decode"):
        engine = service[f"motor_engine_{side}_config"]["engine_config"]
        engine["kv_transfer_config"]["kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"] = {
            "backend": "memcache"}
    assert problems_of(service, "kv-affinity") == [
        "kv_conductor_config.kvevent_instance.mooncake_master: points the conductor at the pool's master as a "
        "Mooncake event source, but kv_cache_store_config.backend is 'memcache': Motor's conductor config knows a "
        "Mooncake master only and would dial the memcache server's port; remove kvevent_instance (the conductor "
        "still indexes the engines' events) or use backend: mooncake."
    ]


def test_block_size_spelled_as_the_coordinator_does_not_read_it():
    service = affinity()
    prefill_engine(service)["block_size"] = prefill_engine(service).pop("block-size") // 2
    assert problems_of(service, "kv-affinity") == [
        "motor_engine_prefill_config.engine_config.block_size: is 64, but Motor's coordinator reads block-size (with "
        "a hyphen) only and registers and queries the conductor with 128-token blocks: every query would miss; "
        "write block-size: 64."
    ]


@pytest.mark.parametrize(("change", "problem"), [
    ({"http_server_port": 80}, "kv_conductor_config.http_server_port: 80 is below 1024, the least this field takes; write 1024 or more"),
    ({"http_server_port": "13333"}, "kv_conductor_config.http_server_port: \"13333\" is not a whole number; write a "
                                    "whole number without quotes, e.g. 13333"),
    ({"kvevent_instance": {"mooncake_master": {"type": "Memcache"}}},
     "kv_conductor_config.kvevent_instance.mooncake_master.type: 'Memcache' is not allowed; write one of 'Mooncake'"),
    ({"kvevent_instance": {"mooncake_master": {"type": "Mooncake", "endpoint": "tcp://x:1"}}},
     "kv_conductor_config.kvevent_instance.mooncake_master.endpoint: Motor's mooncake_config.py writes it in the pod "
     "(tcp://<KVS_MASTER_SERVICE>:<kv_cache_store_config.port>, the pool's master) and would replace what is written "
     "here; remove it"),
    ({"http_port": 1}, "kv_conductor_config.http_port: unknown key; did you mean 'http_server_port'?"),
])
def test_kv_conductor_config_fields(change, problem):
    service = affinity()
    service["kv_conductor_config"].update(change)
    assert problems_of(service, "kv-affinity") == [problem]


def test_empty_section_means_no_conductor_and_the_env_section_is_accepted():
    service = copy.deepcopy(stack_values("mooncake-layerwise"))
    service["kv_conductor_config"] = {}
    service["env"]["motor_kv_conductor_env"] = {"RUST_LOG": "info"}
    settings = load_from_pulumi_config(service, "mooncake-layerwise")
    assert settings.kv_conductor_config is None and settings.env.motor_kv_conductor_env == {"RUST_LOG": "info"}


def test_consumer_with_another_master_port_is_refused():
    owner = affinity()
    owner["kv_cache_store_config"].update(port=50100, allowed_consumers=["kv-affinity-b"])
    outputs = render(owner, stack="kv-affinity").run.outputs
    service = affinity()
    service["kv_cache_store_config"] = {"backend": "mooncake", "target_stack": "organization/motor-kvpool/kv-affinity"}
    with pytest.raises(ProgramError) as caught:
        render(service, stack="kv-affinity-b", stack_references={"organization/motor-kvpool/kv-affinity": outputs})
    assert ("kv_cache_store_config.port: 50088 is where Motor's mooncake_config.py points the KV conductor "
            "(kv_conductor_config.kvevent_instance), but the pool's master listens on 50100 "
            "(organization/motor-kvpool/kv-affinity's kv_store.port); write port: 50100.") in str(caught.value)


def test_rules_hold_for_the_example_stack(rendered):
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    assert rules.check_kv_cache_affinity(user_config) == [] and rules.check_kv_event_ports(user_config) == []
    assert rules.kv_event_ports(user_config) == {
        "motor_engine_prefill_config.engine_config.kv-events-config.endpoint": range(5557, 5559),
        "motor_engine_prefill_config.engine_config.kv-events-config.replay_endpoint": range(6667, 6669),
    }
