"""The names a store's clients dial, from the store's namespace, deploy mode and the cluster's DNS domain alone.

The owner builds its `kv_store` endpoint with these functions, and a consumer recomputes them from the owner's
namespace and its own cluster domain (kvpool/components/kv_store/contract.py): an owner's output cannot name another
host, because a consumer never takes a host from it.
"""

from __future__ import annotations

from kvpool.components.kv_store.common import COMPONENT, STORE_NAME, STORE_SERVICE
from kvpool.components.kv_store.etcd import peers_service
from kvpool.components.workloads import Workloads
from kvpool.policies import rules


def store_host(backend: str, workloads: Workloads) -> str:
    """The contract's `host`: the store Service's FQDN (CRD-prefixed in a service set); for a backend whose engines
    reach their own node's worker (Yuanrong), the ring's etcd peers Service."""
    if rules.BACKENDS[backend].node_workers:
        return workloads.fqdn(peers_service(STORE_NAME))
    return workloads.service_host(STORE_SERVICE, COMPONENT)
