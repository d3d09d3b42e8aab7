"""Each backend's rendering by its name (kv_cache_store_config.backend): the one lookup KVStore, the client side and
the fleet dispatch through. The backend's plain facts are kvpool/policies/rules/backends.py's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from kvpool.components.kv_store import memcache, mooncake, yuanrong
from kvpool.components.kv_store.common import StoreContext
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.policies import rules


@dataclass(frozen=True, kw_only=True)
class Renderer:
    # (context, the backend's store settings, component.KVStoreArgs) -> the endpoint; its objects go to ctx
    build: Callable[[StoreContext, Any, Any], KVStoreEndpoint]
    # The ports of the store's namespace that the endpoint's client files name, besides its port and metrics_port.
    client_ports: Callable[[KVStoreEndpoint], Iterable[int]]
    # (endpoint, the reading stack's kv_cache_store_config, its rules.PoolSizing) -> the pool memory one store process of its engines holds (None: not
    # known), and whether every engine rank runs one (else one per pod): what `kvpool fleet` adds up.
    pool_bytes_per_process: Callable[[KVStoreEndpoint, Any, rules.PoolSizing | None], tuple[int | None, bool]]


RENDERERS: dict[str, Renderer] = {
    rules.MOONCAKE.name: Renderer(build=lambda ctx, store, args: mooncake.build(ctx, store, args.sizing),
                                  client_ports=mooncake.client_ports,
                                  pool_bytes_per_process=mooncake.pool_bytes_per_process),
    rules.MEMCACHE.name: Renderer(build=lambda ctx, store, args: memcache.build(ctx, store, args.project_dir),
                                  client_ports=memcache.client_ports,
                                  pool_bytes_per_process=memcache.pool_bytes_per_process),
    rules.YUANRONG.name: Renderer(build=lambda ctx, store, args: yuanrong.build(ctx, store),
                                  # no client file, and each node's datasystem worker holds the memory, not the
                                  # engines
                                  client_ports=lambda endpoint: (),
                                  pool_bytes_per_process=lambda endpoint, store, sizing: (0, False)),
}
