"""KVStore: the KV pool's server side for one backend. The component only decides the shared context and
dispatches to the backend's module; `endpoint` is what engines need to connect."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pulumi

from components.hardware import engine_node_selector
from components.kv_store import memcache, mooncake, yuanrong
from components.kv_store.common import StoreContext
from components.kv_store.compatibility import compatibility
from components.kv_store.endpoint import KVStoreEndpoint
from components.motor_env import env_text
from components.workloads import Workloads
from components.settings import MemcacheStoreConfig, MooncakeStoreConfig, ServiceSettings, YuanrongStoreConfig

TYPE = "kvpool:index:KVStore"


class KVStore(pulumi.ComponentResource):
    endpoint: KVStoreEndpoint

    def __init__(
        self,
        name: str,
        settings: ServiceSettings,
        workloads: Workloads,
        project_dir: Path,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(TYPE, name, None, opts)
        store = settings.kv_cache_store_config
        deploy = settings.motor_deploy_config
        if store is None:
            raise ValueError("KVStore needs kv_cache_store_config; ServiceSettings.kv_store_wanted says when")
        ctx = StoreContext(
            namespace=settings.namespace,
            workloads=workloads,
            image=store.image or deploy.image_name,
            hardware_type=deploy.hardware_type,
            labels=dict(store.additional_labels),
            annotations=dict(store.additional_annotations),
            node_selector=dict(deploy.kv_pool_node_selector),
            engine_node_labels=engine_node_selector(deploy.hardware_type, deploy.accelerator_type),
            resources=store.resources,
            parent=self,
            protect=store.protect,
            retain_on_delete=store.retain_on_delete,
            allowed_consumers=tuple(store.allowed_consumers),
            metrics_scraper_namespaces=tuple(store.metrics_scraper_namespaces),
            env={name: env_text(value) for name, value in settings.env.motor_kv_cache_store_env.items()},
        )
        if isinstance(store, MooncakeStoreConfig):
            self.endpoint = mooncake.build(ctx, store)
        elif isinstance(store, MemcacheStoreConfig):
            self.endpoint = memcache.build(ctx, store, project_dir)
        else:
            assert isinstance(store, YuanrongStoreConfig)
            self.endpoint = yuanrong.build(ctx, store)
        self.endpoint = replace(
            self.endpoint, allowed_consumers=list(store.allowed_consumers), compatibility=compatibility(settings)
        )
        self.register_outputs({"endpoint": asdict(self.endpoint)})
