"""An engine container's memory limit holds its /dev/shm and its pod's pool memory.

The engine pods mount /dev/shm as an emptyDir of medium Memory sized motor_deploy_config.dshm_size
(kvpool/components/engine_pool.py). Kubernetes counts the files written to a memory-backed emptyDir against the
memory limit of the container that wrote them (the Volumes page, emptyDir; the API's EmptyDirVolumeSource.sizeLimit:
"The maximum usage on memory medium EmptyDir would be the minimum value between the SizeLimit specified here and the
sum of memory limits of all containers in a pod"), so a limit at or below dshm_size leaves vLLM and the KV pool
nothing once /dev/shm fills, and the kernel OOM-kills the engine. The pool memory the pod's ranks hold
(kvpool-configure-engine-pod-pool-memory: segments and local buffers, or the pod's store process or LocalService)
lives in the same container and is added as that rule sums it. A container without a memory limit is not checked:
its /dev/shm is bounded by dshm_size and the node alone."""

from __future__ import annotations

from typing import Any, Mapping

from .pool_sizing import bytes_text, engine_pod_pool_bytes
from .sections import DEFAULT_DSHM_SIZE, SIDES, Finding
from .units import K8S_QUANTITY, k8s_quantity_bytes


def _quantity_below(count: int) -> str | None:
    """The largest whole Gi (else Mi) strictly below `count` bytes; None below 1Mi."""
    gib, mib = (count - 1) // 2**30, (count - 1) // 2**20
    return f"{gib}Gi" if gib >= 1 else f"{mib}Mi" if mib >= 1 else None


def check_engine_memory_limit(
    user_config: Mapping[str, Any], engine_resources: Mapping[str, Any], owns_store: bool = True,
) -> list[Finding]:
    """Each side's engine container memory limit, where one is set, exceeds motor_deploy_config.dshm_size plus the pool
    memory one of its pods holds. `engine_resources`: side -> the engine container's `resources` as rendered
    (pods.<side> of the settings, the engine pods' in the pack). `owns_store` False: the pool's sizes are another
    stack's (target_stack), which check_engine_pod_memory reads there too, so /dev/shm alone is counted here."""
    deploy = user_config.get("motor_deploy_config")
    dshm = (deploy if isinstance(deploy, Mapping) else {}).get("dshm_size", DEFAULT_DSHM_SIZE)
    if not isinstance(dshm, str) or not K8S_QUANTITY.fullmatch(dshm):
        return []  # the settings model names a dshm_size that is no size
    pools = engine_pod_pool_bytes(user_config) if owns_store else {}
    findings = []
    for side in SIDES:
        limit = ((engine_resources.get(side) or {}).get("limits") or {}).get("memory")
        if not isinstance(limit, str) or not K8S_QUANTITY.fullmatch(limit):
            continue  # no limit: nothing to be OOM-killed against
        pool = pools.get(side, 0)
        needed = k8s_quantity_bytes(dshm) + pool
        if k8s_quantity_bytes(limit) > needed:
            continue
        setting = f"pods.{side}.limits.memory"
        wanted = f"{needed // 2**30 + 1}Gi"  # the smallest whole Gi above what /dev/shm and the pool take
        held = (f", plus the {bytes_text(pool)} of pool memory a {side} pod's ranks hold "
                f"(kvpool-configure-engine-pod-pool-memory) = {bytes_text(needed)}") if pool else ""
        lower = _quantity_below(k8s_quantity_bytes(limit) - pool)
        ways = f"raise {setting} to at least {wanted}" + (
            f", or lower motor_deploy_config.dshm_size to at most {lower}" if lower else "")
        findings.append(Finding(setting, (
            f"is {limit}, not above the {side} engine's /dev/shm (motor_deploy_config.dshm_size {dshm}), a "
            f"memory-backed emptyDir Kubernetes counts against the container's memory limit{held}: the engine is "
            f"OOM-killed once vLLM and the KV pool fill /dev/shm; {ways}."), example=wanted))
    return findings
