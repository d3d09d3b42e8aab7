"""KVStore: the KV pool's server side for one backend. The component only decides the shared context and
dispatches to the backend's module (registry.renderer); `endpoint` is what engines need to connect."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import pulumi

from kvpool.components.kv_store.common import StoreContext
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.registry import renderer
from kvpool.components.workloads import Workloads
from kvpool.internal.child_names import ChildNames
from kvpool.policies import rules
from kvpool.settings.pods import ContainerResources
from kvpool.settings.store import StoreConfig

TYPE = "kvpool:index:KVStore"
DEFAULT_NAME = "kv-store"  # kvpool.program's name for it


@dataclass(frozen=True, kw_only=True)
class KVStoreArgs:
    """Everything the store is rendered from (kvpool/program/args.py builds it from the settings); the fields
    named as StoreContext's become the backends' context."""

    store: StoreConfig
    namespace: str
    workloads: Workloads
    image: str
    hardware_type: str
    labels: dict[str, str]  # the user's additional labels
    annotations: dict[str, str]
    node_selector: dict[str, str]
    engine_node_labels: dict[str, str]
    resources: ContainerResources
    protect: bool
    retain_on_delete: bool
    allowed_consumers: tuple[str, ...]
    metrics_scraper_namespaces: tuple[str, ...]
    env: dict[str, str]  # env.json's motor_kv_cache_store_env
    project_dir: Path  # where a stack's own files (local_service_conf) are read from
    compatibility: dict[str, Any]  # what a consumer must agree on (kvpool/program/compatibility.py)
    # The pool as this service's engines write it, for the alert that compares eviction with it; None without
    # dashboards, and where other services' engines write too (allowed_consumers), which this program cannot see.
    sizing: rules.PoolSizing | None = None


class KVStore(pulumi.ComponentResource):
    endpoint: KVStoreEndpoint
    # Every Kubernetes object of the store, in creation order (empty of workloads in a service set, whose
    # operator creates them).
    children: list[pulumi.Resource]

    def __init__(self, name: str, args: KVStoreArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(TYPE, name, None, opts)
        context = {f.name: getattr(args, f.name) for f in fields(StoreContext) if hasattr(args, f.name)}
        ctx = StoreContext(**context, parent=self, names=ChildNames.of(name, DEFAULT_NAME, opts))
        store = args.store
        endpoint = renderer(store.backend).build(ctx, store, args)
        self.endpoint = replace(endpoint, allowed_consumers=list(store.allowed_consumers), compatibility=args.compatibility)
        self.children = ctx.children
        self.register_outputs({"endpoint": asdict(self.endpoint), "children": self.children})
