"""Whether another stack's store serves: the consumer reads the owner's store Service from the cluster before its
engines are rolled onto it. The consumer's reading of the owner's `kv_store` output (its contract checks) is the
wiring's: kvpool/program/shared_store.py."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.kv_store.contract import OUTPUT
from kvpool.components.kv_store.endpoint import KVStoreEndpoint, store_service, store_workers
from kvpool.errors import KvpoolError


class SharedStoreError(KvpoolError):
    """The target stack's store cannot be used by this service."""


async def store_serves(endpoint: KVStoreEndpoint, own: str, target: str) -> None:
    """The Service the engines will dial (the owner's `host`) has a ready pod behind it, read from the cluster as its
    Endpoints (and, for Yuanrong, its workers' DaemonSet): `pulumi up` refuses a deleted, scaled-to-0 or
    crash-looping store before any engine of this service is rolled onto it, and a preview warns. The preview reads
    it as well, so that the read is in every plan: a preview after an up shows no discard of it. A missing Service
    fails the read itself, naming it. The offline preview reads nothing from a cluster: its read comes back unknown,
    and it says so."""
    namespace, service = store_service(endpoint)
    live = k8s.core.v1.Endpoints.get(f"{OUTPUT}-of-{target.replace('/', '-')}", f"{namespace}/{service}")
    if not await live.metadata.is_known():
        pulumi.log.info(f"{target}'s KV store is read from its outputs only, not from the cluster: whether a pod of "
                        f"it is ready is checked by `pulumi preview` (a warning) and `pulumi up` (a refusal)")
        return
    subsets = await live.subsets.future() or []  # a preview reads an absent `subsets` (no pod at all) as unknown
    ready = sum(len(subset.addresses or []) for subset in subsets)
    waiting = sum(len(subset.not_ready_addresses or []) for subset in subsets)
    problem = None
    if not ready:
        problem = (f"{target}'s store Service {namespace}/{service} has no ready pod behind it ({waiting} not "
                   f"ready): the store is scaled to 0, crash-looping or still starting")
    elif workers := store_workers(endpoint):
        daemon_set = k8s.apps.v1.DaemonSet.get(f"{OUTPUT}-workers-of-{target.replace('/', '-')}", "/".join(workers))
        status = await daemon_set.status.future()
        if not (status and status.number_ready):
            scheduled = status.desired_number_scheduled if status else 0
            problem = (f"{target}'s store workers, DaemonSet {'/'.join(workers)}, have no ready pod ({scheduled} "
                       f"scheduled): no engine node has a worker to serve it")
    if problem is None:
        return
    fix = f"Bring it back (`pulumi up` on {target}; kubectl -n {namespace} get pods), then run `pulumi up` again."
    if pulumi.runtime.is_dry_run():
        pulumi.log.warn(f"kv_cache_store_config.target_stack: {problem}; `pulumi up` of {own} will refuse it. {fix}")
        return
    raise SharedStoreError(f"{own} cannot use the KV store of {target}:\n  - kv_cache_store_config.target_stack: "
                           f"{problem}. {fix}")
