"""The KV store component and its endpoint contract (one module per backend)."""

from components.kv_store.component import KVStore
from components.kv_store.endpoint import CLIENT_CONFIG_DIR, KVStoreEndpoint

__all__ = ["CLIENT_CONFIG_DIR", "KVStore", "KVStoreEndpoint"]
