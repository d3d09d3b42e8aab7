"""From the service settings to each component's arguments: the one place where a settings field is turned into
what a component renders, so that a component reads its own arguments only and can be built without a service."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, cast

import pulumi

from kvpool.components import kv_conductor
from kvpool.components.control_plane import ControlPlaneArgs, MotorRoleArgs
from kvpool.components.engine_pool import EnginePoolArgs
from kvpool.components.kv_conductor import KVConductorArgs
from kvpool.components.kv_store.component import KVStoreArgs
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.ucm_storage import UCMStorage, UCMStorageArgs
from kvpool.components.workloads import Workloads
from kvpool.errors import KvpoolError
from kvpool.internal.checksums import engine_config_inputs
from kvpool.internal.connectors import engine_kv_transfer_config
from kvpool.internal.hardware import engine_node_selector
from kvpool.internal.labels import DEFAULT_CLUSTER_DOMAIN, instance_name
from kvpool.internal.motor_config import motor_config_data, role_motor_files
from kvpool.internal.motor_env import CONTROL_PLANE_INTERNAL_ENV, MOTOR_INTERNAL_ENV, env_text
from kvpool.internal.motor_monitoring import OBS_PORT, motor_service
from kvpool.internal.motor_pod import (
    CONTROLLER_OBS_SERVICE,
    CONTROLLER_ROLE,
    CONTROLLER_SERVICE,
    COORDINATOR_INFER_SERVICE,
    COORDINATOR_MGMT_SERVICE,
    COORDINATOR_OBS_SERVICE,
    COORDINATOR_ROLE,
)
from kvpool.internal.ports import Port
from kvpool.internal.rbac import configmap_namespace, controller_calls
from kvpool.internal.rollout import waves
from kvpool.internal.secret_env import SecretEnv
from kvpool.policies import rules
from kvpool.program.compatibility import compatibility
from kvpool.program.role_env import engine_env
from kvpool.settings.service import ServiceSettings
from kvpool.settings.store import StoreConfig


class InternalEnvConflict(KvpoolError):
    """env.json sets a variable motor-kvpool sets itself for Motor's processes."""


INTERNAL_ENV_BY_SECTION = {
    "motor_common_env": CONTROL_PLANE_INTERNAL_ENV,  # reaches the controller and coordinator too
    "motor_controller_env": CONTROL_PLANE_INTERNAL_ENV,
    "motor_coordinator_env": CONTROL_PLANE_INTERNAL_ENV,
    "motor_engine_prefill_env": MOTOR_INTERNAL_ENV,
    "motor_engine_decode_env": MOTOR_INTERNAL_ENV,
}


def check_internal_env(settings: ServiceSettings, coordinator_store_env: Mapping[str, str]) -> None:
    """env.json may not set what motor-kvpool sets for Motor's processes: as container env the later entry would
    win silently, and in the scripts' set_*_env functions it would rewrite a pod's ROLE or its config paths.
    `coordinator_store_env`: the store variables the coordinator gets (env.json may repeat them, never contradict
    them, as for the engines: kvpool/program/role_env.py engine_env). The engines' store variables are checked there."""
    sections = settings.env.model_dump(mode="json")
    problems = [
        f"env.{section}.{name}: motor-kvpool sets {name} itself for Motor's processes"
        for section, names in INTERNAL_ENV_BY_SECTION.items()
        for name in sections[section]
        if name in names
    ]
    for section in ("motor_common_env", "motor_coordinator_env"):
        for name, value in sections[section].items():
            if name in coordinator_store_env and env_text(value) != coordinator_store_env[name]:
                problems.append(f"env.{section}.{name} is {value!r} but the KV store needs {coordinator_store_env[name]!r}")
    if problems:
        raise InternalEnvConflict(
            "; ".join(problems) + ". Remove them from env.json: motor-kvpool sets them (kvpool/program/args.py)."
        )


# What the coordinator needs of the store (deploy.py gives it these two, not the client files).
COORDINATOR_STORE_ENV = ("KVS_MASTER_SERVICE", "KV_STORE_BACKEND")


