"""KVConductor: Motor's KV conductor for KV-cache affinity scheduling, as deploy.py renders it
(examples/deployer/lib/generator/kv_conductor.py, yaml_template/kv_conductor_template.yaml): Deployment
`mindie-motor-kv-conductor` and Service `kv-conductor` on kv_conductor_config.http_server_port, running Motor's boot.sh
with ROLE=kv_conductor from motor-config like every Motor pod, with KVS_MASTER_SERVICE; and the coordinator's
KV_CONDUCTOR_SERVICE (components/control_plane.py asks `coordinator_env`).

In the pod, Motor's kv_conductor.sh exports set_kv_conductor_env (env.json's motor_kv_conductor_env), has
mooncake_config.py `conductor` write $CONFIG_PATH/kv_conductor_config.json from user_config.json's kv_conductor_config
(with kvevent_instance: the pool master's endpoint tcp://$KVS_MASTER_SERVICE:<kv_cache_store_config.port> and the
prefill served_model_name), and starts `mooncake_conductor`. `conductor_config` is that file as it must come out;
tests/conformance runs Motor's scripts on what we render and compares.

Traffic (NetworkPolicy `mindie-motor-kv-conductor`), from Motor's code: the coordinator calls the conductor's HTTP port
(register, query); the conductor dials out, a ZeroMQ SUB connecting to each prefill DP rank's kv-events-config
endpoint and a DEALER to its replay_endpoint (vLLM binds both; kv-conductor/src/zmq_subscriber.rs), and, with
kvevent_instance, the pool's master. Nothing else reaches it, and it reaches nothing else.

Across services: each service runs its own conductor (README, "KV-cache affinity scheduling").
"""

from __future__ import annotations

import json
from typing import Any, Mapping

import pulumi
import pulumi_kubernetes as k8s

from components.checksums import annotations
from components.errors import KvpoolError
from components.kv_store.common import STORE_NAME
from components.kv_store.endpoint import KVStoreEndpoint
from components.labels import KV_CLIENT_LABEL, common_labels
from components.motor_env import env_text, motor_derived_env
from components.motor_pod import (
    BOOT_COMMAND,
    CONFIG_PATH,
    MOTOR_CONFIG_MOUNT,
    FIELD_ENV,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    env_list,
    motor_env,
)
from components.settings import ServiceSettings
from components.workloads import Workloads
from policies import rules

