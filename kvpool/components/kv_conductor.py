"""KVConductor: Motor's KV conductor for KV-cache affinity scheduling, as deploy.py renders it
(examples/deployer/lib/generator/kv_conductor.py, yaml_template/kv_conductor_template.yaml): Deployment
`mindie-motor-kv-conductor` and Service `kv-conductor` on kv_conductor_config.http_server_port, running Motor's boot.sh
with ROLE=kv_conductor from motor-config like every Motor pod, with KVS_MASTER_SERVICE; and the coordinator's
KV_CONDUCTOR_SERVICE (kvpool/program/args.py asks `coordinator_env`).

In the pod, Motor's kv_conductor.sh exports set_kv_conductor_env (env.json's motor_kv_conductor_env), has
mooncake_config.py `conductor` write $CONFIG_PATH/kv_conductor_config.json from user_config.json's kv_conductor_config
(with kvevent_instance: the pool master's endpoint tcp://$KVS_MASTER_SERVICE:<kv_cache_store_config.port> and the
prefill served_model_name), and starts `mooncake_conductor`. `conductor_config` is that file as it must come out;
tests/conformance runs Motor's scripts on what we render and compares.

kvpool/program/args.py kv_conductor_args checks the settings (check_env, check_pool_port) and builds the
KVConductorArgs; the component renders from them alone.

Traffic (NetworkPolicy `mindie-motor-kv-conductor`), from Motor's code: the coordinator calls the conductor's HTTP port
(register, query); the conductor dials out, a ZeroMQ SUB connecting to each prefill DP rank's kv-events-config
endpoint and a DEALER to its replay_endpoint (vLLM binds both; kv-conductor/src/zmq_subscriber.rs), and, with
kvevent_instance, the pool's master. Nothing else reaches it, and it reaches nothing else.

Across services: each service runs its own conductor (README, "KV-cache affinity scheduling").
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.control_plane import COORDINATOR
from kvpool.components.kv_store.common import STORE_NAME
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.workloads import Workloads, motor_env
from kvpool.errors import KvpoolError
from kvpool.internal.checksums import annotations
from kvpool.internal.child_names import ChildNames
from kvpool.internal.labels import KV_CLIENT_LABEL, app_selector, common_labels
from kvpool.internal.motor_env import MOTOR_INTERNAL_ENV, env_text
from kvpool.internal.motor_pod import (
    BOOT_COMMAND,
    CONFIG_PATH,
    FAST_EVICTION,
    MOTOR_CONFIG_MOUNT,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    env_list,
)
from kvpool.internal.ports import Port
from kvpool.settings.pods import ContainerResources
from kvpool.settings.store import StoreConfig

TYPE = "kvpool:index:KVConductor"
DEFAULT_NAME = "kv-conductor"  # kvpool.program's name for it
NAME = "mindie-motor-kv-conductor"  # deploy.py's Deployment, `app` label and NetworkPolicy
SERVICE = "kv-conductor"  # deploy.py's Service; the coordinator dials it (KV_CONDUCTOR_SERVICE)
WORKLOAD_ROLE = "kv-conductor"  # deploy.py's InferServiceSet role
BOOT_ROLE = "kv_conductor"  # boot.sh's ROLE
CONTAINER = "kv-conductor"
ENV_SECTION = "motor_kv_conductor_env"
CONFIG_FILE = f"{CONFIG_PATH}/kv_conductor_config.json"  # kv_conductor.sh's CONDUCTOR_CONFIG_PATH
# Motor's probe.py knows no kv_conductor role (it exits 1 for it) and deploy.py renders no probe: the conductor is
# checked on its HTTP port, which both Mooncake's conductor and Motor's Rust kv-conductor serve.
PROBE_TIMING = {
    "startupProbe": {"periodSeconds": 5, "failureThreshold": 60},
    "readinessProbe": {"periodSeconds": 10},
    "livenessProbe": {"periodSeconds": 10, "failureThreshold": 6},
}


class ConductorEnvConflict(KvpoolError):
    """env.json sets a variable motor-kvpool sets for the conductor or its coordinator."""


class ConductorPoolMismatch(KvpoolError):
    """The conductor would follow another master port than the pool's."""


def service_host(workloads: Workloads) -> str:
    """What the coordinator dials (KV_CONDUCTOR_SERVICE) when the service has a conductor."""
    return workloads.service_host(SERVICE, WORKLOAD_ROLE)


def coordinator_env(workloads: Workloads) -> dict[str, str]:
    """The coordinator's KV_CONDUCTOR_SERVICE (deploy.py's coordinator.py / infer_service.py set the same)."""
    return {"KV_CONDUCTOR_SERVICE": service_host(workloads)}