def api_port(section: dict[str, Any], name: str, port: str) -> int:
    """The role's port named `port` (rules.ROLE_PORTS: from Motor's own api_config, else deploy.py's default); the
    settings ran rules.check_role_ports, which refuses a value that is no port."""
    key, default = rules.ROLE_PORTS[name][port]
    return cast(int, rules.role_port(section, key, default))


def kv_store_args(settings: ServiceSettings, workloads: Workloads, project_dir: Path) -> KVStoreArgs:
    store = settings.kv_cache_store_config
    if store is None:
        raise ValueError("KVStore needs kv_cache_store_config; ServiceSettings.kv_store_wanted says when")
    deploy = settings.motor_deploy_config
    return _store_args(
        store, workloads, deploy.image_name, deploy.hardware_type, project_dir,
        node_selector=dict(deploy.kv_pool_node_selector),
        engine_node_labels=engine_node_selector(deploy.hardware_type, deploy.accelerator_type),
        env={name: env_text(value) for name, value in settings.env.motor_kv_cache_store_env.items()},
        compatibility=compatibility(settings),
        sizing=settings.pool_sizing() if store.dashboards and not store.allowed_consumers else None,
    )


def _store_args(
    store: StoreConfig, workloads: Workloads, image: str, hardware_type: str, project_dir: Path, **service: Any
) -> KVStoreArgs:
    """What every KVStore takes from its own settings section; `service`: what the service around it adds (its node
    selectors, env, compatibility record and sizing)."""
    return KVStoreArgs(
        store=store,
        namespace=workloads.namespace,
        workloads=workloads,
        image=store.image or image,
        hardware_type=hardware_type,
        labels=dict(store.additional_labels),
        annotations=dict(store.additional_annotations),
        resources=store.resources,
        protect=store.protect,
        retain_on_delete=store.retain_on_delete,
        allowed_consumers=tuple(store.allowed_consumers),
        metrics_scraper_namespaces=tuple(store.metrics_scraper_namespaces),
        project_dir=project_dir,
        **service,
    )


def pool_store_args(
    store: StoreConfig,
    namespace: str,
    image: str,
    hardware_type: str,
    *,
    deploy_mode: str = "multi_deployment",
    cluster_domain: str = DEFAULT_CLUSTER_DOMAIN,
    project_dir: Path | None = None,
) -> KVStoreArgs:
    """A KV store that is a stack of its own: no engines beside it, only the services its `allowed_consumers` name,
    which use it through kv_cache_store_config.target_stack. With no engines of its own it exports no compatibility
    record: each consumer's blocks are keyed by its own model and layout (README, "A pool of its own")."""
    if store.target_stack is not None:
        raise ValueError("kv_cache_store_config.target_stack: a pool of its own uses no other stack's store; remove it")
    if not store.allowed_consumers:
        raise ValueError("kv_cache_store_config.allowed_consumers: a pool of its own serves only its consumers; "
                         "list their namespaces")
    return _store_args(
        store, Workloads(namespace, deploy_mode, cluster_domain), image, hardware_type, project_dir or Path.cwd(),
        node_selector={}, engine_node_labels={}, env={}, compatibility={},
    )


def ucm_storage_args(settings: ServiceSettings) -> UCMStorageArgs:
    return UCMStorageArgs(namespace=settings.namespace, entries=tuple(settings.motor_deploy_config.storage))


