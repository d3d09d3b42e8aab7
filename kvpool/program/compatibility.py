"""What two services must agree on to share cached KV blocks, as a readable record and one digest.

A consumer whose record differs from the provider's would either never hit the pool (different hashes) or,
worse, load blocks computed for another model or layout. Each field and why it is in the key: README, "Sharing
a KV store".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from kvpool.policies import rules
from kvpool.settings.service import ServiceSettings

# engine_config spellings that Motor's examples use for the same vLLM argument.
_ALIASES = {
    "block_size": ("block_size", "block-size"),
    "dtype": ("dtype",),
    "kv_cache_dtype": ("kv_cache_dtype", "kv-cache-dtype"),
    "quantization": ("quantization",),
}


# Where the consumer edits each field (prefill's engine writes the pool; decode reads what it wrote).
_ENGINE = "motor_engine_prefill_config.engine_config"
COMPATIBILITY_FIELDS = {
    "model": f"{_ENGINE}.model",
    "served_model_name": f"{_ENGINE}.served_model_name",
    "quantization": f"{_ENGINE}.quantization",
    "dtype": f"{_ENGINE}.dtype",
    "kv_cache_dtype": f"{_ENGINE}.kv_cache_dtype",
    "block_size": f"{_ENGINE}.block_size (or block-size)",
    "tensor_parallel_size": f"{_ENGINE}.tensor_parallel_size",
    "pipeline_parallel_size": f"{_ENGINE}.pipeline_parallel_size",
    "python_hash_seed": "env.motor_engine_prefill_env.PYTHONHASHSEED",
}


def _engine_value(engine_config: dict[str, Any], field: str) -> Any:
    return next((engine_config[name] for name in _ALIASES[field] if name in engine_config), None)


def compatibility(settings: ServiceSettings) -> dict[str, Any]:
    """The fields (prefill's engine is the one that writes the pool) and `key`, their digest."""
    engine = settings.motor_engine_prefill_config.engine_config
    passthrough = engine.model_dump(mode="json", exclude_none=True)
    prefill_env = rules.engine_envs(settings.env_sections())["prefill"]
    fields = {
        "model": engine.model,
        "served_model_name": engine.served_model_name,
        "quantization": _engine_value(passthrough, "quantization"),
        "dtype": _engine_value(passthrough, "dtype"),
        "kv_cache_dtype": _engine_value(passthrough, "kv_cache_dtype"),
        "block_size": _engine_value(passthrough, "block_size"),
        "tensor_parallel_size": engine.tensor_parallel_size or 1,
        "pipeline_parallel_size": engine.pipeline_parallel_size or 1,
        "python_hash_seed": str(prefill_env.get("PYTHONHASHSEED")),
    }
    digest = hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()[:16]
    return {**fields, "key": digest}