def master_host(endpoint: KVStoreEndpoint | None) -> str | None:
    """KVS_MASTER_SERVICE: the pool's master Service (the owner's, with target_stack)."""
    if endpoint is None:
        return None
    return endpoint.engine_env.get("KVS_MASTER_SERVICE", endpoint.host)


def conductor_config(
    user_config: Mapping[str, Any], endpoint: KVStoreEndpoint | None, served_model_name: str | None
) -> dict[str, Any] | None:
    """$CONFIG_PATH/kv_conductor_config.json as Motor's mooncake_config.py `conductor` must write it in the pod, from
    `user_config` (settings.user_config(), which is left as it is) and the prefill engine's served_model_name."""
    config = user_config.get("kv_conductor_config")
    if config is None:
        return None
    config = copy.deepcopy(config)
    master = (config.get("kvevent_instance") or {}).get("mooncake_master")
    if master is not None:
        store = user_config.get("kv_cache_store_config") or {}
        master["endpoint"] = f"tcp://{master_host(endpoint)}:{store.get('port', 50088)}"
        master["modelname"] = served_model_name or "Unknown"
    return config


def check_env(sections: Mapping[str, Mapping[str, Any]], workloads: Workloads, endpoint: KVStoreEndpoint | None) -> None:
    """env.json (`sections`, by section name) may not set what the conductor's pod and the coordinator get from
    motor-kvpool: set_kv_conductor_env runs before mooncake_config.py, so a KVS_MASTER_SERVICE there would point the
    conductor at another master."""
    ours = {"KV_CONDUCTOR_SERVICE": service_host(workloads)}
    master = master_host(endpoint)
    if master is not None:
        ours["KVS_MASTER_SERVICE"] = master
    problems = [
        f"env.{ENV_SECTION}.{name}: motor-kvpool sets {name} itself for Motor's processes"
        for name in sections[ENV_SECTION] if name in MOTOR_INTERNAL_ENV
    ]
    for section in ("motor_common_env", ENV_SECTION, "motor_coordinator_env"):
        for name, value in sections[section].items():
            if name in ours and env_text(value) != ours[name]:
                problems.append(f"env.{section}.{name} is {value!r} but the KV conductor needs {ours[name]!r}")
    if problems:
        raise ConductorEnvConflict("; ".join(problems) + ". Remove them from env.json: motor-kvpool sets them "
                                   "(kvpool/components/kv_conductor.py).")


def check_pool_port(store: StoreConfig | None, followed_pool: KVStoreEndpoint | None) -> None:
    """Motor's mooncake_config.py takes the master's port from this service's kv_cache_store_config.port (`store`):
    with another stack's pool (target_stack) it must be the owner's port. `followed_pool`: the pool whose master the
    conductor follows (kv_conductor_config.kvevent_instance), else None."""
    if followed_pool is None or store is None:
        return
    port = getattr(store, "port", None)
    if port != followed_pool.port:
        owner = f" ({store.target_stack}'s kv_store.port)" if store.target_stack else ""
        raise ConductorPoolMismatch(
            f"kv_cache_store_config.port: {port} is where Motor's mooncake_config.py points the KV conductor "
            f"(kv_conductor_config.kvevent_instance), but the pool's master listens on {followed_pool.port}{owner}; "
            f"write port: {followed_pool.port}."
        )


@dataclass(frozen=True, kw_only=True)
class KVConductorArgs:
    """Everything the conductor is rendered from (kvpool/program/args.py kv_conductor_args builds it)."""

    namespace: str
    workloads: Workloads
    image: str
    port: Port  # kv_conductor_config.http_server_port: container port, Service port, the coordinator's way in
    env: dict[str, Any]  # container env after motor-kvpool's own: KVS_MASTER_SERVICE, env.json's sections
    restart_inputs: dict[str, Any]  # checksum/<name> -> what the conductor reads at start
    kv_event_ports: tuple[range, ...]  # each prefill pod's KV-event and replay ports, which the conductor dials
    resources: ContainerResources  # its container's CPU and memory (pods.kv_conductor)
    followed_pool: KVStoreEndpoint | None = None  # the pool whose master it follows (kvevent_instance), else None
    depends_on: tuple[pulumi.Resource, ...] = ()  # what its Deployment waits for (ConfigMap motor-config, mounted)


