"""What every Motor pod shares (controller, coordinator, engines): the boot command, probes and preStop from the
scripts in ConfigMap motor-config, the env deploy.py's templates set, and the names of the control-plane Services."""

from __future__ import annotations

from typing import Any, Mapping

from kvpool.internal.motor_config import MOTOR_CONFIG_NAME
from kvpool.internal.motor_env import env_text
from kvpool.internal.pod_layout import (
    CONFIGMAP_PATH,
    LOG_MOUNT_PATH,
    LOG_VOLUME_NAME,
    MOTOR_CONF_DIR,
)

CONFIG_PATH = MOTOR_CONF_DIR
# deploy.py's Service names and ports (mindie_motor_controller.yaml, mindie_motor_coordinator.yaml).
CONTROLLER_SERVICE = "mindie-motor-controller-service"
CONTROLLER_OBS_SERVICE = "mindie-motor-controller-observability-service"
COORDINATOR_INFER_SERVICE = "mindie-motor-coordinator-infer"
COORDINATOR_MGMT_SERVICE = "mindie-motor-coordinator-mgmt"
COORDINATOR_OBS_SERVICE = "mindie-motor-coordinator-obs"
CONTROLLER_ROLE = "controller"
COORDINATOR_ROLE = "coordinator"

BOOT_COMMAND = ["/bin/bash", "-c", f"source {CONFIGMAP_PATH}/boot.sh"]
MOTOR_CONFIG_VOLUME = {"name": "motor-config", "configMap": {"name": MOTOR_CONFIG_NAME, "defaultMode": 0o550}}
MOTOR_CONFIG_MOUNT = {"name": "motor-config", "mountPath": CONFIGMAP_PATH}
LOG_MOUNT = {"name": LOG_VOLUME_NAME, "mountPath": LOG_MOUNT_PATH}
FIELD_ENV = {"POD_IP": "status.podIP", "HOST_IP": "status.hostIP"}
# Motor's controller and coordinator also read their namespace (deploy.py's templates give them POD_NAMESPACE).
CONTROL_PLANE_FIELD_ENV = {**FIELD_ENV, "POD_NAMESPACE": "metadata.namespace"}
# deploy.py's container securityContext for every Motor pod (NPU access needs seccomp unconfined).
MOTOR_SECURITY_CONTEXT = {"allowPrivilegeEscalation": False, "seccompProfile": {"type": "Unconfined"}}
MOTOR_POD_SECURITY_CONTEXT = {"fsGroup": 1001}
# Reschedule quickly off a failed node: Motor's controller, coordinator and KV conductor are single replicas.
FAST_EVICTION = [
    {"key": f"node.kubernetes.io/{reason}", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 30}
    for reason in ("not-ready", "unreachable")
]


def host_path_volume(name: str, path: str, kind: str) -> dict[str, Any]:
    """A node folder or file as a volume; kind "" leaves the kubelet's type check off."""
    return {"name": name, "hostPath": {"path": path, **({"type": kind} if kind else {})}}


def log_volume(host_dir: str) -> dict[str, Any]:
    return host_path_volume(LOG_VOLUME_NAME, host_dir, "DirectoryOrCreate")


# deploy.py's weight-mount: the node's weight_mount_path at the same path in the pod (set_weight_mount), on engines
# and on the coordinator.
WEIGHT_VOLUME_NAME = "weight-mount"


def weight_volume(host_dir: str) -> dict[str, Any]:
    return host_path_volume(WEIGHT_VOLUME_NAME, host_dir, "Directory")


def weight_mount(host_dir: str) -> dict[str, Any]:
    # The weights are only read: a read-only mount keeps a compromised pod from altering the model.
    return {"name": WEIGHT_VOLUME_NAME, "mountPath": host_dir, "readOnly": True}


def probe(stage: str, failure_threshold: int) -> dict[str, Any]:
    """Motor's probe.sh, which runs probe.py: GET /<stage> on the role's API port (node manager, controller,
    coordinator). deploy.py's command and timing (controller_template.yaml:86-111); timeoutSeconds 30 on every
    stage: probe.py starts Python, imports httpx and makes an HTTP call, which a busy node does not finish within
    the kubelet's default of 1 s (deploy.py's startup probe has none; tests/conformance/test_deploy_py_pod_fields.py
    lists each difference from deploy.py)."""
    return {
        "exec": {"command": ["bash", "-c", f"$CONFIGMAP_PATH/probe.sh {stage}"]},
        "periodSeconds": 10,
        "timeoutSeconds": 30,
        "failureThreshold": failure_threshold,
    }


# Controller and coordinator serve all three routes (Motor's controller_api.py:240-242, the coordinator's
# management_server.py:231-258).
CONTROL_PLANE_PROBES = {
    "startupProbe": probe("startup", 100),
    "readinessProbe": probe("readiness", 5),
    "livenessProbe": probe("liveness", 5),
}
# Engines: Motor's node manager serves /readiness alone (node_manager_api.py:211; /startup and /liveness answer
# 404), answering 503 until the engines it started report normal and again once preStop pauses them (its
# pause_instance: "Pod readiness probe returns false; liveness probe remains true"). deploy.py's engine template
# carries no probe at all (engine_template.yaml); a readiness probe only withholds Ready, it never restarts.
ENGINE_PROBES = {"readinessProbe": probe("readiness", 5)}
# Engines only: prestop.sh pauses and stops Motor's node manager, which runs in engine pods alone.
ENGINE_LIFECYCLE = {"preStop": {"exec": {"command": ["bash", "-c", "$CONFIGMAP_PATH/prestop.sh"]}}}


def env_list(values: Mapping[str, Any], field_env: Mapping[str, str] = FIELD_ENV) -> list[dict[str, Any]]:
    """Kubernetes env entries: field references first, then plain values in the given order (as strings)."""
    entries: list[dict[str, Any]] = [
        {"name": name, "valueFrom": {"fieldRef": {"fieldPath": path}}} for name, path in field_env.items()
    ]
    entries += [{"name": name, "value": env_text(value)} for name, value in values.items()]
    return entries
