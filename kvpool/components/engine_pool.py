"""EnginePool: the engines of one side (prefill or decode), one Deployment per instance (`vllm-p<i>`, `vllm-d<i>`).

Names and labels are deterministic: deploy.py puts a per-run random id in the `job-name` label and so restarts
every engine on every run; here the same config renders the same objects. Pod shape (volumes, scheduler,
NPU resources, labels) follows deploy.py's engine template (motor-deployer.md §1.3, §1.7).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.kv_store.client import CLIENT_CONFIG_MAP, mounted_client_files
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.workloads import Workloads, motor_env
from kvpool.internal.checksums import annotations as checksum_annotations
from kvpool.internal.child_names import ChildNames
from kvpool.internal.hardware import HARDWARE
from kvpool.internal.labels import (
    ENGINE_BASE,
    KV_CLIENT_LABEL,
    app_selector,
    common_labels,
    engine_job_name,
    instance_name,
)
from kvpool.internal.motor_pod import (
    BOOT_COMMAND,
    ENGINE_LIFECYCLE,
    ENGINE_PROBES,
    MOTOR_CONFIG_MOUNT,
    MOTOR_CONFIG_VOLUME,
    MOTOR_POD_SECURITY_CONTEXT,
    MOTOR_SECURITY_CONTEXT,
    env_list,
    host_path_volume,
    weight_mount,
    weight_volume,
)
from kvpool.internal.pod_layout import CLIENT_CONFIG_DIR, LOG_VOLUME_NAME, host_files
from kvpool.internal.rollout import ready_when
from kvpool.internal.secret_env import SecretEnv
from kvpool.settings.pods import VOLCANO_QUEUE_ANNOTATION, ContainerResources

TYPE = "kvpool:index:EnginePool"
KV_TRANSFER_ANNOTATION = "motor-kvpool.io/kv-transfer-config"
# CLIENT_CONFIG_DIR as a writable folder, for a standalone Mooncake store (KVStoreEndpoint.standalone_store).
CLIENT_DIR_VOLUME = "kv-client-dir"
# deploy.py gives engines allowPrivilegeEscalation false and seccomp Unconfined (the NPU stack's ioctls need it);
# motor-kvpool also drops the default capabilities no engine process uses: Motor's scripts and code make no device
# node (the Ascend device plugin injects /dev/davinci*), open no raw socket (`ping` appears only in log text), never
# chroot, set file capabilities or change the capability bounding set, and write no audit records (grep of Motor
# 8919e55). The rest of the runtime's defaults are kept: CHOWN, DAC_OVERRIDE, FOWNER, FSETID, KILL, SETGID, SETUID
# and NET_BIND_SERVICE may be used by CANN and the driver's tools (which switch to HwHiAiUser and own their log
# folders); nothing here shows they are unneeded.
ENGINE_DROPPED_CAPABILITIES = ["AUDIT_WRITE", "MKNOD", "NET_RAW", "SETFCAP", "SETPCAP", "SYS_CHROOT"]
ENGINE_SECURITY_CONTEXT = {**MOTOR_SECURITY_CONTEXT, "capabilities": {"drop": ENGINE_DROPPED_CAPABILITIES}}


@dataclass(frozen=True, kw_only=True)
class EnginePoolArgs:
    """Everything one side's engines are rendered from (kvpool/program/__init__.py builds it from the settings)."""

    side: str  # prefill or decode
    namespace: str
    workloads: Workloads
    instances: int
    pods_per_instance: int
    npus_per_pod: int
    hardware_type: str
    image: str
    weight_mount_path: str
    log_host_dir: str  # the node folder mounted as the engines' log folder (motor_nodemanger_config's host_log_dir)
    dshm_size: str
    node_selector: dict[str, str]  # the engine nodes' labels, then the side's own selector
    scheduler_name: str  # the pods' schedulerName
    scheduling_queue: str | None  # Volcano's queue (the settings refuse it under another scheduler)
    resources: ContainerResources  # CPU and memory of the engine container; its NPUs come from npus_per_pod
    env: dict[str, Any]  # env.json's sections and the store contract, as the engines run them
    kv_transfer_config: dict[str, Any] | None  # what each engine hands vLLM (kvpool/internal/connectors.py)
    restart_inputs: dict[str, Any]  # checksum/<name> -> what the engines read at start
    endpoint: KVStoreEndpoint | None = None
    storage_volumes: tuple[dict[str, Any], ...] = ()
    storage_mounts: tuple[dict[str, Any], ...] = ()
    secret: SecretEnv | None = None
    # The running instances in waves (kvpool/internal/rollout.py): each Deployment of a wave depends on every one of the
    # wave before, so an update stops one wave at a time. Instances in no wave are new and depend on nothing.
    rollout_waves: tuple[tuple[str, ...], ...] = ()


