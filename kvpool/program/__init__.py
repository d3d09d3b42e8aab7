"""The stack: settings -> namespace -> KV store (own, or another stack's) -> UCMStorage -> ControlPlane ->
EnginePools -> outputs. A project's `__main__.py` calls `run()` (the settings from the stack's configuration) or
`run(settings)` (settings it builds itself).

Before building, the program reads what it must know from stacks (awaited in a `pulumi.run` entry point, so every
resource is then built at top level): the owner's store contract (`target_stack`), and this stack's own last
`engines` output, which says which engine instances run and so roll in waves (kvpool/internal/rollout.py)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components import control_plane, kv_conductor, ucm_storage
from kvpool.components.control_plane import ControlPlane
from kvpool.components.engine_pool import EnginePool
from kvpool.components.kv_conductor import KVConductor
from kvpool.components.kv_conductor import service_host as conductor_host
from kvpool.components.kv_store import component as kv_store
from kvpool.components.kv_store.client import (
    CLIENT_CONFIG_MAP,
    CLIENT_EGRESS_POLICY,
    kv_client_config_map,
    kv_client_egress_policy,
)
from kvpool.components.kv_store.component import KVStore
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.ucm_storage import UCMStorage
from kvpool.components.workloads import ISS_NAME, Workloads
from kvpool.errors import user_errors_as_run_errors
from kvpool.internal.child_names import renamed_from
from kvpool.internal.hardware import engine_node_selector
from kvpool.internal.labels import instance_name
from kvpool.internal.motor_config import MOTOR_CONFIG_NAME, read_motor_files
from kvpool.internal.motor_pod import COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE
from kvpool.internal.rollout import ENGINES_OUTPUT, ROLLOUT_OUTPUT, previous_instances
from kvpool.internal.secret_env import SECRET_NAME, secret_env
from kvpool.policies import rules
from kvpool.program.args import (
    control_plane_args,
    engine_pool_args,
    kv_conductor_args,
    kv_store_args,
    ucm_storage_args,
)
from kvpool.program.role_env import script_envs
from kvpool.program.shared_store import shared_store
from kvpool.settings.from_stack import SECRET_ENV_KEY, read_stack_settings
from kvpool.settings.namespace import PROJECT
from kvpool.settings.service import ServiceSettings


def stack_name() -> str:
    return f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"


def part_name(service: str | None, part: str) -> str:
    """The Pulumi name of a part (a component, an object of the service's own) of the service named `service` in a
    program that builds several; None: a program's only service, whose parts keep the names they always had."""
    return part if service is None else f"{service}-{part}"


def part_options(service: str | None, part: str, opts: pulumi.ResourceOptions | None,
                 renamed: bool) -> pulumi.ResourceOptions | None:
    """`opts` for the part `part` of the service named `service`; `renamed`: with the part's name from before the
    service was named (`part`) as its alias, which also gives its children their old names
    (kvpool/internal/child_names.py)."""
    return renamed_from(part if renamed and service is not None else None, opts)


def build(
    settings: ServiceSettings,
    project_dir: Path,
    shared: KVStoreEndpoint | None = None,
    previous: Mapping[str, Any] | None = None,
    opts: pulumi.ResourceOptions | None = None,
    name: str | None = None,
    renamed: bool = False,
) -> dict[str, Any]:
    """The whole service, its resources under `opts` (e.g. a parent); returns the stack's outputs, which run()
    exports. `shared` is the checked store contract of `target_stack`, when another stack owns it; `previous`: this
    stack's outputs as its last update left them (none before the first); `name`: what the service's parts are named
    after (part_name) when one program builds several services; `renamed`: the parts had the names of a program's
    only service before they were named after `name` (the component package's Service up to 0.3.0), and keep them
    as aliases (part_options)."""
    outputs: dict[str, Any] = {}
    if settings.create_namespace:
        namespace = k8s.core.v1.Namespace(
            settings.namespace, metadata=k8s.meta.v1.ObjectMetaArgs(name=settings.namespace), opts=opts
        )
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[namespace]))
    deploy = settings.motor_deploy_config
    workloads = Workloads(settings.namespace, deploy.deploy_mode, settings.cluster_domain)
    store = settings.kv_cache_store_config
    if shared is not None:
        # Another stack owns the store: nothing of it is created here.
        build_service(settings, project_dir, workloads, shared, opts, previous, name, renamed, owns_store=False)
        outputs["kv_store_source"] = store.target_stack
    elif settings.kv_store_wanted:
        endpoint = KVStore(part_name(name, kv_store.DEFAULT_NAME), kv_store_args(settings, workloads, project_dir),
                           part_options(name, kv_store.DEFAULT_NAME, opts, renamed)).endpoint
        outputs["kv_store"] = endpoint.as_output(stack_name(), settings.cluster)
        build_service(settings, project_dir, workloads, endpoint, opts, previous, name, renamed, owns_store=True)
    else:
        build_service(settings, project_dir, workloads, None, opts, previous, name, renamed, owns_store=False)
    outputs["namespace"] = settings.namespace
    outputs["deploy_mode"] = deploy.deploy_mode
    outputs["motor_config"] = f"{settings.namespace}/{MOTOR_CONFIG_NAME}"
    coordinator = {"service": workloads.service_host(COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE)}
    if deploy.coordinator_infer_node_port is not None:  # a ClusterIP Service has none to tell
        coordinator["node_port"] = deploy.coordinator_infer_node_port
    outputs["coordinator"] = coordinator
    if settings.kv_conductor_config is not None:
        outputs["kv_conductor"] = {"service": conductor_host(workloads),
                                   "port": settings.kv_conductor_config.http_server_port}
    # deploy.py finds these on the cluster's nodes; here the preview says what the engine nodes must carry.
    outputs["engine_node_labels"] = engine_node_selector(deploy.hardware_type, deploy.accelerator_type)
    outputs[ENGINES_OUTPUT] = engine_instances(settings)
    if not workloads.is_service_set:  # the operator rolls a service set's instances
        outputs[ROLLOUT_OUTPUT] = {
            side: {"max_unavailable_instances": settings.rollout.wave_size(side, len(names))}
            for side, names in outputs[ENGINES_OUTPUT].items()
        }
    return outputs


