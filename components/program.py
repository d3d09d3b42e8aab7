"""The stack: settings -> namespace -> KVStore -> UCMStorage -> ControlPlane -> EnginePools -> outputs.
`__main__.py` only calls `run()`."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from components.control_plane import ControlPlane
from components.engine_pool import EnginePool, instance_name
from components.errors import KvpoolError
from components.kv_store import KVStore
from components.kv_store.client import kv_client_config_map
from components.motor_config import MOTOR_CONFIG_NAME
from components.motor_pod import COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE
from components.pulumi_settings import read_stack_settings
from components.settings import ServiceSettings
from components.ucm_storage import UCMStorage
from components.workloads import Workloads

# What the coordinator needs of the store (deploy.py gives it these two, not the client files).
COORDINATOR_STORE_ENV = ("KVS_MASTER_SERVICE", "KV_STORE_BACKEND")


def build(settings: ServiceSettings, project_dir: Path) -> None:
    opts = None
    if settings.create_namespace:
        namespace = k8s.core.v1.Namespace(
            settings.namespace, metadata=k8s.meta.v1.ObjectMetaArgs(name=settings.namespace)
        )
        opts = pulumi.ResourceOptions(depends_on=[namespace])
    deploy = settings.motor_deploy_config
    workloads = Workloads(settings.namespace, deploy.deploy_mode)
    endpoint = None
    if settings.kv_store_wanted:
        endpoint = KVStore("kv-store", settings, workloads, project_dir, opts).endpoint
        kv_client_config_map(endpoint, settings.namespace, opts)
        pulumi.export("kv_store", endpoint.as_output())
    storage = UCMStorage("ucm-storage", settings, opts) if deploy.storage else None
    store_env = {key: value for key, value in (endpoint.engine_env if endpoint else {}).items() if key in COORDINATOR_STORE_ENV}
    control_plane = ControlPlane("control-plane", settings, project_dir, store_env, workloads, opts)
    prefill_storage = (storage.volumes, storage.mounts) if storage else ([], [])
    EnginePool("prefill", settings, "prefill", endpoint, workloads, prefill_storage, opts)
    EnginePool("decode", settings, "decode", endpoint, workloads, opts=opts)
    workloads.finish(pulumi.ResourceOptions(depends_on=[control_plane.motor_config]))
    pulumi.export("namespace", settings.namespace)
    pulumi.export("deploy_mode", deploy.deploy_mode)
    pulumi.export("motor_config", f"{settings.namespace}/{MOTOR_CONFIG_NAME}")
    pulumi.export(
        "coordinator",
        {
            "service": workloads.service_host(COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE),
            "node_port": deploy.coordinator_infer_node_port,
        },
    )
    pulumi.export(
        "engines",
        {
            side: [instance_name(side, index) for index in range(count)]
            for side, count in (("prefill", deploy.p_instances_num), ("decode", deploy.d_instances_num))
        },
    )


def run() -> None:
    try:
        settings = read_stack_settings()
        build(settings, Path.cwd())
    except KvpoolError as error:
        # RunError: the CLI prints the message without a Python traceback.
        raise pulumi.RunError(str(error)) from None
