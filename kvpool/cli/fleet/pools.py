"""Whether each KV pool of the fleet has a ready store behind it, read through a kubeconfig (`kvpool fleet
--kubeconfig FILE`): in the context of the owner's cluster (kvpool/cli/fleet/nodes.py cluster_contexts), the
Endpoints of the Service the owner's `kv_store` output names (endpoint.py store_service: what a consumer's `pulumi
up` reads, shared.py store_serves) and the workload behind it.

- Mooncake, MemCache: the store Service's ready addresses are what a consumer's engines dial, so they decide; in
  multi_deployment the store's Deployment is read too (available of its replicas; in a service set the operator
  owns the workload, and only the Service is read). In Mooncake's standalone mode that Deployment is the master:
  the store processes Motor's node manager starts inside the engine pods are not counted here.
- Yuanrong: the Service is the etcd peers' headless one, which publishes not-ready members too, so its addresses
  say nothing of the store; the engines reach their own node's datasystem worker, so the worker DaemonSet's ready
  pods decide (every node it is scheduled on: fewer is a pool some engines cannot reach).

A Service or workload that is not there (404) is a finding about that pool; a refused read (403, ...) is an
error naming the kubeconfig and the context, as the node list's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kubernetes.client import ApiClient, AppsV1Api, CoreV1Api

from kvpool.cli.fleet.model import PoolReadiness, StackFacts, owner_endpoints
from kvpool.cli.fleet.nodes import REQUEST_TIMEOUT_SECONDS, cluster_contexts, read
from kvpool.components.kv_store.common import STORE_NAME
from kvpool.components.kv_store.endpoint import KVStoreEndpoint, store_service, store_workers


def pool_readiness(kubeconfig: Path, all_facts: Sequence[StackFacts]) -> list[PoolReadiness]:
    """Each owner's store, by reference, as its cluster has it."""
    endpoints = owner_endpoints(all_facts)
    clusters = {facts.reference: facts.settings.cluster for facts in all_facts}
    contexts = cluster_contexts(kubeconfig, {clusters[owner] for owner in endpoints})
    return [_read_pool(kubeconfig, contexts[clusters[owner]], owner, clusters[owner], endpoint)
            for owner, endpoint in endpoints.items()]


def addresses(endpoints: Mapping[str, Any] | None) -> tuple[int | None, int]:
    """(ready, not ready) addresses of an Endpoints object as the API server returns it; None: it is not there."""
    if endpoints is None:
        return None, 0
    subsets = endpoints.get("subsets") or []
    return (sum(len(subset.get("addresses") or []) for subset in subsets),
            sum(len(subset.get("notReadyAddresses") or []) for subset in subsets))


def _workload(endpoint: KVStoreEndpoint) -> tuple[str, str] | None:
    """(kind, name) of the workload behind the store, when this stack renders it as such."""
    if workers := store_workers(endpoint):
        return "DaemonSet", workers[1]
    if endpoint.deploy_mode == "multi_deployment":
        return "Deployment", STORE_NAME
    return None  # a service set: the operator's workload, named by it


def _read_pool(kubeconfig: Path, context: str | None, owner: str, cluster: str,
               endpoint: KVStoreEndpoint | None) -> PoolReadiness:
    if context is None:
        return PoolReadiness(owner, cluster, None, unread=(
            f"the kubeconfig has no context {cluster!r} (the stacks' top-level setting `cluster` names the context to "
            "read)"))
    if endpoint is None:
        return PoolReadiness(owner, cluster, context, unread="its kv_store output is not a usable endpoint")
    namespace, service = store_service(endpoint)

    def get(kind: str, name: str, reader: Callable[[ApiClient], Callable[..., Any]]) -> Any:
        """The object `kind` `name` of the owner's namespace as JSON; None when it is not there."""
        what = f"the {kind} {namespace}/{name}"
        return read(kubeconfig, context, f"reading {what}", f"read {what}", lambda client: reader(client)(
            name, namespace, _preload_content=False, _request_timeout=REQUEST_TIMEOUT_SECONDS), missing=True)

    ready, not_ready = addresses(get("Endpoints", service, lambda client: CoreV1Api(client).read_namespaced_endpoints))
    serves = bool(ready)
    workload, available, desired = None, None, 0
    found = _workload(endpoint)
    if found is not None:
        kind, name = found
        workload = f"{kind} {name}"
        if kind == "DaemonSet":
            status = (get(kind, name, lambda client: AppsV1Api(client).read_namespaced_daemon_set) or {}).get("status")
            if status is not None:
                available, desired = status.get("numberReady") or 0, status.get("desiredNumberScheduled") or 0
            serves = bool(available)  # the etcd peers' addresses count members that are not ready
        else:
            deployment = get(kind, name, lambda client: AppsV1Api(client).read_namespaced_deployment)
            if deployment is not None:
                available = (deployment.get("status") or {}).get("availableReplicas") or 0
                desired = (deployment.get("spec") or {}).get("replicas", 1)
    return PoolReadiness(owner, cluster, context, namespace, service, ready, not_ready, workload, available, desired,
                         serves)
