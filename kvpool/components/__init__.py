"""The Pulumi components a service is made of, each with its typed arguments:

    from kvpool.components import KVStore, KVStoreArgs, EnginePool, EnginePoolArgs, UCMStorage, UCMStorageArgs,
                                   ControlPlane, ControlPlaneArgs, KVConductor, KVConductorArgs, ServiceSet, Workloads

A component reads its own arguments only; kvpool.program.args builds each one's arguments from ServiceSettings
(`kv_store_args(settings, workloads, project_dir)`, `ucm_storage_args(settings)`, ...), the way kvpool.program wires a
service."""

from kvpool.components.control_plane import ControlPlane, ControlPlaneArgs, MotorRoleArgs
from kvpool.components.engine_pool import EnginePool, EnginePoolArgs
from kvpool.components.kv_conductor import KVConductor, KVConductorArgs
from kvpool.components.kv_store.component import KVStore, KVStoreArgs
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.ucm_storage import UCMStorage, UCMStorageArgs
from kvpool.components.workloads import ServiceSet, Workloads

__all__ = [
    "ControlPlane", "ControlPlaneArgs", "EnginePool", "EnginePoolArgs", "KVConductor", "KVConductorArgs", "KVStore",
    "KVStoreArgs", "KVStoreEndpoint", "MotorRoleArgs", "ServiceSet", "UCMStorage", "UCMStorageArgs", "Workloads",
]
