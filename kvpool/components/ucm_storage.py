"""UCMStorage: motor_deploy_config.storage[] as volumes for the prefill pods (UCM's Posix tier).

A new PVC per `pvc` entry with a storage class, an existing claim, NFS or hostPath; names are deploy.py's
(`mindie-motor-store-<index>`, lib/generator/storage.py). Decode never mounts them: it never loads UCM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.internal.child_names import ChildNames
from kvpool.internal.labels import common_labels
from kvpool.settings.deploy import HostPathStorage, NfsStorage, PvcStorage, StorageEntry

TYPE = "kvpool:index:UCMStorage"
DEFAULT_NAME = "ucm-storage"  # kvpool.program's name for it


def volume_name(index: int) -> str:
    return f"mindie-motor-store-{index}"


def _volume_source(index: int, entry: PvcStorage | NfsStorage | HostPathStorage) -> dict[str, Any]:
    if isinstance(entry, PvcStorage):
        claim = entry.claim_name or volume_name(index)
        return {"persistentVolumeClaim": {"claimName": claim, "readOnly": entry.read_only}}
    if isinstance(entry, NfsStorage):
        return {"nfs": {"server": entry.server, "path": entry.path, "readOnly": entry.read_only}}
    return {"hostPath": {"path": entry.path, **({"type": entry.host_path_type} if entry.host_path_type else {})}}


@dataclass(frozen=True, kw_only=True)
class UCMStorageArgs:
    namespace: str
    entries: tuple[StorageEntry, ...]  # motor_deploy_config.storage, in order (the index names the volume)


class UCMStorage(pulumi.ComponentResource):
    claims: list[k8s.core.v1.PersistentVolumeClaim]
    volumes: list[dict[str, Any]]
    mounts: list[dict[str, Any]]

    def __init__(self, name: str, args: UCMStorageArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        namespace = args.namespace
        names = ChildNames.of(name, DEFAULT_NAME, opts)
        self.claims, self.volumes, self.mounts = [], [], []
        for index, entry in enumerate(args.entries):
            if not entry.enable:
                continue
            if isinstance(entry, PvcStorage) and entry.storage_class_name:
                self.claims.append(
                    k8s.core.v1.PersistentVolumeClaim(
                        names.name(volume_name(index)),
                        metadata={
                            "name": volume_name(index),
                            "namespace": namespace,
                            "labels": common_labels(namespace, "ucm-storage", volume_name(index)),
                        },
                        spec={
                            "storageClassName": entry.storage_class_name,
                            "accessModes": [entry.access_mode],
                            "resources": {"requests": {"storage": entry.size}},
                        },
                        opts=names.opts(volume_name(index), pulumi.ResourceOptions(parent=self)),
                    )
                )
            self.volumes.append({"name": volume_name(index), **_volume_source(index, entry)})
            self.mounts.append({"name": volume_name(index), "mountPath": entry.mount_path, "readOnly": entry.read_only})
        self.register_outputs({"claims": self.claims, "volumes": [volume["name"] for volume in self.volumes]})