def engine_instances(settings: ServiceSettings) -> dict[str, list[str]]:
    """The engine instances of each side (the `engines` output)."""
    deploy = settings.motor_deploy_config
    counts = {"prefill": deploy.p_instances_num, "decode": deploy.d_instances_num}
    return {side: [instance_name(side, index) for index in range(count)] for side, count in counts.items()}


def build_service(
    settings: ServiceSettings,
    project_dir: Path,
    workloads: Workloads,
    endpoint: KVStoreEndpoint | None,
    opts: pulumi.ResourceOptions | None,
    previous: Mapping[str, Any] | None,
    name: str | None,
    renamed: bool,
    *,
    owns_store: bool,
) -> None:
    """Everything that uses the store: its client files, the control plane and the engines."""

    def part(kind: str) -> tuple[str, pulumi.ResourceOptions | None]:
        return part_name(name, kind), part_options(name, kind, opts, renamed)

    if endpoint is not None:
        config_map, config_map_opts = part(CLIENT_CONFIG_MAP)
        kv_client_config_map(endpoint, settings.namespace, config_map_opts, config_map)
        if not owns_store:
            policy, policy_opts = part(CLIENT_EGRESS_POLICY)
            kv_client_egress_policy(endpoint, settings.namespace, policy_opts, policy)
    secret_name, secret_opts = part(SECRET_NAME)
    secret = secret_env(settings.namespace, secret_opts, PROJECT, SECRET_ENV_KEY, secret_name)
    contract = dict(endpoint.engine_env) if endpoint else {}
    role_envs = script_envs(settings, contract)
    user_config = settings.user_config()
    for finding in [
        *rules.check_cann_install_path(role_envs), *rules.check_max_model_len(user_config),
        *rules.check_pool_readers(rules.kv_transfer_configs(user_config), owns_store and endpoint is not None),
        *rules.check_ucm_wheel(user_config), *rules.check_mooncake_protocol(user_config),
    ]:
        pulumi.log.warn(str(finding))
    motor_files = read_motor_files(settings.motor_deployer_dir, project_dir)
    storage_name, storage_opts = part(ucm_storage.DEFAULT_NAME)
    storage = (UCMStorage(storage_name, ucm_storage_args(settings), storage_opts)
               if settings.motor_deploy_config.storage else None)
    motor_name, motor_opts = part(control_plane.DEFAULT_NAME)
    motor = ControlPlane(motor_name, control_plane_args(settings, workloads, endpoint, motor_files, role_envs, secret),
                         motor_opts)
    for side in ("prefill", "decode"):
        side_storage = storage if side == "prefill" else None  # decode never loads UCM
        running = frozenset(previous_instances(previous, side))
        pool, pool_opts = part(side)
        EnginePool(pool, engine_pool_args(settings, side, workloads, endpoint, role_envs, motor_files, secret,
                                          side_storage, running), pool_opts)
    if settings.kv_conductor_config is not None:
        conductor, conductor_opts = part(kv_conductor.DEFAULT_NAME)
        KVConductor(conductor, kv_conductor_args(settings, workloads, endpoint, role_envs, motor_files,
                                                 (motor.motor_config,)), conductor_opts)
    # In a service set the store's Deployment and Service live inside the InferServiceSet: protect it with the store.
    owned = settings.kv_cache_store_config if owns_store else None
    workloads.finish(
        part_name(name, ISS_NAME),
        pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
            depends_on=[motor.motor_config],
            protect=bool(owned and owned.protect),
            retain_on_delete=bool(owned and owned.retain_on_delete),
        )),
        part_options(name, ISS_NAME, None, renamed),
    )