TYPE = "kvpool:index:KVConductor"
NAME = "mindie-motor-kv-conductor"  # deploy.py's Deployment, `app` label and NetworkPolicy
SERVICE = "kv-conductor"  # deploy.py's Service; the coordinator dials it (KV_CONDUCTOR_SERVICE)
WORKLOAD_ROLE = "kv-conductor"  # deploy.py's InferServiceSet role
BOOT_ROLE = "kv_conductor"  # boot.sh's ROLE
CONTAINER = "kv-conductor"
ENV_SECTION = "motor_kv_conductor_env"
CONFIG_FILE = f"{CONFIG_PATH}/kv_conductor_config.json"  # kv_conductor.sh's CONDUCTOR_CONFIG_PATH
# deploy.py's kv_conductor_template.yaml.
RESOURCES = {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}}
COORDINATOR_APP = "mindie-motor-coordinator"  # components/control_plane.py COORDINATOR
# Motor's probe.py knows no kv_conductor role (it exits 1 for it) and deploy.py renders no probe: the conductor is
# checked on its HTTP port, which both Mooncake's conductor and Motor's Rust kv-conductor serve.
PROBE_TIMING = {
    "startupProbe": {"periodSeconds": 5, "failureThreshold": 60},
    "readinessProbe": {"periodSeconds": 10},
    "livenessProbe": {"periodSeconds": 10, "failureThreshold": 6},
}
# Reschedule quickly off a failed node: one replica (as components/control_plane.py does for Motor's controller).
FAST_EVICTION = [
    {"key": f"node.kubernetes.io/{reason}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
    for reason in ("not-ready", "unreachable")
]


class ConductorEnvConflict(KvpoolError):
    """env.json sets a variable motor-kvpool sets for the conductor or its coordinator."""


class ConductorPoolMismatch(KvpoolError):
    """The conductor would follow another master port than the pool's."""


def service_host(settings: ServiceSettings, workloads: Workloads) -> str | None:
    """What the coordinator dials (KV_CONDUCTOR_SERVICE); None without kv_conductor_config."""
    if settings.kv_conductor_config is None:
        return None
    return workloads.service_host(SERVICE, WORKLOAD_ROLE)


def coordinator_env(settings: ServiceSettings, workloads: Workloads) -> dict[str, str]:
    """The coordinator's KV_CONDUCTOR_SERVICE (deploy.py's coordinator.py / infer_service.py set the same)."""
    host = service_host(settings, workloads)
    return {} if host is None else {"KV_CONDUCTOR_SERVICE": host}


def master_host(endpoint: KVStoreEndpoint | None) -> str | None:
    """KVS_MASTER_SERVICE: the pool's master Service (the owner's, with target_stack)."""
    if endpoint is None:
        return None
    return endpoint.engine_env.get("KVS_MASTER_SERVICE", endpoint.host)


def conductor_config(settings: ServiceSettings, endpoint: KVStoreEndpoint | None) -> dict[str, Any] | None:
    """$CONFIG_PATH/kv_conductor_config.json as Motor's mooncake_config.py `conductor` must write it in the pod."""
    user_config = settings.user_config()
    config = user_config.get("kv_conductor_config")
    if config is None:
        return None
    config = json.loads(json.dumps(config))
    master = (config.get("kvevent_instance") or {}).get("mooncake_master")
    if master is not None:
        store = user_config.get("kv_cache_store_config") or {}
        master["endpoint"] = f"tcp://{master_host(endpoint)}:{store.get('port', 50088)}"
        master["modelname"] = settings.motor_engine_prefill_config.engine_config.served_model_name or "Unknown"
    return config


def check_env(settings: ServiceSettings, workloads: Workloads, endpoint: KVStoreEndpoint | None) -> None:
    """env.json may not set what the conductor's pod and the coordinator get from motor-kvpool: set_kv_conductor_env
    runs before mooncake_config.py, so a KVS_MASTER_SERVICE there would point the conductor at another master."""
    sections = settings.env.model_dump(mode="json")
    ours = {"KV_CONDUCTOR_SERVICE": service_host(settings, workloads)}
    master = master_host(endpoint)
    if master is not None:
        ours["KVS_MASTER_SERVICE"] = master
    internal = {*motor_env(BOOT_ROLE, workloads, ""), *FIELD_ENV, *motor_derived_env(settings)}
    problems = [
        f"env.{ENV_SECTION}.{name}: motor-kvpool sets {name} itself for Motor's processes"
        for name in sections[ENV_SECTION] if name in internal
    ]
    for section in ("motor_common_env", ENV_SECTION, "motor_coordinator_env"):
        for name, value in sections[section].items():
            if name in ours and ours[name] is not None and env_text(value) != ours[name]:
                problems.append(f"env.{section}.{name} is {value!r} but the KV conductor needs {ours[name]!r}")
    if problems:
        raise ConductorEnvConflict("; ".join(problems) + ". Remove them from env.json: motor-kvpool sets them "
                                   "(components/kv_conductor.py).")


def check_pool_port(settings: ServiceSettings, endpoint: KVStoreEndpoint | None) -> None:
    """Motor's mooncake_config.py takes the master's port from this service's kv_cache_store_config.port: with another
    stack's pool (target_stack) it must be the owner's port."""
    config = settings.kv_conductor_config
    store = settings.kv_cache_store_config
    if config is None or config.kvevent_instance is None or endpoint is None or store is None:
        return
    port = getattr(store, "port", None)
    if port != endpoint.port:
        owner = f" ({store.target_stack}'s kv_store.port)" if store.target_stack else ""
        raise ConductorPoolMismatch(
            f"kv_cache_store_config.port: {port} is where Motor's mooncake_config.py points the KV conductor "
            f"(kv_conductor_config.kvevent_instance), but the pool's master listens on {endpoint.port}{owner}; "
            f"write port: {endpoint.port}."
        )


class KVConductor(pulumi.ComponentResource):
    deployment: k8s.apps.v1.Deployment | None  # None in a service set: the operator creates it

    def __init__(
        self,
        name: str,
        settings: ServiceSettings,
        workloads: Workloads,
        endpoint: KVStoreEndpoint | None,
        role_envs: Mapping[str, Mapping[str, Any]],
        scripts_digest: str | None,
        depends_on: list[pulumi.Resource],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        config = settings.kv_conductor_config
        assert config is not None
        check_env(settings, workloads, endpoint)
        check_pool_port(settings, endpoint)
        self._settings = settings
        self._namespace = settings.namespace
        self.port = config.http_server_port
        follows_pool = config.kvevent_instance is not None and endpoint is not None
        master = master_host(endpoint)
        env = {
            **motor_env(BOOT_ROLE, workloads, f"{self._namespace}-{WORKLOAD_ROLE}"),
            **({"KVS_MASTER_SERVICE": master} if master else {}),  # deploy.py's kv_conductor.py sets it
            **settings.env.motor_common_env,
            **settings.env.motor_kv_conductor_env,
        }
        labels = {**common_labels(self._namespace, WORKLOAD_ROLE, NAME), "app": NAME, "deploy-name": NAME}
        # It dials the pool's master: the store's NetworkPolicy admits the pods labelled as KV clients.
        pod_labels = {**labels, **({KV_CLIENT_LABEL: "true"} if follows_pool else {})}
        metadata = {"name": NAME, "namespace": self._namespace, "labels": labels}
        tcp = {"tcpSocket": {"port": "http"}}
        container = {
            "name": CONTAINER,
            "image": settings.motor_deploy_config.image_name,
            "command": BOOT_COMMAND,
            "env": env_list(env),
            "ports": [{"name": "http", "containerPort": self.port, "protocol": "TCP"}],
            "resources": RESOURCES,
            **{probe: {**tcp, **timing} for probe, timing in PROBE_TIMING.items()},
            "securityContext": {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [MOTOR_CONFIG_MOUNT],
        }
        # The conductor's config is written once at start, from these inputs; its index lives in memory (a restart
        # re-learns it from the coordinator's re-registration and the engines' replay endpoints).
        checksums = annotations({
            "motor-scripts": scripts_digest,
            "motor-env": role_envs.get(ENV_SECTION),
            "kv-conductor-config": conductor_config(settings, endpoint),
        })
        self.deployment = workloads.deployment(
            NAME,
            WORKLOAD_ROLE,
            metadata=metadata,
            spec={
                "replicas": 1,
                "selector": {"matchLabels": {"app": NAME}},
                "template": {
                    "metadata": {"labels": pod_labels, "annotations": checksums},
                    "spec": {
                        "automountServiceAccountToken": False,  # it makes no API call
                        "securityContext": MOTOR_POD_SECURITY_CONTEXT,
                        "tolerations": FAST_EVICTION,
                        "containers": [container],
                        "volumes": [MOTOR_CONFIG_VOLUME],
                    },
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on),
        )
        workloads.service(
            SERVICE,
            WORKLOAD_ROLE,
            metadata={"name": SERVICE, "namespace": self._namespace, "labels": labels},
            spec={
                "type": "ClusterIP",
                "selector": {"app": NAME},
                "ports": [{"name": "http", "port": self.port, "targetPort": self.port, "protocol": "TCP"}],
            },
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            NAME,
            metadata=metadata,
            spec=network_policy_spec(settings, endpoint),
            opts=pulumi.ResourceOptions(parent=self),
        )
        self.register_outputs({"service": service_host(settings, workloads), "port": self.port})


def _port_rule(ports: range) -> dict[str, Any]:
    rule: dict[str, Any] = {"port": ports.start, "protocol": "TCP"}
    if len(ports) > 1:
        rule["endPort"] = ports.stop - 1
    return rule


def network_policy_spec(settings: ServiceSettings, endpoint: KVStoreEndpoint | None) -> dict[str, Any]:
    """Ingress: the coordinator to the HTTP port. Egress: the prefill pods' KV-event and replay ports (the conductor
    connects; vLLM binds), the pool's master and DNS when it follows the master, nothing else. The kubelet's probes
    come from the node, which the common network plugins admit regardless of policy."""
    namespace = settings.namespace
    config = settings.kv_conductor_config
    assert config is not None
    prefill = {"matchLabels": {"app.kubernetes.io/component": "prefill", "app.kubernetes.io/part-of": namespace}}
    event_ports = rules.kv_event_ports(settings.user_config())
    egress: list[dict[str, Any]] = []
    if event_ports:
        egress.append({"to": [{"podSelector": prefill}], "ports": [_port_rule(p) for p in event_ports.values()]})
    if config.kvevent_instance is not None and endpoint is not None:
        store = settings.kv_cache_store_config
        port = getattr(store, "port", endpoint.port)
        master = {"podSelector": {"matchLabels": {"app": STORE_NAME}}}
        if endpoint.namespace != namespace:
            master["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": endpoint.namespace}}
        egress.append({"to": [master], "ports": [{"port": port, "protocol": "TCP"}]})
        # The master's endpoint is a Service name: the conductor resolves it through the cluster DNS.
        egress.append({
            "to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
            "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
        })
    return {
        "podSelector": {"matchLabels": {"app": NAME}},
        "policyTypes": ["Ingress", "Egress"],
        "ingress": [{
            "from": [{"podSelector": {"matchLabels": {"app": COORDINATOR_APP}}}],
            "ports": [{"port": config.http_server_port, "protocol": "TCP"}],
        }],
        "egress": egress,
    }
