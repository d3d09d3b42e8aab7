"""ControlPlane: ConfigMap motor-config, Motor's controller and coordinator with their Services (deploy.py's names,
ports and NodePorts), and RBAC as narrow as the controller's reads allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.errors import KvpoolError
from components.kv_conductor import coordinator_env as conductor_env
from components.kv_store.endpoint import KVStoreEndpoint
from components.labels import KV_CLIENT_LABEL, common_labels
from components.checksums import annotations, digest
from components.motor_config import MOTOR_CONFIG_NAME, MotorScriptsError, motor_config_data, read_motor_files
from components.motor_env import script_envs
from components.rbac import configmap_namespace, controller_calls, create_rbac
from components.secret_env import SecretEnv
from components.motor_pod import (
    BOOT_COMMAND,
    CONTROL_PLANE_FIELD_ENV,
    CONTROLLER_ROLE,
    COORDINATOR_ROLE,
    CONTROLLER_OBS_SERVICE,
    CONTROLLER_SERVICE,
    COORDINATOR_INFER_SERVICE,
    COORDINATOR_MGMT_SERVICE,
    COORDINATOR_OBS_SERVICE,
    MOTOR_CONFIG_MOUNT,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    PROBES,
    check_internal_env,
    env_list,
    motor_env,
)
from components.settings import ServiceSettings
from components.workloads import Workloads

TYPE = "kvpool:index:ControlPlane"
CONTROLLER = "mindie-motor-controller"
COORDINATOR = "mindie-motor-coordinator"
# deploy.py's defaults; Motor's api_config sections may move them.
CONTROLLER_API_PORT = 1026
CONTROLLER_OBS_PORT = 1027
COORDINATOR_INFER_PORT = 1025
COORDINATOR_MGMT_PORT = 1026
COORDINATOR_OBS_PORT = 1027
# deploy.py's templates: the coordinator routes every request, so it gets four times the controller's CPU.
CONTROLLER_RESOURCES = {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}}
COORDINATOR_RESOURCES = {"requests": {"cpu": "16", "memory": "4Gi"}, "limits": {"cpu": "64", "memory": "8Gi"}}
# What the coordinator needs of the store (deploy.py gives it these two, not the client files).
COORDINATOR_STORE_ENV = ("KVS_MASTER_SERVICE", "KV_STORE_BACKEND")
# Reschedule quickly off a failed node: Motor's controller is a single replica.
FAST_EVICTION = [
    {"key": f"node.kubernetes.io/{reason}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
    for reason in ("not-ready", "unreachable")
]


class ApiPortError(KvpoolError):
    """A port in Motor's api_config is not a port number."""


def _api_port(section: dict[str, Any], name: str, key: str, default: int) -> int:
    """A port from Motor's own (pass-through) api_config, else deploy.py's default."""
    api_config = section.get("api_config") or {}
    value = api_config.get(key, default) if isinstance(api_config, dict) else None
    if isinstance(value, bool) or not str(value).isdigit() or not 1 <= int(value) <= 65535:
        raise ApiPortError(f"{name}.api_config.{key}: {value!r} is not a port number (1-65535)")
    return int(value)


