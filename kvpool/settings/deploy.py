"""motor_deploy_config: where and how the service runs (instances, pods, NPUs, image, hardware, node selectors,
NodePorts) and its storage[] entries, the volumes UCM's Posix tier mounts on prefill pods."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from kvpool.internal.hardware import (
    HARDWARE,
    accelerator_type_problem,
    engine_node_selector,
)
from kvpool.internal.units import is_dns_label
from kvpool.policies import rules
from kvpool.settings.types import (
    IMAGE_REFERENCE,
    AbsolutePath,
    Closed,
    Count,
    HostPath,
    Labels,
    LabelValue,
    NodeMemory,
    NodePort,
    NonEmpty,
    ObjectName,
    VolumeSize,
)

# Motor's instance limits (deploy.py INSTANCE_NUM_MAX) and NPUs per pod.
MAX_NPUS_PER_POD = 16

HardwareType = Literal[
    "800I_A2", "800T_A2", "800I_A3", "800T_A3",
    "350-Atlas-8", "350-Atlas-16", "350-Atlas-4p-8", "350-Atlas-4p-16",
    "850-Atlas-8p-8", "850-SuperPod-Atlas-8", "950-SuperPod-Atlas-8",
]


# --- motor_deploy_config.storage[] (deploy.py lib/generator/storage.py) --------------------------------


class StorageCommon(Closed):
    mount_path: AbsolutePath | None = Field(
        None, description="Where prefill pods mount the volume; default /mnt/store-<index> as deploy.py does."
    )
    read_only: StrictBool = Field(False, description="Mount read-only. UCM's Posix tier writes, so keep false for it.")
    enable: StrictBool = Field(True, description="false keeps the entry in the file but mounts nothing.")


class PvcStorage(StorageCommon):
    type: Literal["pvc"]
    storage_class_name: ObjectName | None = Field(
        None, description="Create a new PVC of this StorageClass (exclusive with claim_name)."
    )
    claim_name: ObjectName | None = Field(None, description="Mount an existing PVC (exclusive with storage_class_name).")
    size: VolumeSize | None = Field(None, description="New PVC size with a unit; default 200Gi as deploy.py.")
    access_mode: Literal["ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod"] | None = Field(
        None, description="New PVC access mode; default ReadWriteMany so every prefill pod shares the cache."
    )

    @model_validator(mode="after")
    def _one_source(self) -> PvcStorage:
        if (self.storage_class_name is None) == (self.claim_name is None):
            raise ValueError(
                "set exactly one of storage_class_name (create a new PVC) or claim_name (use an existing PVC)"
            )
        if self.claim_name is not None and (self.size is not None or self.access_mode is not None):
            raise ValueError("size and access_mode describe a new PVC; remove them when claim_name is set")
        if self.storage_class_name is not None:
            self.size = self.size or "200Gi"
            self.access_mode = self.access_mode or "ReadWriteMany"
        return self


class NfsStorage(StorageCommon):
    type: Literal["nfs"]
    server: NonEmpty = Field(description="NFS server host name or IP.")
    path: AbsolutePath = Field(description="Exported path on the server.")


class HostPathStorage(StorageCommon):
    type: Literal["hostpath"]
    path: HostPath = Field(description="Directory on every prefill node.")
    host_path_type: Literal[
        "", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice"
    ] | None = None


StorageEntry = Annotated[Union[PvcStorage, NfsStorage, HostPathStorage], Field(discriminator="type")]


# deploy.py's NodePorts (its yaml_template/ files write them as fixed numbers): what a stack writes to keep them.
DEPLOY_PY_NODE_PORTS = dict(zip(rules.NODE_PORT_KEYS, (31015, 31017, 31027), strict=True))


class HostPathRoots(Closed):
    """The node folders the service may mount from its nodes, declared once (kvpool/policies/rules/host_paths.py)."""

    logs: list[HostPath] = Field(
        default_factory=list,
        description="Node folders a role's logging_config.host_log_dir may lie in (writable), besides Motor's "
        f"{rules.DEFAULT_HOST_LOG_DIR}. Each below /mnt, /data or /srv.",
    )
    storage: list[HostPath] = Field(
        default_factory=list,
        description="Node folders a hostpath storage[] entry may lie in (mounted writable into prefill pods). Each "
        "below /mnt, /data or /srv.",
    )


def mount_point(path: str) -> str:
    """`path` as Linux resolves a mount point: normalised (/mnt/ucm/ and /mnt/./ucm are /mnt/ucm), and a leading
    // is one / (posixpath.normpath keeps it, POSIX leaves its meaning to the system; Linux reads //mnt as /mnt, so
    //mnt/configmap would otherwise pass every comparison with /mnt/configmap)."""
    normal = posixpath.normpath(path)
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


