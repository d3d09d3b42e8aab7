"""EnginePool: the engines of one side (prefill or decode), one Deployment per instance (`vllm-p<i>`, `vllm-d<i>`).

Names and labels are deterministic: deploy.py puts a per-run random id in the `job-name` label and so restarts
every engine on every run; here the same config renders the same objects. Pod shape (volumes, scheduler,
NPU resources, labels) follows deploy.py's engine template (motor-deployer.md §1.3, §1.7).
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components.connectors import instance_kv_transfer_config
from components.hardware import HARDWARE, engine_node_selector
from components.kv_store.client import CLIENT_CONFIG_MAP, mounted_client_files
from components.kv_store.endpoint import CLIENT_CONFIG_DIR, KVStoreEndpoint
from components.labels import KV_CLIENT_LABEL, common_labels
from components.checksums import annotations as checksum_annotations
from components.checksums import engine_config_inputs
from components.motor_env import engine_env, script_envs
from components.motor_pod import (
    BOOT_COMMAND,
    ENGINE_LIFECYCLE,
    MOTOR_CONFIG_MOUNT,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    PROBES,
    env_list,
    motor_env,
)
from components.secret_env import SecretEnv
from components.settings import ServiceSettings
from components.workloads import Workloads
from policies import rules

TYPE = "kvpool:index:EnginePool"
ENGINE_BASE = "vllm"
SIDE_LETTER = {"prefill": "p", "decode": "d"}
KV_TRANSFER_ANNOTATION = "motor-kvpool.io/kv-transfer-config"
# deploy.py's engine template: host paths the Ascend runtime, HCCL and RDMA use, and where logs and core dumps
# go (hostPath type "" = no check, as deploy.py's template has it: hccn_tool sits in the driver's tools folder,
# whose layout differs between driver versions). Not mounted: deploy.py's /data, /mnt and /var/queue_schedule,
# whole host folders no Motor script or process reads (grep of Motor 8919e55); storage[] names what a service needs.
# name -> (host path, hostPath type, read-only). Read-only unless something in the pod writes it:
# - version.info, hccn_tool: read and run only. /etc/hccn.conf: Motor only queries it (`hccn_tool -i N -ip -g`,
#   startup/hccl_tools.py:121); writing it (`hccn_tool -s`) is the node administrator's job, never an engine's.
# - /root/ascend/log: CANN writes its plog there; /var/coredump: common.sh chmods it and the kernel writes cores.
# - /dev/infiniband, /dev/hisi_hdc: device nodes the RDMA verbs and HDC drivers open read-write; kept as deploy.py
#   mounts them.
HOST_FILES = {
    "ascend-driver-version": ("/usr/local/Ascend/driver/version.info", "File", True),
    "hccn-conf": ("/etc/hccn.conf", "", True),
    "hccn-tool": ("/usr/local/Ascend/driver/tools/hccn_tool", "", True),
    "plog-path": ("/root/ascend/log", "DirectoryOrCreate", False),
    "coredump": ("/var/coredump", "DirectoryOrCreate", False),
    "rdma": ("/dev/infiniband", "", False),
    "hisi-hdc": ("/dev/hisi_hdc", "", False),
}
# deploy.py gives engines allowPrivilegeEscalation false and seccomp Unconfined (the NPU stack's ioctls need it);
# motor-kvpool also drops the default capabilities no engine process uses: Motor's scripts and code make no device
# node (the Ascend device plugin injects /dev/davinci*), open no raw socket (`ping` appears only in log text), never
# chroot, set file capabilities or change the capability bounding set, and write no audit records (grep of Motor
# 8919e55). The rest of the runtime's defaults are kept: CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID
# and NET_BIND_SERVICE may be used by CANN and the driver's tools (which switch to HwHiAiUser and own their log
# folders); nothing here shows they are unneeded.
ENGINE_DROPPED_CAPABILITIES = ["AUDIT_WRITE", "MKNOD", "NET_RAW", "SETFCAP", "SETPCAP", "SYS_CHROOT"]
ENGINE_SECURITY_CONTEXT = {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ENGINE_DROPPED_CAPABILITIES}}


def host_files(hardware_type: str) -> dict[str, tuple[str, str, bool]]:
    """Every host file an engine of this hardware mounts, by volume name: (path, hostPath type, read-only)."""
    extra = {name: (path, kind, read_only) for name, path, kind, read_only in HARDWARE[hardware_type].host_files}
    return {**HOST_FILES, **extra}


def host_path_volume(name: str, path: str, kind: str) -> dict[str, Any]:
    return {"name": name, "hostPath": {"path": path, **({"type": kind} if kind else {})}}


def instance_name(side: str, index: int | None) -> str:
    """`vllm-p0` for an instance; `vllm-p` for the role template of a service set."""
    return f"{ENGINE_BASE}-{SIDE_LETTER[side]}{'' if index is None else index}"


class EnginePool(pulumi.ComponentResource):
    # One per instance in multi_deployment; empty in a service set, where the operator creates them.
    deployments: list[k8s.apps.v1.Deployment]

    def __init__(
        self,
        name: str,
        settings: ServiceSettings,
        side: str,
        endpoint: KVStoreEndpoint | None,
        workloads: Workloads,
        storage: tuple[list[dict[str, Any]], list[dict[str, Any]]] = ([], []),
        secret: SecretEnv | None = None,
        scripts_digest: str | None = None,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        """`scripts_digest`: of Motor's scripts in motor-config (ControlPlane.scripts_digest), which engines run
        once at start."""
        super().__init__(TYPE, name, None, opts)
        self._settings, self._side, self._endpoint, self._workloads = settings, side, endpoint, workloads
        self._scripts_digest = scripts_digest
        self._secret = secret
        self._storage_volumes, self._storage_mounts = storage
        deploy = settings.motor_deploy_config
        count = deploy.p_instances_num if side == "prefill" else deploy.d_instances_num
        if workloads.is_service_set:
            # One role template; the operator numbers the instances (INSTANCE_INDEX) and Motor's engine.sh
            # derives JOB_NAME and the per-instance kv_transfer_config from them.
            workloads.deployment(
                instance_name(side, None), side, *self._workload(None), opts=pulumi.ResourceOptions(parent=self),
                instances=count,
            )
            self.deployments = []
        else:
            self.deployments = [
                workloads.deployment(
                    instance_name(side, index), side, *self._workload(index), opts=pulumi.ResourceOptions(parent=self)
                )
                for index in range(count)
            ]
        self.register_outputs({"instances": [instance_name(side, index) for index in range(count)]})

    # -- pieces of one instance ---------------------------------------------------------------------------

    def _pods_and_npus(self) -> tuple[int, int]:
        deploy = self._settings.motor_deploy_config
        if self._side == "prefill":
            return deploy.single_p_instance_pod_num, deploy.p_pod_npu_num
        return deploy.single_d_instance_pod_num, deploy.d_pod_npu_num

    def _env(self, job_name: str) -> list[dict[str, Any]]:
        contract = dict(self._endpoint.engine_env) if self._endpoint else {}
        return env_list(
            {**motor_env(self._side, self._workloads, job_name), **engine_env(self._settings, self._side, contract)}
        )

    def _client_mounts(self) -> list[dict[str, Any]]:
        if self._endpoint is None:
            return []
        mounts = [
            {"name": "kv-client", "mountPath": f"{CLIENT_CONFIG_DIR}/{file}", "subPath": file, "readOnly": True}
            for file in sorted(mounted_client_files(self._endpoint))
        ]
        mounts += [{"name": name, "mountPath": spec["mount_path"]} for name, spec in sorted(self._endpoint.host_paths.items())]
        return mounts

    def _volumes(self) -> list[dict[str, Any]]:
        deploy = self._settings.motor_deploy_config
        volumes = [
            MOTOR_CONFIG_VOLUME,
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": deploy.dshm_size}},
            {"name": "weight-mount", "hostPath": {"path": deploy.weight_mount_path, "type": "Directory"}},
            *(host_path_volume(name, path, kind) for name, (path, kind, _) in host_files(deploy.hardware_type).items()),
        ]
        if self._endpoint is not None:
            if mounted_client_files(self._endpoint):
                volumes.append({"name": "kv-client", "configMap": {"name": CLIENT_CONFIG_MAP}})
            volumes += [
                {"name": name, "hostPath": {"path": spec["path"], "type": "DirectoryOrCreate"}}
                for name, spec in sorted(self._endpoint.host_paths.items())
            ]
        return volumes + list(self._storage_volumes)

    def _engine_container(self, job_name: str) -> dict[str, Any]:
        deploy = self._settings.motor_deploy_config
        _, npus = self._pods_and_npus()
        npu = HARDWARE[deploy.hardware_type].npu_resource
        mounts = [
            MOTOR_CONFIG_MOUNT,
            {"name": "dshm", "mountPath": "/dev/shm"},
            # The weights are only read: a read-only mount keeps a compromised engine from altering the model.
            {"name": "weight-mount", "mountPath": deploy.weight_mount_path, "readOnly": True},
            *(
                {"name": name, "mountPath": path, **({"readOnly": True} if read_only else {})}
                for name, (path, _, read_only) in host_files(deploy.hardware_type).items()
            ),
            *self._client_mounts(),
            *self._storage_mounts,
        ]
        return {
            "name": ENGINE_BASE,
            "image": deploy.image_name,
            "command": BOOT_COMMAND,
            "env": self._env(job_name),
            **({"envFrom": self._secret.env_from} if self._secret else {}),
            "resources": {"requests": {npu: npus, "cpu": "16", "memory": "64Gi"}, "limits": {npu: npus}},
            **PROBES,
            "lifecycle": ENGINE_LIFECYCLE,
            "securityContext": ENGINE_SECURITY_CONTEXT,
            "volumeMounts": mounts,
        }

    def _sidecars(self) -> list[dict[str, Any]]:
        if self._endpoint is None:
            return []
        mounts = [mount for mount in self._client_mounts() if mount["name"] == "kv-client"]
        return [{**sidecar, "volumeMounts": mounts} for sidecar in self._endpoint.sidecars]

    def _labels(self, name: str, job_name: str) -> dict[str, str]:
        deploy = self._settings.motor_deploy_config
        labels = {
            **common_labels(self._settings.namespace, self._side, name),
            "app": name,
            "job-name": job_name,
            "fault-scheduling": "grace",
            "fault-retry-times": "10000",
        }
        if HARDWARE[deploy.hardware_type].family != "A5":
            labels["ring-controller.atlas"] = "ascend-910b"
        if self._endpoint is not None:
            labels[KV_CLIENT_LABEL] = "true"
        return labels

    def _annotations(self, index: int | None) -> dict[str, str]:
        deploy = self._settings.motor_deploy_config
        pods, npus = self._pods_and_npus()
        contract = dict(self._endpoint.engine_env) if self._endpoint else {}
        annotations = checksum_annotations({
            "engine-config": engine_config_inputs(self._settings, self._side),
            "motor-env": script_envs(self._settings, contract)[rules.engine_env_section(self._side)],
            "motor-scripts": self._scripts_digest,
            "kv-client": self._endpoint.client_files if self._endpoint else None,
        })
        annotations.update(self._secret.annotation if self._secret else {})
        kv = None if index is None else instance_kv_transfer_config(self._settings, self._side, index)
        if kv is not None:
            annotations[KV_TRANSFER_ANNOTATION] = json.dumps(kv, sort_keys=True, separators=(",", ":"))
        if HARDWARE[deploy.hardware_type].family == "A3":
            annotations["sp-block"] = str(pods * npus)
        if deploy.scheduling_queue:
            annotations["scheduling.volcano.sh/queue-name"] = deploy.scheduling_queue
        return annotations

    def _workload(self, index: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """(metadata, Deployment spec) of instance `index`, or of the role template when index is None."""
        settings = self._settings
        deploy = settings.motor_deploy_config
        name = instance_name(self._side, index)
        job_name = f"{settings.namespace}-{name.removeprefix(ENGINE_BASE + '-')}"
        pods, _ = self._pods_and_npus()
        labels = self._labels(name, job_name)
        side_selector = deploy.prefill_node_selector if self._side == "prefill" else deploy.decode_node_selector
        pod_spec: dict[str, Any] = {
            "schedulerName": "volcano",
            "automountServiceAccountToken": False,
            "securityContext": MOTOR_POD_SECURITY_CONTEXT,
            "nodeSelector": {**engine_node_selector(deploy.hardware_type, deploy.accelerator_type), **side_selector},
            "containers": [self._engine_container(job_name), *self._sidecars()],
            "volumes": self._volumes(),
        }
        if HARDWARE[deploy.hardware_type].family == "A5":
            pod_spec["dnsConfig"] = {"options": [{"name": "ndots", "value": "2"}]}
        metadata: dict[str, Any] = {"name": name, "namespace": settings.namespace, "labels": labels}
        spec = {
            "replicas": pods,
            # NPUs are exclusive: a rolling update would wait for NPUs the old pods still hold.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": labels, "annotations": self._annotations(index)}, "spec": pod_spec},
        }
        return metadata, spec