class ControlPlane(pulumi.ComponentResource):
    motor_config: k8s.core.v1.ConfigMap
    controller: k8s.apps.v1.Deployment | None  # None in a service set: the operator creates it
    coordinator: k8s.apps.v1.Deployment | None

    def __init__(
        self,
        name: str,
        settings: ServiceSettings,
        project_dir: Path,
        endpoint: KVStoreEndpoint | None,
        workloads: Workloads,
        secret: SecretEnv | None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        self._settings = settings
        self._namespace = settings.namespace
        self._workloads = workloads
        self._secret = secret
        engine_contract = dict(endpoint.engine_env) if endpoint else {}
        store_env = {key: value for key, value in engine_contract.items() if key in COORDINATOR_STORE_ENV}
        check_internal_env(settings, store_env)
        motor_files = read_motor_files(settings, project_dir)
        self.role_envs = script_envs(settings, engine_contract)
        # Motor's scripts as read from the checkout (before the env functions, which each role's own env covers).
        self.scripts_digest = digest(motor_files) if motor_files else None
        data = motor_config_data(settings, motor_files, self.role_envs, endpoint.client_files if endpoint else {})
        if "boot.sh" not in data:
            if not pulumi.runtime.is_dry_run():
                raise MotorScriptsError(
                    "motor_deployer_dir is unset: Motor's pods run boot.sh and the scripts it sources from ConfigMap "
                    "motor-config; set motor-kvpool:motor_deployer_dir to Motor's examples/deployer folder"
                )
            pulumi.log.warn(
                "motor_deployer_dir is unset: motor-config has none of Motor's scripts; `pulumi up` will refuse", self
            )
        self.motor_config = k8s.core.v1.ConfigMap(
            MOTOR_CONFIG_NAME,
            metadata=self._metadata(MOTOR_CONFIG_NAME, "motor-config"),
            data=data,
            opts=pulumi.ResourceOptions(parent=self),
        )
        self._rbac()
        deploy = settings.motor_deploy_config
        controller_config = settings.motor_controller_config
        coordinator_config = settings.motor_coordinator_config
        controller_port = _api_port(controller_config, "motor_controller_config", "controller_api_port", CONTROLLER_API_PORT)
        self.controller = self._deployment(
            CONTROLLER, CONTROLLER_ROLE, deploy.controller_node_selector, settings.env.motor_controller_env,
            CONTROLLER_RESOURCES, "motor_controller_env", service_account=CONTROLLER,
        )
        self._service(CONTROLLER_SERVICE, CONTROLLER_ROLE, CONTROLLER, "api", controller_port)
        self._service(
            CONTROLLER_OBS_SERVICE, CONTROLLER_ROLE, CONTROLLER, "obs", CONTROLLER_OBS_PORT,
            deploy.controller_observability_node_port,
        )
        self.coordinator = self._deployment(
            COORDINATOR, COORDINATOR_ROLE, deploy.coordinator_node_selector,
            {**store_env, **conductor_env(settings, workloads), **settings.env.motor_coordinator_env},
            COORDINATOR_RESOURCES, "motor_coordinator_env",
            kv_client=bool(store_env),
        )
        self._service(
            COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE, COORDINATOR, "infer",
            _api_port(coordinator_config, "motor_coordinator_config", "coordinator_api_infer_port", COORDINATOR_INFER_PORT),
            deploy.coordinator_infer_node_port,
        )
        self._service(
            COORDINATOR_MGMT_SERVICE, COORDINATOR_ROLE, COORDINATOR, "mgmt",
            _api_port(coordinator_config, "motor_coordinator_config", "coordinator_api_mgmt_port", COORDINATOR_MGMT_PORT),
        )
        self._service(
            COORDINATOR_OBS_SERVICE, COORDINATOR_ROLE, COORDINATOR, "obs",
            _api_port(coordinator_config, "motor_coordinator_config", "coordinator_obs_port", COORDINATOR_OBS_PORT),
            deploy.coordinator_obs_node_port,
        )
        self.register_outputs({"motor_config": MOTOR_CONFIG_NAME, "controller": CONTROLLER, "coordinator": COORDINATOR})

    def _metadata(self, name: str, app: str) -> dict[str, Any]:
        return {"name": name, "namespace": self._namespace, "labels": {**common_labels(self._namespace, app, app), "app": app}}

    def _opts(self) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self)

    def _rbac(self) -> None:
        """Exactly the rules Motor's controller's API calls need (components/rbac.py lists each call)."""
        config = self._settings.motor_controller_config
        create_rbac(
            self._namespace, CONTROLLER, "mindie-controller", controller_calls(config),
            common_labels(self._namespace, CONTROLLER, CONTROLLER), self, configmap_namespace(config),
        )

    def _deployment(
        self,
        name: str,
        role: str,
        node_selector: dict[str, str],
        role_env: dict[str, Any],
        resources: dict[str, Any],
        env_section: str,
        service_account: str | None = None,
        kv_client: bool = False,
    ) -> k8s.apps.v1.Deployment | None:
        """`kv_client`: the pod talks to the KV store (the coordinator, for KV-aware routing), so the store's
        NetworkPolicy must admit it."""
        settings = self._settings
        env = {
            **motor_env(role, self._workloads, f"{self._namespace}-{role}"),
            **settings.env.motor_common_env,
            **role_env,
        }
        labels = {**self._metadata(name, name)["labels"], **({KV_CLIENT_LABEL: "true"} if kv_client else {})}
        container = {
            "name": role,
            "image": settings.motor_deploy_config.image_name,
            "command": BOOT_COMMAND,
            "env": env_list(env, CONTROL_PLANE_FIELD_ENV),
            **({"envFrom": self._secret.env_from} if self._secret else {}),
            "resources": resources,
            **PROBES,
            "securityContext": {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ["ALL"]}},
            "volumeMounts": [MOTOR_CONFIG_MOUNT],
        }
        return self._workloads.deployment(
            name,
            role,
            metadata=self._metadata(name, name),
            spec={
                "replicas": 1,
                "selector": {"matchLabels": {"app": name}},
                "template": {
                    # Their user_config.json sections reload (ConfigWatcher); their scripts and env do not.
                    "metadata": {"labels": labels, "annotations": {
                        **annotations({"motor-scripts": self.scripts_digest, "motor-env": self.role_envs[env_section]}),
                        **(self._secret.annotation if self._secret else {}),
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
                        "nodeSelector": node_selector or None,
                        "tolerations": FAST_EVICTION,
                        "containers": [container],
                        "volumes": [MOTOR_CONFIG_VOLUME],
                    },
                },
            },
            opts=pulumi.ResourceOptions(parent=self, depends_on=[self.motor_config]),
        )

    def _service(
        self, name: str, role: str, app: str, port_name: str, port: int, node_port: int | None = None
    ) -> None:
        spec_port: dict[str, Any] = {"name": port_name, "port": port, "targetPort": port, "protocol": "TCP"}
        if node_port is not None:
            spec_port["nodePort"] = node_port
        self._workloads.service(
            name,
            role,
            metadata=self._metadata(name, app),
            spec={"type": "NodePort" if node_port else "ClusterIP", "selector": {"app": app}, "ports": [spec_port]},
            opts=self._opts(),
        )