class KVConductor(pulumi.ComponentResource):
    deployment: k8s.apps.v1.Deployment | None  # None in a service set: the operator creates it
    service: k8s.core.v1.Service | None  # None in a service set: the InferServiceSet's role holds it
    network_policy: k8s.networking.v1.NetworkPolicy  # a plain object in either mode

    def __init__(self, name: str, args: KVConductorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        self._args = args
        self._names = ChildNames.of(name, DEFAULT_NAME, opts)
        self._labels = {**common_labels(args.namespace, WORKLOAD_ROLE, NAME), "app": NAME, "deploy-name": NAME}
        self.deployment = self._deployment()
        self.service = args.workloads.service(
            self._names.name(SERVICE),
            WORKLOAD_ROLE,
            metadata={"name": SERVICE, "namespace": args.namespace, "labels": self._labels},
            spec={"type": "ClusterIP", "selector": app_selector(NAME), "ports": [args.port.service_port()]},
            opts=self._names.opts(SERVICE, pulumi.ResourceOptions(parent=self)),
        )
        self.network_policy = k8s.networking.v1.NetworkPolicy(
            self._names.name(NAME),
            metadata=self._metadata(),
            spec=self._network_policy_spec(),
            opts=self._names.opts(NAME, pulumi.ResourceOptions(parent=self)),
        )
        self.register_outputs({
            "deployment": self.deployment, "service": self.service, "network_policy": self.network_policy,
        })

    def _metadata(self) -> dict[str, Any]:
        return {"name": NAME, "namespace": self._args.namespace, "labels": self._labels}

    def _deployment(self) -> k8s.apps.v1.Deployment | None:
        args = self._args
        env = {**motor_env(BOOT_ROLE, args.workloads, f"{args.namespace}-{WORKLOAD_ROLE}"), **args.env}
        # It dials the pool's master: the store's NetworkPolicy admits the pods labelled as KV clients.
        pod_labels = {**self._labels, **({KV_CLIENT_LABEL: "true"} if args.followed_pool else {})}
        probe = {"tcpSocket": {"port": args.port.name}}
        container = {
            "name": CONTAINER,
            "image": args.image,
            "command": BOOT_COMMAND,
            "env": env_list(env),
            "ports": [args.port.container_port()],
            "resources": args.resources.manifest(),
            **{kind: {**probe, **timing} for kind, timing in PROBE_TIMING.items()},
            "securityContext": {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [MOTOR_CONFIG_MOUNT],
        }
        return args.workloads.deployment(
            self._names.name(NAME),
            WORKLOAD_ROLE,
            metadata=self._metadata(),
            spec={
                "replicas": 1,
                "selector": {"matchLabels": app_selector(NAME)},
                "template": {
                    # The conductor's config is written once at start, from these inputs; its index lives in memory
                    # (a restart re-learns it from the coordinator's re-registration and the engines' replay endpoints).
                    "metadata": {"labels": pod_labels, "annotations": annotations(args.restart_inputs)},
                    "spec": {
                        "automountServiceAccountToken": False,  # it makes no API call
                        "securityContext": MOTOR_POD_SECURITY_CONTEXT,
                        "tolerations": FAST_EVICTION,
                        "containers": [container],
                        "volumes": [MOTOR_CONFIG_VOLUME],
                    },
                },
            },
            opts=self._names.opts(NAME, pulumi.ResourceOptions(parent=self, depends_on=list(args.depends_on))),
        )

    def _network_policy_spec(self) -> dict[str, Any]:
        """Ingress: the coordinator to the HTTP port. Egress: the prefill pods' KV-event and replay ports (the conductor
        connects; vLLM binds), the pool's master and DNS when it follows the master, nothing else. The kubelet's
        probes come from the node, which the common network plugins admit regardless of policy."""
        args = self._args
        prefill = {
            "matchLabels": {"app.kubernetes.io/component": "prefill", "app.kubernetes.io/part-of": args.namespace}
        }
        egress: list[dict[str, Any]] = []
        if args.kv_event_ports:
            egress.append({"to": [{"podSelector": prefill}], "ports": [_port_rule(p) for p in args.kv_event_ports]})
        pool = args.followed_pool
        if pool is not None:
            master: dict[str, Any] = {"podSelector": {"matchLabels": app_selector(STORE_NAME)}}
            if pool.namespace != args.namespace:
                master["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": pool.namespace}}
            egress.append({"to": [master], "ports": [{"port": pool.port, "protocol": "TCP"}]})
            # The master's endpoint is a Service name: the conductor resolves it through the cluster DNS.
            egress.append({
                "to": [{"namespaceSelector": {}, "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
            })
        return {
            "podSelector": {"matchLabels": app_selector(NAME)},
            "policyTypes": ["Ingress", "Egress"],
            "ingress": [{
                "from": [{"podSelector": {"matchLabels": app_selector(COORDINATOR)}}],
                "ports": [{"port": args.port.port, "protocol": "TCP"}],
            }],
            "egress": egress,
        }


def _port_rule(ports: range) -> dict[str, Any]:
    rule: dict[str, Any] = {"port": ports.start, "protocol": "TCP"}
    if len(ports) > 1:
        rule["endPort"] = ports.stop - 1
    return rule