def _leave_quietly(*_: object) -> None:
    # The engine interrupts the program (SIGINT) when it fails the update under it, e.g. on a StackReference to a
    # stack the backend does not know or a read of an object the cluster does not have, and has printed why: leave
    # without a Python traceback. The language host and then the CLI (stopping the host's process group) each send
    # one, so the second is ignored. No finalizer runs: the SDK's, on its unfinished stack coroutine, needs the
    # event loop this exit leaves and would print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(1)


def run(settings: ServiceSettings | None = None) -> None:
    """The whole stack, from `settings`, or from the stack's configuration when none are given: what a project's
    `__main__.py` calls."""
    signal.signal(signal.SIGINT, _leave_quietly)
    with user_errors_as_run_errors():
        if settings is None:
            settings = read_stack_settings()
        # What other stacks and this stack's last update say is read first, then the stack is built at top level,
        # so every resource shows in preview (a consumer's too).
        pulumi.run(lambda: build_after_reading_stacks(settings, Path.cwd()))


async def build_after_reading_stacks(settings: ServiceSettings, project_dir: Path) -> None:
    with user_errors_as_run_errors():
        store = settings.kv_cache_store_config
        shared = await shared_store(settings, stack_name()) if store is not None and store.target_stack else None
        service_set = settings.motor_deploy_config.deploy_mode == "infer_service_set"
        outputs = build(settings, project_dir, shared, None if service_set else await own_previous_outputs())
        for name, value in outputs.items():
            pulumi.export(name, value)


async def own_previous_outputs() -> dict[str, Any]:
    """This stack's outputs as its last update left them, read through a StackReference to itself (the engine
    reads a stack's last checkpoint; empty before the first update). Only `engines` is read."""
    details = await pulumi.StackReference(stack_name()).get_output_details(ENGINES_OUTPUT)
    return {ENGINES_OUTPUT: details.value} if details.value is not None else {}