@dataclass(frozen=True)
class EngineSide:
    """One side's engine pods as EnginePool renders them: what they ask the scheduler for."""

    instances: int
    pods_per_instance: int
    npus_per_pod: int
    npu_resource: str  # the extended resource each pod requests npus_per_pod of
    node_selector: dict[str, str]  # the engine nodes' labels, then the side's own selector

    @property
    def pods(self) -> int:
        return self.instances * self.pods_per_instance


# The deploy modes motor-kvpool renders (kvpool/components/workloads.py).
DEPLOY_MODES = ("multi_deployment", "infer_service_set")


# --- motor_deploy_config ---------------------------------------------------------------------------------


class DeployConfig(Closed):
    job_id: str | None = Field(None, description="Namespace of the service; defaults to the stack name.")
    deploy_mode: str = Field(
        "infer_service_set",
        description="multi_deployment (one Deployment per instance) or infer_service_set (one InferServiceSet "
        "custom resource); absent means infer_service_set, deploy.py's default.",
    )
    p_instances_num: StrictInt = Field(1, description="Prefill instances (Motor allows 1..16: rules.check_instance_counts).")
    d_instances_num: StrictInt = Field(1, description="Decode instances (Motor allows 1..16: rules.check_instance_counts).")
    single_p_instance_pod_num: Count = Field(1, ge=1, description="Pods per prefill instance.")
    single_d_instance_pod_num: Count = Field(1, ge=1, description="Pods per decode instance.")
    p_pod_npu_num: StrictInt = Field(ge=1, le=MAX_NPUS_PER_POD, description="NPUs per prefill pod.")
    d_pod_npu_num: StrictInt = Field(ge=1, le=MAX_NPUS_PER_POD, description="NPUs per decode pod.")
    image_name: str = Field(pattern=IMAGE_REFERENCE, description="The MindIE Motor vllm-ascend image.")
    hardware_type: HardwareType = Field(description="Motor's hardware type; selects NPU resources and defaults.")
    accelerator_type: LabelValue | None = Field(
        None,
        description="The accelerator-type label of the engine nodes. deploy.py reads it from the cluster's nodes; "
        "default: module-910b-8 (A2), module-a3-16 (A3), the hardware_type itself (A5). Set it when your nodes "
        "carry another value, e.g. module-a3-16-super-pod.",
    )
    weight_mount_path: HostPath = Field(
        rules.DEFAULT_WEIGHT_MOUNT_PATH,
        description="Host path of the model weights, mounted read-only; a declared root, so below /mnt, /data or /srv.",
    )
    host_path_roots: HostPathRoots | None = Field(
        None,
        description="The node folders, besides weight_mount_path and Motor's own node paths, that pods may mount: "
        "logs (host_log_dir) and storage (hostpath storage[] entries). Any other host path is refused.",
    )
    storage: list[StorageEntry] = Field(default_factory=list, description="Volumes for UCM (prefill only).")
    dshm_size: NodeMemory = Field(rules.DEFAULT_DSHM_SIZE, description="Size of /dev/shm in engine pods; UCM's cache lives there.")
    prefill_node_selector: Labels = Field(default_factory=dict, description="Nodes of the prefill pods (besides the accelerator-type label).")
    decode_node_selector: Labels = Field(default_factory=dict, description="Nodes of the decode pods (besides the accelerator-type label).")
    controller_node_selector: Labels = Field(default_factory=dict, description="Nodes of the controller pods.")
    coordinator_node_selector: Labels = Field(default_factory=dict, description="Nodes of the coordinator pods.")
    kv_pool_node_selector: Labels = Field(default_factory=dict, description="Nodes of the KV store pods.")
    scheduling_queue: NonEmpty | None = Field(None, description="Volcano queue (scheduling.volcano.sh/queue-name).")
    # No NodePort unless asked: a NodePort is allocated once per cluster, so deploy.py's fixed 31015/31017/31027 would
    # refuse every second service of a cluster. Motor's own processes and probes dial the Services' DNS names and
    # container ports, never a NodePort; only clients outside the cluster use one.
    coordinator_infer_node_port: NodePort | None = Field(
        None, description="NodePort of the inference API for clients outside the cluster; unset, the Service is "
        "ClusterIP. deploy.py's is 31015: write it to keep it (one stack per cluster may hold it).",
    )
    coordinator_obs_node_port: NodePort | None = Field(
        None, description="NodePort of coordinator observability; unset, the Service is ClusterIP (deploy.py's: 31017).",
    )
    controller_observability_node_port: NodePort | None = Field(
        None, description="NodePort of controller observability; unset, the Service is ClusterIP (deploy.py's: 31027).",
    )
    tls_config: dict[str, Any] | None = Field(None, description="Motor's TLS settings, passed to Motor untouched.")

    def engine_side(self, side: str) -> EngineSide:
        """`side`: prefill or decode."""
        prefill = side == "prefill"
        return EngineSide(
            instances=self.p_instances_num if prefill else self.d_instances_num,
            pods_per_instance=self.single_p_instance_pod_num if prefill else self.single_d_instance_pod_num,
            npus_per_pod=self.p_pod_npu_num if prefill else self.d_pod_npu_num,
            npu_resource=HARDWARE[self.hardware_type].npu_resource,
            node_selector={**engine_node_selector(self.hardware_type, self.accelerator_type),
                           **(self.prefill_node_selector if prefill else self.decode_node_selector)},
        )

    @field_validator("p_instances_num", "d_instances_num")
    @classmethod
    def _motor_instance_limit(cls, count: int, info: ValidationInfo) -> int:
        """The policy pack's rule, so both say the same words (one rule, one place)."""
        findings = rules.check_instance_counts({info.field_name: count})
        if findings:
            raise ValueError(findings[0].message)
        return count

    @field_validator("deploy_mode")
    @classmethod
    def _supported_mode(cls, mode: str) -> str:
        if mode == "single_container":
            raise ValueError(
                "single_container runs every role in one container (a single-node trial); motor-kvpool deploys "
                "each role as its own workload: write multi_deployment or infer_service_set"
            )
        if mode not in DEPLOY_MODES:
            raise ValueError(f"{mode!r} is not a deploy mode; write multi_deployment or infer_service_set")
        return mode

    @field_validator("job_id")
    @classmethod
    def _namespace_name(cls, job_id: str | None) -> str | None:
        if job_id is not None and not is_dns_label(job_id):
            raise ValueError(
                f"{job_id!r} is not a valid namespace name: use at most 63 lower-case letters, digits and '-', "
                "starting and ending with a letter or digit"
            )
        return job_id

    @model_validator(mode="after")
    def _accelerator_type_matches_hardware(self) -> DeployConfig:
        problem = self.accelerator_type and accelerator_type_problem(self.hardware_type, self.accelerator_type)
        if problem:
            raise ValueError(f"accelerator_type: {problem}")
        return self

    @model_validator(mode="after")
    def _distinct_node_ports(self) -> DeployConfig:
        """A NodePort is allocated once per cluster: the API server refuses the second Service asking for it."""
        seen: dict[int, str] = {}
        for name in rules.NODE_PORT_KEYS:
            port = getattr(self, name)
            if port is None:
                continue
            if port in seen:
                raise ValueError(f"{name}: {port} is already {seen[port]}; a NodePort serves one Service, give each "
                                 "its own")
            seen[port] = name
        return self

    @model_validator(mode="after")
    def _storage_mount_paths(self) -> DeployConfig:
        for index, entry in enumerate(self.storage):
            entry.mount_path = entry.mount_path or f"/mnt/store-{index}"
        # As paths, not strings: /mnt/ucm and /mnt/ucm/ are one mount point, and one inside another hides it.
        paths = [mount_point(entry.mount_path) for entry in self.storage if entry.enable]
        duplicates = sorted({path for path in paths if paths.count(path) > 1})
        if duplicates:
            raise ValueError(f"storage entries share mount_path {', '.join(duplicates)}; give each its own")
        nested = sorted({f"{inner} inside {outer}" for inner in paths for outer in paths
                         if inner != outer and inner.startswith(outer.rstrip("/") + "/")})
        if nested:
            raise ValueError(f"storage entries' mount_path lie one inside another ({', '.join(nested)}); mount each "
                             "at a path of its own")
        return self
