"""The stack: settings -> namespace -> KV store -> motor-config -> outputs. `__main__.py` only calls `run()`."""

from __future__ import annotations

from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from components.errors import KvpoolError
from components.kv_store import KVStore
from components.kv_store.client import kv_client_config_map
from components.motor_config import MOTOR_CONFIG_NAME, motor_config_map
from components.pulumi_settings import read_stack_settings
from components.settings import ServiceSettings


def build(settings: ServiceSettings, project_dir: Path) -> None:
    namespace_opts = None
    if settings.create_namespace:
        namespace = k8s.core.v1.Namespace(
            settings.namespace, metadata=k8s.meta.v1.ObjectMetaArgs(name=settings.namespace)
        )
        namespace_opts = pulumi.ResourceOptions(depends_on=[namespace])
    motor_config_map(settings, namespace_opts)
    deploy = settings.motor_deploy_config
    pulumi.export("namespace", settings.namespace)
    pulumi.export("deploy_mode", deploy.deploy_mode)
    pulumi.export("motor_config", f"{settings.namespace}/{MOTOR_CONFIG_NAME}")
    pulumi.export("instances", {"prefill": deploy.p_instances_num, "decode": deploy.d_instances_num})
    if settings.kv_store_wanted:
        store = KVStore("kv-store", settings, project_dir, namespace_opts)
        kv_client_config_map(store.endpoint, settings.namespace, namespace_opts)
        pulumi.export("kv_store", store.endpoint.as_output())


def run() -> None:
    try:
        settings = read_stack_settings()
        build(settings, Path.cwd())
    except KvpoolError as error:
        # RunError: the CLI prints the message without a Python traceback.
        raise pulumi.RunError(str(error)) from None