class EnginePool(pulumi.ComponentResource):
    # One per instance in multi_deployment; empty in a service set, where the operator creates them.
    deployments: list[k8s.apps.v1.Deployment]

    def __init__(self, name: str, args: EnginePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        self._args = args
        names = ChildNames.of(name, args.side, opts)  # kvpool.program names a pool after its side
        if args.workloads.is_service_set:
            # One role template; the operator numbers the instances (INSTANCE_INDEX) and Motor's engine.sh
            # derives JOB_NAME and the per-instance kv_transfer_config from them.
            template = instance_name(args.side, None)
            args.workloads.deployment(
                names.name(template), args.side, *self._workload(None),
                opts=names.opts(template, pulumi.ResourceOptions(parent=self)), instances=args.instances,
            )
            self.deployments = []
        else:
            waits_for = {name: args.rollout_waves[wave - 1] for wave in range(1, len(args.rollout_waves))
                         for name in args.rollout_waves[wave]}
            created: dict[str, k8s.apps.v1.Deployment] = {}
            for index in range(args.instances):  # waves hold instances in index order: a wave's forerunners exist
                name = instance_name(args.side, index)
                waits = pulumi.ResourceOptions(parent=self, depends_on=[created[n] for n in waits_for.get(name, ())])
                created[name] = args.workloads.deployment(
                    names.name(name), args.side, *self._workload(index), opts=names.opts(name, waits),
                )
            self.deployments = list(created.values())
        self.register_outputs({
            "instances": [instance_name(args.side, index) for index in range(args.instances)],
            "deployments": self.deployments,
        })

    # -- pieces of one instance ---------------------------------------------------------------------------

    def _env(self, job_name: str) -> list[dict[str, Any]]:
        return env_list({**motor_env(self._args.side, self._args.workloads, job_name), **self._args.env})

    def _client_mounts(self) -> list[dict[str, Any]]:
        endpoint = self._args.endpoint
        if endpoint is None:
            return []
        # The writable folder first: the client files are mounted into it.
        mounts = [{"name": CLIENT_DIR_VOLUME, "mountPath": CLIENT_CONFIG_DIR}] if endpoint.standalone_store else []
        mounts += [
            {"name": "kv-client", "mountPath": f"{CLIENT_CONFIG_DIR}/{file}", "subPath": file, "readOnly": True}
            for file in sorted(mounted_client_files(endpoint))
        ]
        mounts += [{"name": name, "mountPath": spec["mount_path"]} for name, spec in sorted(endpoint.host_paths.items())]
        return mounts

    def _volumes(self) -> list[dict[str, Any]]:
        args = self._args
        node_paths = {LOG_VOLUME_NAME: args.log_host_dir}
        volumes = [
            MOTOR_CONFIG_VOLUME,
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": args.dshm_size}},
            weight_volume(args.weight_mount_path),
            *(
                host_path_volume(name, node_paths.get(name, path), kind)
                for name, (path, kind, _) in host_files(args.hardware_type).items()
            ),
        ]
        if args.endpoint is not None:
            if mounted_client_files(args.endpoint):
                volumes.append({"name": "kv-client", "configMap": {"name": CLIENT_CONFIG_MAP}})
            if args.endpoint.standalone_store:
                volumes.append({"name": CLIENT_DIR_VOLUME, "emptyDir": {}})
            volumes += [
                {"name": name, "hostPath": {"path": spec["path"], "type": "DirectoryOrCreate"}}
                for name, spec in sorted(args.endpoint.host_paths.items())
            ]
        return volumes + list(args.storage_volumes)

    def _engine_container(self, job_name: str) -> dict[str, Any]:
        args = self._args
        npus = args.npus_per_pod
        npu = HARDWARE[args.hardware_type].npu_resource
        mounts = [
            MOTOR_CONFIG_MOUNT,
            {"name": "dshm", "mountPath": "/dev/shm"},
            weight_mount(args.weight_mount_path),
            *(
                {"name": name, "mountPath": path, **({"readOnly": True} if read_only else {})}
                for name, (path, _, read_only) in host_files(args.hardware_type).items()
            ),
            *self._client_mounts(),
            *args.storage_mounts,
        ]
        return {
            "name": ENGINE_BASE,
            "image": args.image,
            "command": BOOT_COMMAND,
            "env": self._env(job_name),
            **({"envFrom": args.secret.env_from} if args.secret else {}),
            "resources": {kind: {npu: npus, **amounts} for kind, amounts in args.resources.manifest().items()},
            **ENGINE_PROBES,
            "lifecycle": ENGINE_LIFECYCLE,
            "securityContext": ENGINE_SECURITY_CONTEXT,
            "volumeMounts": mounts,
        }

    def _labels(self, name: str, job_name: str) -> dict[str, str]:
        args = self._args
        labels = {
            **common_labels(args.namespace, args.side, name),
            "app": name,
            "job-name": job_name,
            "fault-scheduling": "grace",
            "fault-retry-times": "10000",
        }
        if HARDWARE[args.hardware_type].family != "A5":
            labels["ring-controller.atlas"] = "ascend-910b"
        if args.endpoint is not None:
            labels[KV_CLIENT_LABEL] = "true"
        return labels

    def _annotations(self) -> dict[str, str]:
        args = self._args
        annotations = checksum_annotations(args.restart_inputs)
        annotations.update(args.secret.annotation if args.secret else {})
        if args.kv_transfer_config is not None:
            annotations[KV_TRANSFER_ANNOTATION] = json.dumps(args.kv_transfer_config, sort_keys=True, separators=(",", ":"))
        if HARDWARE[args.hardware_type].family == "A3":
            annotations["sp-block"] = str(args.pods_per_instance * args.npus_per_pod)
        if args.scheduling_queue:
            annotations[VOLCANO_QUEUE_ANNOTATION] = args.scheduling_queue
        return annotations

    def _workload(self, index: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """(metadata, Deployment spec) of instance `index`, or of the role template when index is None."""
        args = self._args
        name = instance_name(args.side, index)
        job_name = engine_job_name(args.namespace, args.side, index)
        labels = self._labels(name, job_name)
        pod_spec: dict[str, Any] = {
            "schedulerName": args.scheduler_name,
            "automountServiceAccountToken": False,
            "securityContext": MOTOR_POD_SECURITY_CONTEXT,
            "nodeSelector": args.node_selector,
            "containers": [self._engine_container(job_name)],
            "volumes": self._volumes(),
        }
        if HARDWARE[args.hardware_type].family == "A5":
            pod_spec["dnsConfig"] = {"options": [{"name": "ndots", "value": "2"}]}
        metadata: dict[str, Any] = {"name": name, "namespace": args.namespace, "labels": labels}
        if index is not None:  # an instance's own Deployment; the operator awaits a service set's
            metadata["annotations"] = ready_when(args.pods_per_instance)
        spec = {
            "replicas": args.pods_per_instance,
            # NPUs are exclusive: a rolling update would wait for NPUs the old pods still hold.
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": app_selector(name)},
            "template": {"metadata": {"labels": labels, "annotations": self._annotations()}, "spec": pod_spec},
        }
        return metadata, spec
