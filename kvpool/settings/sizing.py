"""kv_pool_sizing: what the pool planner cannot read from the rest of the stack (docs/sizing.md): the model's shape
when its config.json is not readable where the preview runs, the writers' measured rate, and the shortest block
lifetime to accept. Read by motor-kvpool only; kept out of user_config.json."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, StrictFloat, StrictInt, model_validator

from kvpool.policies import rules
from kvpool.settings.types import Closed

# A prompt token costs at least 2 FLOPs per weight: at ~300 TFLOPS (an Ascend 910B's bf16 peak), a 0.5B model's prefill
# tops out near 3 x 10^5 tokens/s per NPU, ~5 x 10^6 for a 16-NPU instance; 10^8 leaves room for any faster chip.
MAX_PREFILL_TOKENS_PER_SECOND = 10**8

KnownModel = Literal[tuple(rules.KNOWN_MODELS)]  # type: ignore[valid-type]


class ModelShapeConfig(Closed):
    """The KV-cache fields of a Hugging Face config.json, under its own names."""

    num_hidden_layers: StrictInt = Field(ge=1, description="Transformer layers.")
    num_attention_heads: StrictInt | None = Field(None, ge=1, description="Query heads (with hidden_size: head_dim).")
    num_key_value_heads: StrictInt | None = Field(None, ge=1, description="KV heads (GQA); default num_attention_heads.")
    head_dim: StrictInt | None = Field(None, ge=1, description="Dimension of one head; default hidden_size / heads.")
    hidden_size: StrictInt | None = Field(None, ge=1, description="Model width, for head_dim when it is absent.")
    kv_lora_rank: StrictInt | None = Field(None, ge=1, description="MLA (DeepSeek): the compressed KV latent.")
    qk_rope_head_dim: StrictInt | None = Field(None, ge=1, description="MLA (DeepSeek): the rotary part of the latent.")
    torch_dtype: Literal[tuple(rules.DTYPE_BYTES)] = Field(  # type: ignore[valid-type]
        "bfloat16", description="The weights' dtype, the cache's unless the engine sets kv_cache_dtype.")

    @model_validator(mode="after")
    def _complete(self) -> ModelShapeConfig:
        if rules.model_shape(self.model_dump(exclude_none=True), "kv_pool_sizing.model_shape") is None:
            raise ValueError("needs num_key_value_heads (or num_attention_heads) and head_dim (or hidden_size with "
                             "num_attention_heads), or kv_lora_rank with qk_rope_head_dim (MLA)")
        return self


class PoolSizingConfig(Closed):
    model: KnownModel | None = Field(
        None, description="A model of the planner's table (docs/sizing.md), when the engines' model path is not "
        "readable where the preview runs and neither it nor served_model_name names a row.")
    model_shape: ModelShapeConfig | None = Field(
        None, description="The model's KV fields, for a model outside the table; wins over model.")
    prefill_tokens_per_second: StrictInt | None = Field(
        None, gt=0, le=MAX_PREFILL_TOKENS_PER_SECOND, description="Prompt tokens one prefill instance processes per "
        "second (measured; at most 10^8, beyond any accelerator: a larger number is a unit slip, per minute or per "
        "hour). Default: max_num_batched_tokens (8192 when unset) per DP rank per second (docs/sizing.md).")
    min_block_lifetime_seconds: StrictInt | StrictFloat | None = Field(
        None, gt=0, le=86400, description="Warn when a block may be evicted sooner (at most a day: a pool sized "
        "to keep blocks longer holds more than any node). Default: the engines' longest ASCEND connect or transfer "
        "timeout, the time decode may take to read what prefill wrote.")

    @model_validator(mode="after")
    def _one_shape(self) -> PoolSizingConfig:
        if self.model is not None and self.model_shape is not None:
            raise ValueError("model and model_shape both name the model; keep one")
        return self

    def as_rule_input(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)
