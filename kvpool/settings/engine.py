"""motor_engine_prefill_config and motor_engine_decode_config: the engine section, vLLM's engine arguments and
kv_transfer_config (a single connector or a MultiConnector holding the transfer and the store connector)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BeforeValidator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from kvpool.policies import rules
from kvpool.settings.passthrough import ENGINE_RANGES
from kvpool.settings.types import Closed, NonEmpty, Open, no_bool


class ConnectorExtraConfig(Open):
    """kv_connector_extra_config: MultiConnector's `connectors`, the store backend; the rest passes through."""

    connectors: list[KvTransferConfig] | None = Field(
        None, description="MultiConnector's connectors: the P/D transfer connector first, the store connector second."
    )
    backend: Literal[tuple(rules.BACKENDS)] | None = Field(  # type: ignore[valid-type]
        None, description="AscendStoreConnector's pool; must be kv_cache_store_config.backend."
    )

    @model_validator(mode="after")
    def _ucm_connectors_shape(self) -> ConnectorExtraConfig:
        """UCMConnector's stores pass through to UCM, but the rules read them: a list of mappings, each with a
        mapping ucm_connector_config (Motor's UCM example)."""
        stores = (self.model_extra or {}).get("ucm_connectors")
        if stores is None:
            return self
        if not isinstance(stores, list):
            raise ValueError(f"ucm_connectors: must be a list of stores, found {type(stores).__name__}")
        for index, store in enumerate(stores):
            where = f"ucm_connectors[{index}]"
            if not isinstance(store, dict):
                raise ValueError(f"{where}: must be a mapping with ucm_connector_name and ucm_connector_config")
            config = store.get("ucm_connector_config")
            if config is not None and not isinstance(config, dict):
                raise ValueError(f"{where}.ucm_connector_config: must be a mapping, found {type(config).__name__}")
        return self


class KvTransferConfig(Closed):
    """vLLM's KVTransferConfig, as a single connector or a MultiConnector holding one per entry."""

    kv_connector: NonEmpty = Field(description="vLLM's connector class, e.g. MooncakeConnectorV1 or MultiConnector.")
    kv_role: Literal["kv_producer", "kv_consumer", "kv_both"] | None = Field(
        None, description="Filled in when absent: kv_producer on prefill, kv_consumer on decode, kv_both for UCMConnector."
    )
    engine_id: StrictStr | StrictInt | None = None
    kv_buffer_device: str | None = None
    kv_buffer_size: StrictInt | StrictFloat | None = None
    kv_rank: StrictInt | None = None
    kv_parallel_size: StrictInt | None = Field(
        None, ge=1,
        description="vLLM's number of parallel KV transfers (at least 1, vLLM's default). Seed 000 FAQ 2: with a "
        "KV pool, prefill also pushes its KV cache into the pool, which can slow it a little; raise kv_parallel_size "
        "to transfer faster.",
    )
    kv_ip: str | None = None
    kv_port: Annotated[StrictInt | StrictStr | None, BeforeValidator(no_bool)] = None
    kv_connector_module_path: str | None = None
    kv_load_failure_policy: Literal["fail", "recompute"] | None = None
    enable_permute_local_kv: StrictBool | None = None
    kv_connector_extra_config: ConnectorExtraConfig | None = None

    @model_validator(mode="before")
    @classmethod
    def _no_dispatch_profile(cls, data: Any) -> Any:
        if isinstance(data, dict) and "dispatch_profile" in data:
            raise ValueError(
                "dispatch_profile: Motor never reads it inside kv_transfer_config, which vLLM receives whole; it reads "
                "motor_engine_<side>_config.dispatch_profile (motor/config/node_manager.py): move it there"
            )
        return data

    @field_validator("kv_port")
    @classmethod
    def _port_number(cls, port: int | str | None) -> int | str | None:
        # ASCII digits only: str.isdigit() and int() also take "３０００１" and "٣٠٠٠١".
        if port is not None and not (re.fullmatch(r"[0-9]+", str(port)) and 1 <= int(port) <= 65535):
            raise ValueError(f"{port!r} is not a port number (1-65535)")
        return port

    @model_validator(mode="after")
    def _connectors_only_in_multi(self) -> KvTransferConfig:
        listed = self.kv_connector_extra_config.connectors if self.kv_connector_extra_config else None
        if self.kv_connector == rules.MULTI_CONNECTOR:
            if not listed or len(listed) < 2:
                raise ValueError(
                    "MultiConnector needs kv_connector_extra_config.connectors with at least two entries: "
                    "the P/D transfer connector first, the store connector second"
                )
        elif listed is not None:
            raise ValueError(f"only MultiConnector takes a connectors list; {self.kv_connector} does not")
        return self