def control_plane_args(
    settings: ServiceSettings,
    workloads: Workloads,
    endpoint: KVStoreEndpoint | None,
    motor_files: Mapping[str, str],
    role_envs: Mapping[str, Mapping[str, Any]],
    secret: SecretEnv | None,
) -> ControlPlaneArgs:
    """`motor_files`: read_motor_files(); `role_envs`: role_env.script_envs()."""
    contract = dict(endpoint.engine_env) if endpoint else {}
    store_env = {key: value for key, value in contract.items() if key in COORDINATOR_STORE_ENV}
    check_internal_env(settings, store_env)
    deploy = settings.motor_deploy_config
    common = settings.env.motor_common_env
    controller_config, coordinator_config = settings.motor_controller_config, settings.motor_coordinator_config
    controller_section, coordinator_section = "motor_controller_config", "motor_coordinator_config"  # ROLE_PORTS keys
    # The coordinator dials the service's conductor, if it has one.
    conductor_env = kv_conductor.coordinator_env(workloads) if settings.kv_conductor_config is not None else {}
    controller = MotorRoleArgs(
        node_selector=deploy.controller_node_selector,
        env={**common, **settings.env.motor_controller_env},
        restart_env=dict(role_envs["motor_controller_env"]),
        restart_scripts=role_motor_files(motor_files, CONTROLLER_ROLE),
        services={
            CONTROLLER_SERVICE: Port(name="api", port=api_port(controller_config, controller_section, "api")),
            CONTROLLER_OBS_SERVICE: Port(name="obs", port=api_port(controller_config, controller_section, "obs"),
                                         node_port=deploy.controller_observability_node_port),
        },
        log_host_dir=settings.host_log_dir("controller"),
        resources=settings.pods.controller,
    )
    coordinator_env = {**common, **store_env, **conductor_env, **settings.env.motor_coordinator_env}
    # The containers whose env lists more than their function exports: their functions expand references as they do.
    role_containers = {"motor_coordinator_env": list(coordinator_env)}
    if settings.kv_conductor_config is not None:
        role_containers[kv_conductor.ENV_SECTION] = list(kv_conductor_env(settings, endpoint))
    coordinator = MotorRoleArgs(
        node_selector=deploy.coordinator_node_selector,
        env=coordinator_env,
        restart_env=dict(role_envs["motor_coordinator_env"]),
        restart_scripts=role_motor_files(motor_files, COORDINATOR_ROLE),
        services={
            COORDINATOR_INFER_SERVICE: Port(
                name="infer", port=api_port(coordinator_config, coordinator_section, "infer"),
                node_port=deploy.coordinator_infer_node_port,
            ),
            COORDINATOR_MGMT_SERVICE: Port(name="mgmt", port=api_port(coordinator_config, coordinator_section, "mgmt")),
            COORDINATOR_OBS_SERVICE: Port(name=OBS_PORT, port=api_port(coordinator_config, coordinator_section, "obs"),
                                          node_port=deploy.coordinator_obs_node_port),
        },
        # Motor's coordinator fetches http://$KVS_MASTER_SERVICE:<kv_cache_store_config.metrics_port>/metrics
        # (coordinator/metrics/metrics_collector.py:534-569) and dials no other store port.
        reads_store_metrics="KVS_MASTER_SERVICE" in store_env,
        log_host_dir=settings.host_log_dir("coordinator"),
        resources=settings.pods.coordinator,
        # deploy.py mounts the weights on every coordinator (lib/generator/coordinator.py:84); ours when Motor reads them.
        weight_host_dir=deploy.weight_mount_path if rules.coordinator_reads_model(settings.user_config()) else None,
    )
    return ControlPlaneArgs(
        namespace=settings.namespace,
        workloads=workloads,
        image=deploy.image_name,
        motor_config=motor_config_data(
            settings.user_config(), motor_files, role_envs, endpoint.client_files if endpoint else {}, role_containers
        ),
        controller=controller,
        coordinator=coordinator,
        controller_calls=controller_calls(controller_config),
        configmap_namespace=configmap_namespace(controller_config),
        secret=secret,
        monitoring=motor_service(settings.namespace, deploy.p_instances_num, deploy.d_instances_num)
        if settings.kv_cache_store_config is not None and settings.kv_cache_store_config.dashboards else None,
    )


