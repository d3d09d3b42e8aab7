"""UCM: UCMConnector only as prefill's connectors[1], its storage on a mounted volume that fits, its cache in /dev/shm."""

from __future__ import annotations

import math
from typing import Any, Mapping

from .sections import (
    MULTI_CONNECTOR,
    SIDES,
    UCM_CONNECTOR,
    Finding,
    connectors_of,
    kv_transfer_path,
)
from .units import k8s_quantity_bytes

# The Posix budget suggested for a volume: any budget below it passes; a tenth of headroom lets the garbage
# collector run before the volume fills.
POSIX_SHARE_OF_VOLUME = 0.9


def check_ucm_wheel(user_config: Mapping[str, Any]) -> list[Finding]:
    """UCMConnector is imported from the UCM wheel, which Motor's images do not carry (seed 000: prepare the UCM
    wheel): where UCM is used and the image's name does not say it holds UCM, the plan asks to make sure."""
    image = (user_config.get("motor_deploy_config") or {}).get("image_name")
    if not isinstance(image, str) or "ucm" in image.lower():
        return []
    for side in SIDES:
        kv = ((user_config.get(f"motor_engine_{side}_config") or {}).get("engine_config") or {}).get("kv_transfer_config")
        for suffix, connector in connectors_of(kv):
            if connector.get("kv_connector") == UCM_CONNECTOR:
                module = connector.get("kv_connector_module_path") or "ucm.integration.vllm.ucm_connector"
                return [Finding(
                    kv_transfer_path(side) + suffix + ".kv_connector",
                    f"UCMConnector is imported from {module}, which only the UCM wheel installs (seed 000: UCM needs "
                    f"its wheel in the engine image), and image {image!r} does not name UCM: make sure the image "
                    f"installs it (pip install of the UCM wheel in its Dockerfile), or vLLM fails at start.",
                )]
    return []


def check_ucm_placement(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """UCMConnector only on prefill, only as connectors[1] of a MultiConnector (seed 000 UCM section; Motor
    refuses it at connectors[0] and as a bare connector); decode never loads UCM."""
    findings = []
    for side in SIDES:
        config = kv_transfer_configs.get(side)
        for position, (suffix, connector) in enumerate(connectors_of(config)):
            if connector.get("kv_connector") != UCM_CONNECTOR:
                continue
            path = kv_transfer_path(side) + suffix + ".kv_connector"
            if side == "decode":
                findings.append(Finding(path, "UCMConnector on decode: in Motor's P/D scheme decode never loads UCM "
                                              "(seed 000); remove it and keep only the transfer connector."))
            elif config.get("kv_connector") != MULTI_CONNECTOR or position != 1:
                findings.append(Finding(path, "UCMConnector must be connectors[1] of a MultiConnector whose "
                                              "connectors[0] is the Mooncake transfer connector (seed 000)."))
    return findings


def ucm_store_configs(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(path, ucm_connector_config) of every UCM store of one side's UCMConnector."""
    found = []
    for suffix, connector in connectors_of(kv_transfer_config):
        if connector.get("kv_connector") != UCM_CONNECTOR:
            continue
        extra = connector.get("kv_connector_extra_config") or {}
        for index, store in enumerate(extra.get("ucm_connectors") or []):
            if isinstance(store, Mapping):
                path = f"{suffix}.kv_connector_extra_config.ucm_connectors[{index}].ucm_connector_config"
                found.append((path, store.get("ucm_connector_config") or {}))
    return found


def check_ucm_storage(
    prefill_kv: Mapping[str, Any] | None, storage: list[Mapping[str, Any]], dshm_size: str
) -> list[Finding]:
    """UCM's Posix tier writes to storage_backends, which must be a mounted storage[] volume; its Cache tier
    lives in /dev/shm, which must be larger; the Posix budget must fit the volume (motor-deployer.md §4)."""
    findings = []
    mounts = {entry.get("mount_path"): entry for entry in storage if entry.get("enable", True)}
    for suffix, config in ucm_store_configs(prefill_kv):
        path = kv_transfer_path("prefill") + suffix
        backends = [part for part in str(config.get("storage_backends", "")).split(":") if part]
        for backend in backends:
            if backend not in mounts:
                known = ", ".join(sorted(str(m) for m in mounts)) or "none"
                findings.append(Finding(
                    f"{path}.storage_backends",
                    f"{backend!r} is not the mount_path of a motor_deploy_config.storage entry (mounted: {known}); "
                    f"UCM would write into the container's own filesystem. Add a storage entry with mount_path "
                    f"{backend!r} or point storage_backends at one.",
                ))
        cache_gb = config.get("cache_buffer_capacity_gb")
        if isinstance(cache_gb, (int, float)) and k8s_quantity_bytes(dshm_size) <= cache_gb * 2**30:
            findings.append(Finding(
                "motor_deploy_config.dshm_size",
                f"is {dshm_size} but UCM's cache_buffer_capacity_gb is {cache_gb} GiB and lives in /dev/shm; "
                f"set dshm_size above it, e.g. {math.ceil(cache_gb * 1.25) + 1}Gi.",
            ))
        posix_gb = config.get("posix_capacity_gb")
        sizes = [mounts[b].get("size") for b in backends if b in mounts and mounts[b].get("size")]
        for size in sizes:
            if isinstance(posix_gb, (int, float)) and posix_gb * 2**30 >= k8s_quantity_bytes(size):
                below = math.floor(k8s_quantity_bytes(size) * POSIX_SHARE_OF_VOLUME / 2**30)
                findings.append(Finding(
                    f"{path}.posix_capacity_gb",
                    f"is {posix_gb} GiB but the volume it writes to is {size}; keep it below the volume size "
                    f"so UCM's garbage collection runs before the volume is full, e.g. {below}.",
                    example=below,
                ))
    return findings