ConnectorExtraConfig.model_rebuild()  # resolve the forward reference to KvTransferConfig


def _ranged(option: str) -> Any:
    """A whole-number engine argument whose range is checked with the pass-through options (ENGINE_RANGES), so both
    spellings (max_num_seqs, max-num-seqs) get one message; the schema still shows the range."""
    return Annotated[StrictInt, WithJsonSchema({"type": "integer", **ENGINE_RANGES[option].json_schema()})]


class EngineConfig(Open):
    """vLLM engine arguments. The ones motor-kvpool reads are typed; all others pass through untouched."""

    model: NonEmpty = Field(description="Model path inside the pod (usually under weight_mount_path).")
    served_model_name: str | None = Field(
        None, max_length=255, description="The name clients ask for; the KV conductor indexes by it. At most 255 "
        "characters: Motor names its log folders after it (MODEL_NAME; deployer startup/common.sh), and a file name has "
        "at most 255 bytes.")
    data_parallel_size: _ranged("data-parallel-size") | None = Field(
        None, description="DP x TP x PP ranks must fit the instance's NPUs.")
    tensor_parallel_size: _ranged("tensor-parallel-size") | None = Field(
        None, description="DP x TP x PP ranks must fit the instance's NPUs.")
    pipeline_parallel_size: _ranged("pipeline-parallel-size") | None = Field(
        None, description="DP x TP x PP ranks must fit the instance's NPUs.")
    kv_transfer_config: KvTransferConfig | None = Field(None, description="vLLM's KV transfer configuration.")
    max_num_batched_tokens: _ranged("max-num-batched-tokens") | None = Field(
        None, description="vLLM's tokens per scheduler step; the pool sizing takes it as a prefill DP rank's "
        "tokens per second unless kv_pool_sizing.prefill_tokens_per_second says otherwise (docs/sizing.md).")


class EngineSection(Closed):
    engine_type: str = Field("vllm", description="Only vllm (vllm-ascend) is deployed by motor-kvpool.")
    engine_config: EngineConfig
    motor_nodemanger_config: dict[str, Any] | None = Field(None, description="Motor's node manager, untouched.")
    health_check_config: dict[str, Any] | None = Field(None, description="Motor's engine health check, untouched.")
    dispatch_profile: Literal[tuple(rules.DISPATCH_PROFILES)] | None = Field(  # type: ignore[valid-type]
        None,
        description="Motor's P/D dispatch plan for this side when its transfer connector is outside Motor's whitelist: "
        "handoff (prefill_handoff_decode), prefill hands each request to decode; trigger (bootstrap, "
        "concurrent_engine_sync), both sides start it together. Motor's node manager reads it here "
        "(motor/config/node_manager.py); a prefill pairs only with a decode of the same plan.",
    )
    hybrid_attention: StrictBool = Field(
        False,
        description="The model mixes attention types (e.g. DeepSeek V4): connectors[0] must then be "
        "MooncakeHybridConnector on both sides (seed FAQ 7). Also inferred from no_disable_hybrid_kv_cache_manager and "
        "from the model's config.json where the preview can read it; declare it where neither says so. Read by "
        "motor-kvpool only; not passed to Motor.",
    )

    @field_validator("engine_type")
    @classmethod
    def _vllm_only(cls, engine_type: str) -> str:
        if engine_type != "vllm":
            raise ValueError(
                f"{engine_type!r} engines are not deployed by motor-kvpool (it targets vllm-ascend's KV pool); "
                "write vllm"
            )
        return engine_type