def engine_pool_args(
    settings: ServiceSettings,
    side: str,
    workloads: Workloads,
    endpoint: KVStoreEndpoint | None,
    role_envs: Mapping[str, Mapping[str, Any]],
    motor_files: Mapping[str, str],
    secret: SecretEnv | None,
    storage: UCMStorage | None = None,
    running: frozenset[str] = frozenset(),
) -> EnginePoolArgs:
    """`running`: the side's instance names the stack ran before this update (none on a first deploy)."""
    deploy = settings.motor_deploy_config
    pods = deploy.engine_side(side)
    count = pods.instances
    names = [instance_name(side, index) for index in range(count)]
    wave_size = settings.rollout.wave_size(side, count)
    contract = dict(endpoint.engine_env) if endpoint else {}
    return EnginePoolArgs(
        side=side,
        namespace=settings.namespace,
        workloads=workloads,
        instances=count,
        pods_per_instance=pods.pods_per_instance,
        npus_per_pod=pods.npus_per_pod,
        hardware_type=deploy.hardware_type,
        image=deploy.image_name,
        weight_mount_path=deploy.weight_mount_path,
        log_host_dir=settings.host_log_dir("engine"),
        dshm_size=deploy.dshm_size,
        node_selector=pods.node_selector,
        scheduler_name=settings.pods.scheduler_name,
        scheduling_queue=deploy.scheduling_queue,
        resources=getattr(settings.pods, side),
        env=engine_env(settings, side, contract),
        kv_transfer_config=engine_kv_transfer_config(settings.user_config(), side),
        restart_inputs={
            "engine-config": engine_config_inputs(settings.user_config(), side),
            "motor-env": dict(role_envs[rules.engine_env_section(side)]),
            "motor-scripts": role_motor_files(motor_files, side, contract.get("KV_STORE_BACKEND")),
            "kv-client": dict(endpoint.client_files) if endpoint else None,
        },
        endpoint=endpoint,
        storage_volumes=tuple(storage.volumes) if storage else (),
        storage_mounts=tuple(storage.mounts) if storage else (),
        secret=secret,
        rollout_waves=tuple(tuple(wave) for wave in waves([name for name in names if name in running], wave_size)),
    )


def kv_conductor_env(settings: ServiceSettings, endpoint: KVStoreEndpoint | None) -> dict[str, Any]:
    """The KV conductor container's env past Motor's own entries."""
    master = kv_conductor.master_host(endpoint)
    return {
        **({"KVS_MASTER_SERVICE": master} if master else {}),  # deploy.py's kv_conductor.py sets it
        **settings.env.motor_common_env,
        **settings.env.motor_kv_conductor_env,
    }


def kv_conductor_args(
    settings: ServiceSettings,
    workloads: Workloads,
    endpoint: KVStoreEndpoint | None,
    role_envs: Mapping[str, Mapping[str, Any]],
    motor_files: Mapping[str, str],
    depends_on: tuple[pulumi.Resource, ...] = (),
) -> KVConductorArgs:
    """`role_envs`: role_env.script_envs(); `motor_files`: read_motor_files(); `depends_on`: what its Deployment waits for (ConfigMap motor-config)."""
    config = settings.kv_conductor_config
    if config is None:
        raise ValueError("KVConductor needs kv_conductor_config")
    followed_pool = endpoint if config.kvevent_instance is not None else None
    kv_conductor.check_env(settings.env.model_dump(mode="json"), workloads, endpoint)
    kv_conductor.check_pool_port(settings.kv_cache_store_config, followed_pool)
    user_config = settings.user_config()
    return KVConductorArgs(
        namespace=settings.namespace,
        workloads=workloads,
        image=settings.motor_deploy_config.image_name,
        port=Port(name="http", port=config.http_server_port),
        env=kv_conductor_env(settings, endpoint),
        restart_inputs={
            "motor-scripts": role_motor_files(motor_files, kv_conductor.BOOT_ROLE),
            "motor-env": role_envs.get(kv_conductor.ENV_SECTION),
            "kv-conductor-config": kv_conductor.conductor_config(
                user_config, endpoint, settings.motor_engine_prefill_config.engine_config.served_model_name
            ),
        },
        kv_event_ports=tuple(rules.kv_event_ports(user_config).values()),
        resources=settings.pods.kv_conductor,
        # check_pool_port made sure the pool's master listens where Motor's script points the conductor.
        followed_pool=followed_pool,
        depends_on=depends_on,
    )
