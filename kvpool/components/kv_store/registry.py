"""Each backend's rendering by its name (kv_cache_store_config.backend): the one lookup KVStore, the client side and
the fleet dispatch through. A backend's module is kvpool/components/kv_store/<name>.py for every name of
rules.BACKENDS, and its RENDERER is what the lookup returns: the module is found by the name its facts give, so no
third list of backends is kept beside the facts (rules.BACKENDS) and the settings (settings.store.STORE_CONFIGS)."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Callable, Iterable, Mapping

from kvpool.components.kv_store.common import StoreContext
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.output import OutputProblems
from kvpool.components.workloads import Workloads
from kvpool.policies import rules


@dataclass(frozen=True, kw_only=True)
class Renderer:
    # (context, the backend's store settings, component.KVStoreArgs) -> the endpoint; its objects go to ctx
    build: Callable[[StoreContext, Any, Any], KVStoreEndpoint]
    # The ports of the store's namespace that the endpoint's client files name, besides its port and metrics_port.
    client_ports: Callable[[KVStoreEndpoint], Iterable[int]]
    # (endpoint, the reading stack's kv_cache_store_config, its rules.PoolSizing) -> the pool memory one store
    # process of its engines holds (None: not known), and whether every engine rank runs one (else one per pod): what
    # `kvpool fleet` adds up.
    pool_bytes_per_process: Callable[[KVStoreEndpoint, Any, rules.PoolSizing | None], tuple[int | None, bool]]
    # What a consumer of another stack's store (contract.py) rebuilds from the owner's `kv_store` output, never
    # copying it; each adds what it refuses to the problems (output.OutputProblems) under the output's field.
    # (problems, host, port, the owner's engine_env) -> the engine env the consumer computes from the host and port.
    engine_env_from_output: Callable[[OutputProblems, str, int, Any], dict[str, str]]
    # Each client file the endpoint carries -> (problems, its field, the owner's text, host, port, the owner's
    # Workloads) -> the file re-rendered from what was parsed, or None when it is refused.
    client_files: Mapping[str, Callable[[OutputProblems, str, str, str, int, Workloads], str | None]]
    # The host paths engines mount for the store (name -> {"path", "mount_path"}): the only ones an owner may name.
    host_paths: Callable[[], dict[str, dict[str, str]]]
    # (the owner's lease_ttl_ms) -> what the owner's own settings model refuses in it; None: its endpoint has no lease.
    lease_problems: Callable[[Any], list[str]] | None
    # (the consumer's store settings of this backend, its hardware_type, consumer stack, owner stack, the owner's
    # endpoint as contract.py rebuilt it) -> why the consumer's settings and the owner's store are not one pool.
    consumer_problems: Callable[[Any, str, str, str, KVStoreEndpoint], list[str]]


@functools.cache
def renderer(backend: str) -> Renderer:
    """The RENDERER of the module named after `backend`, one of rules.BACKENDS (the settings accept no other)."""
    if backend not in rules.BACKENDS:
        raise KeyError(f"{backend!r} is not one of rules.BACKENDS ({', '.join(rules.BACKENDS)})")
    return import_module(f"{__package__}.{backend}").RENDERER
