"""What one token of a model costs in KV cache: the model's shape from its Hugging Face config.json (or a table of
common models), and the bytes per token an engine writes to the pool and holds per rank (docs/sizing.md)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Mapping

# The config.json fields of common models, copied from each model's own file (the URL in the comment).
KNOWN_MODELS: dict[str, dict[str, Any]] = {
    # https://huggingface.co/Qwen/Qwen2.5-7B-Instruct/blob/main/config.json
    "Qwen2.5-7B": {"num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "hidden_size": 3584,
                   "torch_dtype": "bfloat16"},
    # https://huggingface.co/Qwen/Qwen3-8B/blob/main/config.json
    "Qwen3-8B": {"num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
                 "hidden_size": 4096, "torch_dtype": "bfloat16"},
    # https://huggingface.co/Qwen/Qwen3-32B/blob/main/config.json
    "Qwen3-32B": {"num_hidden_layers": 64, "num_attention_heads": 64, "num_key_value_heads": 8, "head_dim": 128,
                  "hidden_size": 5120, "torch_dtype": "bfloat16"},
    # https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/config.json
    "Llama-3.1-8B": {"num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
                     "hidden_size": 4096, "torch_dtype": "bfloat16"},
    # https://huggingface.co/meta-llama/Llama-3.1-70B-Instruct/blob/main/config.json
    "Llama-3.1-70B": {"num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
                      "hidden_size": 8192, "torch_dtype": "bfloat16"},
    # https://huggingface.co/deepseek-ai/DeepSeek-V3/blob/main/config.json (MLA: one latent per layer and token)
    "DeepSeek-V3": {"num_hidden_layers": 61, "num_attention_heads": 128, "num_key_value_heads": 128,
                    "hidden_size": 7168, "kv_lora_rank": 512, "qk_rope_head_dim": 64, "torch_dtype": "bfloat16"},
}

DTYPE_BYTES = {"float32": 4, "float": 4, "bfloat16": 2, "float16": 2, "half": 2, "fp8": 1, "fp8_e4m3": 1,
               "fp8_e5m2": 1, "fp8_inc": 1, "int8": 1}


@dataclass(frozen=True)
class ModelShape:
    source: str  # where the shape was read: a config.json path, a table row, the setting
    layers: int
    kv_heads: int  # 1 for MLA: one latent per layer
    head_dim: int  # the latent (kv_lora_rank + qk_rope_head_dim) for MLA
    dtype_bytes: int
    mla: bool

    @property
    def bytes_per_token(self) -> int:
        """What one engine writes to the pool per token: every layer's K and V (or one MLA latent) once, whatever
        its TP and PP (vllm-ascend's KVPoolWorker: ranks holding the same KV head put it once, put_step)."""
        return (1 if self.mla else 2) * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes

    def bytes_per_token_per_rank(self, tp: int, pp: int) -> int:
        """What one rank holds per token: its PP stage's layers (the largest stage) and its share of the KV heads
        (a head replicated when TP exceeds them; the MLA latent replicated on every TP rank)."""
        heads = self.kv_heads if self.mla else max(1, self.kv_heads // tp)
        return (1 if self.mla else 2) * math.ceil(self.layers / pp) * heads * self.head_dim * self.dtype_bytes


def engine_value(engine_config: Mapping[str, Any], key: str) -> Any:
    """An engine argument under either spelling vLLM accepts (max_model_len or max-model-len)."""
    for written, value in engine_config.items():
        if str(written).replace("-", "_") == key:
            return value
    return None


def model_shape(config: Mapping[str, Any], source: str, kv_cache_dtype: Any = None) -> ModelShape | None:
    """The shape of a Hugging Face config.json (None when it lacks a field the cache needs). kv_cache_dtype other
    than auto replaces the model's dtype, as vLLM allocates the cache."""
    dtype = kv_cache_dtype if kv_cache_dtype not in (None, "auto") else config.get("torch_dtype", "bfloat16")
    dtype_bytes = DTYPE_BYTES.get(str(dtype))
    layers = config.get("num_hidden_layers")
    if dtype_bytes is None or not isinstance(layers, int):
        return None
    if isinstance(config.get("kv_lora_rank"), int) and isinstance(config.get("qk_rope_head_dim"), int):
        latent = config["kv_lora_rank"] + config["qk_rope_head_dim"]
        return ModelShape(source, layers, 1, latent, dtype_bytes, mla=True)
    heads = config.get("num_attention_heads")
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim")
    if head_dim is None and isinstance(heads, int) and isinstance(config.get("hidden_size"), int):
        head_dim = config["hidden_size"] // heads
    if not isinstance(kv_heads, int) or not isinstance(head_dim, int):
        return None
    return ModelShape(source, layers, kv_heads, head_dim, dtype_bytes, mla=False)


# A model's config.json is a few KiB (DeepSeek-V3's: 1.7 KiB); one beyond this is no model's configuration, and is
# not read whole (a 1.3 GB file took 2.7 GiB).
MAX_MODEL_CONFIG_BYTES = 1024 * 1024


def read_model_config(model_path: Any) -> dict[str, Any] | None:
    """<model>/config.json when it is a regular file of at most MAX_MODEL_CONFIG_BYTES holding a JSON object
    (readable where the preview runs); otherwise the shape comes from the table or the settings."""
    if not isinstance(model_path, str):
        return None
    path = os.path.join(model_path, "config.json")
    if not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_MODEL_CONFIG_BYTES + 1)
        if len(data) > MAX_MODEL_CONFIG_BYTES:
            return None
        config = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # RecursionError: nested deeper than the parser's stack
        return None
    return config if isinstance(config, dict) else None


def known_model(name: Any) -> str | None:
    """The table row a name stands for: `Qwen3-8B`, `qwen3_8B`, `/mnt/weight/Qwen3-8B-Instruct` all find Qwen3-8B."""
    if not isinstance(name, str):
        return None
    last = name.rstrip("/").rsplit("/", 1)[-1].lower().replace("_", "-")
    return next((row for row in sorted(KNOWN_MODELS, key=len, reverse=True)
                 if last == row.lower() or last.startswith(row.lower() + "-")), None)


def resolve_shape(engine_config: Mapping[str, Any], setting: Mapping[str, Any] | None) -> ModelShape | None:
    """The model's shape, first found of: kv_pool_sizing.model_shape, kv_pool_sizing.model (a table row), the
    model's config.json where the preview runs, the table row of the model path or served_model_name."""
    setting = setting or {}
    kv_dtype = engine_value(engine_config, "kv_cache_dtype")
    if setting.get("model_shape"):
        return model_shape(setting["model_shape"], "kv_pool_sizing.model_shape", kv_dtype)
    if setting.get("model") in KNOWN_MODELS:
        return model_shape(KNOWN_MODELS[setting["model"]], f"table row {setting['model']}", kv_dtype)
    model = engine_config.get("model")
    config = read_model_config(model)
    if config is not None:
        return model_shape(config, f"{model}/config.json", kv_dtype)
    for name in (model, engine_config.get("served_model_name")):
        row = known_model(name)
        if row is not None:
            return model_shape(KNOWN_MODELS[row], f"table row {row} (from {name})", kv_dtype)
    return None
