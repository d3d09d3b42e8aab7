"""ControlPlane: ConfigMap motor-config, Motor's controller and coordinator with their Services (deploy.py's names,
ports and NodePorts), and RBAC as narrow as the controller's reads allow."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.workloads import Workloads, motor_env
from kvpool.internal import dashboards, motor_monitoring
from kvpool.internal.checksums import annotations
from kvpool.internal.child_names import ChildNames
from kvpool.internal.dashboards import Signals
from kvpool.internal.labels import METRICS_SCRAPER_LABEL, app_selector, common_labels
from kvpool.internal.motor_config import MOTOR_CONFIG_NAME, MotorScriptsError
from kvpool.internal.motor_pod import (
    BOOT_COMMAND,
    CONTROL_PLANE_FIELD_ENV,
    CONTROL_PLANE_PROBES,
    CONTROLLER_ROLE,
    COORDINATOR_OBS_SERVICE,
    COORDINATOR_ROLE,
    FAST_EVICTION,
    LOG_MOUNT,
    MOTOR_CONFIG_MOUNT,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    env_list,
    log_volume,
    weight_mount,
    weight_volume,
)
from kvpool.internal.ports import Port
from kvpool.internal.rbac import ApiCall, create_rbac
from kvpool.internal.secret_env import SecretEnv
from kvpool.settings.pods import ContainerResources

TYPE = "kvpool:index:ControlPlane"
DEFAULT_NAME = "control-plane"  # kvpool.program's name for it
CONTROLLER = "mindie-motor-controller"
COORDINATOR = "mindie-motor-coordinator"


@dataclass(frozen=True, kw_only=True)
class MotorRoleArgs:
    """One Motor control-plane role (controller or coordinator)."""

    node_selector: dict[str, str]
    env: dict[str, Any]  # container env after motor-kvpool's own: motor_common_env, the role's section, store env
    restart_env: dict[str, Any]  # what the role's set_*_env function exports (checksum/motor-env)
    restart_scripts: dict[str, str] | None  # Motor's files the role runs (motor_config.role_motor_files), None without them
    services: dict[str, Port]  # Service name -> the one port it serves
    log_host_dir: str  # the node folder mounted as its log folder (its section's logging_config.host_log_dir)
    resources: ContainerResources  # its container's CPU and memory (pods.controller, pods.coordinator)
    # It fetches the store's /metrics (Motor's coordinator), so it carries the label the store's metrics port admits.
    reads_store_metrics: bool = False
    # The node's weight_mount_path, mounted read-only at its own path, when the role reads the model (None: it does
    # not): Motor's coordinator loads the prefill model's tokenizer with a KV conductor (rules.coordinator_reads_model).
    weight_host_dir: str | None = None


@dataclass(frozen=True, kw_only=True)
class ControlPlaneArgs:
    """Everything the control plane is rendered from (kvpool/program/args.py builds it from the settings)."""

    namespace: str
    workloads: Workloads
    image: str
    motor_config: dict[str, str]  # ConfigMap motor-config's data (kvpool/internal/motor_config.py)
    controller: MotorRoleArgs
    coordinator: MotorRoleArgs
    controller_calls: tuple[ApiCall, ...]  # Motor's API calls the controller's RBAC allows
    configmap_namespace: str
    secret: SecretEnv | None = None
    # The Motor service's dashboard and alerts (kvpool/internal/motor_monitoring.py), with a ServiceMonitor on the
    # coordinator's obs Service they read; None: none of the three.
    monitoring: Signals | None = None


class ControlPlane(pulumi.ComponentResource):
    motor_config: k8s.core.v1.ConfigMap
    controller: k8s.apps.v1.Deployment | None  # None in a service set: the operator creates it
    coordinator: k8s.apps.v1.Deployment | None
    service_account: k8s.core.v1.ServiceAccount
    services: dict[str, k8s.core.v1.Service]  # by name; empty in a service set, whose roles carry them

    def __init__(self, name: str, args: ControlPlaneArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        self._args = args
        self._namespace = args.namespace
        self._names = ChildNames.of(name, DEFAULT_NAME, opts)
        self.services = {}
        if "boot.sh" not in args.motor_config:
            if not pulumi.runtime.is_dry_run():
                raise MotorScriptsError(
                    "motor_deployer_dir is unset: Motor's pods run boot.sh and the scripts it sources from ConfigMap "
                    "motor-config; set motor-kvpool:motor_deployer_dir to Motor's examples/deployer folder"
                )
            pulumi.log.warn(
                "motor_deployer_dir is unset: motor-config has none of Motor's scripts; `pulumi up` will refuse", self
            )
        self.motor_config = k8s.core.v1.ConfigMap(
            self._names.name(MOTOR_CONFIG_NAME),
            metadata=self._metadata(MOTOR_CONFIG_NAME, "motor-config"),
            data=args.motor_config,
            opts=self._opts(MOTOR_CONFIG_NAME),
        )
        self.service_account = create_rbac(
            self._namespace, CONTROLLER, "mindie-controller", args.controller_calls,
            common_labels(self._namespace, CONTROLLER, CONTROLLER), self, self._names, args.configmap_namespace,
        )
        self.controller = self._role(CONTROLLER, CONTROLLER_ROLE, args.controller, CONTROLLER)
        self.coordinator = self._role(COORDINATOR, COORDINATOR_ROLE, args.coordinator)
        if args.monitoring is not None:
            dashboards.service_monitor(self._names.name(COORDINATOR_OBS_SERVICE),
                                       self._metadata(COORDINATOR_OBS_SERVICE, COORDINATOR), COORDINATOR,
                                       motor_monitoring.OBS_PORT, self._opts(COORDINATOR_OBS_SERVICE))
            dashboards.dashboard_objects(
                args.monitoring, (motor_monitoring.DASHBOARD_NAME, motor_monitoring.RULES_NAME),
                f"motor-service-{self._namespace}.json", self._metadata(motor_monitoring.DASHBOARD_NAME, COORDINATOR),
                self._names, pulumi.ResourceOptions(parent=self),
            )
        self.register_outputs({
            "motor_config": self.motor_config, "controller": self.controller, "coordinator": self.coordinator,
            "service_account": self.service_account, "services": self.services,
        })

    def _role(
        self, name: str, role: str, role_args: MotorRoleArgs, service_account: str | None = None
    ) -> k8s.apps.v1.Deployment | None:
        deployment = self._deployment(name, role, role_args, service_account)
        for service, port in role_args.services.items():
            created = self._service(service, role, name, port)
            if created is not None:
                self.services[service] = created
        return deployment

    def _metadata(self, name: str, app: str) -> dict[str, Any]:
        return {"name": name, "namespace": self._namespace, "labels": {**common_labels(self._namespace, app, app), "app": app}}

    def _opts(self, name: str, **options: Any) -> pulumi.ResourceOptions:
        """Of the child whose Kubernetes name is `name`."""
        return self._names.opts(name, pulumi.ResourceOptions(parent=self, **options))

    def _deployment(
        self, name: str, role: str, role_args: MotorRoleArgs, service_account: str | None
    ) -> k8s.apps.v1.Deployment | None:
        args = self._args
        env = {**motor_env(role, args.workloads, f"{self._namespace}-{role}"), **role_args.env}
        scraper = {METRICS_SCRAPER_LABEL: "true"} if role_args.reads_store_metrics else {}
        labels = {**self._metadata(name, name)["labels"], **scraper}
        weight_dir = role_args.weight_host_dir
        container = {
            "name": role,
            "image": args.image,
            "command": BOOT_COMMAND,
            "env": env_list(env, CONTROL_PLANE_FIELD_ENV),
            **({"envFrom": args.secret.env_from} if args.secret else {}),
            "resources": role_args.resources.manifest(),
            **CONTROL_PLANE_PROBES,
            "securityContext": {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [MOTOR_CONFIG_MOUNT, LOG_MOUNT, *([weight_mount(weight_dir)] if weight_dir else [])],
        }
        return args.workloads.deployment(
            self._names.name(name),
            role,
            metadata=self._metadata(name, name),
            spec={
                "replicas": 1,
                "selector": {"matchLabels": app_selector(name)},
                "template": {
                    # Their user_config.json sections reload (ConfigWatcher); their scripts and env do not.
                    "metadata": {"labels": labels, "annotations": {
                        **annotations({"motor-scripts": role_args.restart_scripts, "motor-env": role_args.restart_env}),
                        **(args.secret.annotation if args.secret else {}),
                    }},
                    "spec": {
                        "serviceAccountName": service_account,
                        "automountServiceAccountToken": service_account is not None,
                        "securityContext": MOTOR_POD_SECURITY_CONTEXT,
                        # deploy.py's: never two of one role on a node, so a node failure takes one at most.
                        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
                            "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": [name]}]},
                            "topologyKey": "kubernetes.io/hostname",
                        }]}},
                        "nodeSelector": role_args.node_selector or None,
                        "tolerations": FAST_EVICTION,
                        "containers": [container],
                        "volumes": [MOTOR_CONFIG_VOLUME, log_volume(role_args.log_host_dir),
                                    *([weight_volume(weight_dir)] if weight_dir else [])],
                    },
                },
            },
            opts=self._opts(name, depends_on=[self.motor_config]),
        )

    def _service(self, name: str, role: str, app: str, port: Port) -> k8s.core.v1.Service | None:
        return self._args.workloads.service(
            self._names.name(name),
            role,
            metadata=self._metadata(name, app),
            spec={
                "type": "NodePort" if port.node_port else "ClusterIP",
                "selector": app_selector(app),
                "ports": [port.service_port()],
            },
            opts=self._opts(name),
        )
