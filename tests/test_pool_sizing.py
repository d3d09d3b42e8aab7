"""The pool planner: KV bytes per token from the model, each pool's capacity and block lifetime, and the refusals of
a pool that cannot work (kvpool/policies/rules/model_kv.py, kvpool/policies/rules/pool_sizing.py)."""

from __future__ import annotations

import json

import pytest

from kvpool.cli.views import sizing as sizing_view
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.service_configs import memcache_pool, mooncake_pool, plain_pd, problems_of

QWEN25_7B = rules.model_shape(rules.KNOWN_MODELS["Qwen2.5-7B"], "table")
DEEPSEEK_V3 = rules.model_shape(rules.KNOWN_MODELS["DeepSeek-V3"], "table")


def test_qwen25_7b_bytes_per_token_2_x_28_layers_x_4_kv_heads_x_128_x_bf16():
    assert (QWEN25_7B.layers, QWEN25_7B.kv_heads, QWEN25_7B.head_dim, QWEN25_7B.dtype_bytes) == (28, 4, 128, 2)
    assert QWEN25_7B.bytes_per_token == 2 * 28 * 4 * 128 * 2 == 57_344


@pytest.mark.parametrize("model, expected", [
    ("Qwen3-8B", 2 * 36 * 8 * 128 * 2), ("Qwen3-32B", 2 * 64 * 8 * 128 * 2), ("Llama-3.1-8B", 2 * 32 * 8 * 128 * 2),
    ("Llama-3.1-70B", 2 * 80 * 8 * 128 * 2), ("DeepSeek-V3", 61 * (512 + 64) * 2),
])
def test_bytes_per_token_of_every_table_row(model, expected):
    assert rules.model_shape(rules.KNOWN_MODELS[model], "table").bytes_per_token == expected


def test_tp_splits_kv_heads_and_pp_splits_layers_per_rank():
    assert QWEN25_7B.bytes_per_token_per_rank(tp=2, pp=1) == 2 * 28 * 2 * 128 * 2
    assert QWEN25_7B.bytes_per_token_per_rank(tp=8, pp=1) == 2 * 28 * 1 * 128 * 2  # 4 KV heads: replicated past TP 4
    assert QWEN25_7B.bytes_per_token_per_rank(tp=1, pp=3) == 2 * 10 * 4 * 128 * 2  # 28 layers: stages of 10, 9, 9


def test_mla_latent_is_replicated_on_every_tp_rank():
    assert DEEPSEEK_V3.mla
    assert DEEPSEEK_V3.bytes_per_token_per_rank(tp=16, pp=1) == 61 * 576 * 2 == 70_272


def test_kv_cache_dtype_replaces_the_models_dtype():
    assert rules.model_shape(rules.KNOWN_MODELS["Qwen2.5-7B"], "t", "fp8").bytes_per_token == 28_672
    assert rules.model_shape(rules.KNOWN_MODELS["Qwen2.5-7B"], "t", "auto").bytes_per_token == 57_344


def test_the_models_config_json_wins_over_the_table_when_readable(tmp_path):
    model = tmp_path / "Qwen3-8B"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(rules.KNOWN_MODELS["Qwen2.5-7B"]))
    shape = rules.resolve_shape({"model": str(model), "served_model_name": "qwen3-8B"}, None)
    assert (shape.source, shape.bytes_per_token) == (f"{model}/config.json", 57_344)


def test_the_table_row_is_found_from_the_model_path_or_served_name():
    assert rules.known_model("/mnt/weight/qwen3_8B") == "Qwen3-8B"
    assert rules.known_model("Qwen3-32B-Instruct") == "Qwen3-32B"
    assert rules.known_model("qwen3-80b") is None
    shape = rules.resolve_shape({"model": "/models/x", "served_model_name": "Llama-3.1-70B"}, None)
    assert shape.source == "table row Llama-3.1-70B (from Llama-3.1-70B)"


def test_the_setting_names_a_model_outside_the_table():
    setting = {"model_shape": {"num_hidden_layers": 40, "num_key_value_heads": 2, "head_dim": 64}}
    shape = rules.resolve_shape({"model": "/models/x"}, setting)
    assert (shape.source, shape.bytes_per_token) == ("kv_pool_sizing.model_shape", 2 * 40 * 2 * 64 * 2)


def sizing_of(service: dict) -> rules.PoolSizing:
    settings = load_from_pulumi_config(service, "svc")
    return settings.pool_sizing()


def test_mooncake_pool_capacity_lifetime_and_frontier():
    pool = sizing_of(mooncake_pool())  # Qwen3-8B, TP1, 1P1D, 1GB segments, 0.7/0.2
    assert (pool.units, pool.capacity_bytes, pool.block_bytes) == (2, 2 * 2**30, 147_456 * 128)
    assert (pool.capacity_blocks, pool.capacity_tokens) == (113, 14_464)
    assert pool.write_bytes_per_second == 8192 * 147_456
    assert pool.floor == 0.56  # 0.7 x (1 - 0.2): an eviction leaves 0.8 of the objects at the watermark
    assert pool.lifetime_seconds == pytest.approx(0.56 * 2 * 2**30 / (8192 * 147_456))
    # Empty to the watermark, then the master's next eviction check (every 10 ms): bench/results/sizing.md.
    assert pool.first_eviction_seconds == pytest.approx(0.7 * 2 * 2**30 / (8192 * 147_456) + 0.01)
    assert pool.frontier() == "0.56% of the pool per 10 ms (row <= 8%): 0.7/0.2 kept >= 99 % of puts"


def test_the_measured_prefill_rate_replaces_the_default():
    service = mooncake_pool()
    service["kv_pool_sizing"] = {"prefill_tokens_per_second": 1000}
    pool = sizing_of(service)
    assert (pool.writers[0].tokens_per_second, pool.writers[0].rate_source) == (
        1000, "kv_pool_sizing.prefill_tokens_per_second")


def test_max_model_len_auto_leaves_the_request_length_unknown():
    service = mooncake_pool()
    service["motor_engine_prefill_config"]["engine_config"]["max-model-len"] = -1  # vLLM fits it to memory
    writer = sizing_of(service).writers[0]
    assert (writer.max_model_len, writer.request_bytes) == (None, None)


def test_a_zero_pool_is_refused_naming_the_size_that_works():
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "0GB"
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 0GB x 2 engine rank(s): the pool holds nothing and every put "
        "fails (Mooncake NO_AVAILABLE_HANDLE); set at least 206MB."
    ]


def test_a_pool_below_one_request_per_writer_is_refused():
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "128MB"
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 128MB x 2 engine rank(s) = 256 MiB, 179.2 MiB below the 0.7 "
        "eviction watermark: less than one max_model_len request for each engine that writes to it, 1 prefill "
        "instance(s) x 288 MiB (2048 tokens of table row Qwen3-8B (from /mnt/weight/qwen3_8B)) = 288 MiB; set at "
        "least 206MB."
    ]
    service["kv_cache_store_config"]["global_segment_size"] = "206MB"
    load_from_pulumi_config(service, "svc")


def test_a_standalone_segment_above_64_gib_is_refused():
    store = {"backend": "mooncake", "store_mode": "standalone", "global_segment_size": "65GB"}
    assert [str(f) for f in rules.check_standalone_segment_limit(store)] == [
        "kv_cache_store_config.global_segment_size: is '65GB', but a standalone mooncake_store_service fails to "
        "register a segment above 64 GiB (\"Failed to register memory: Cannot allocate memory\", kvcache-ai/Mooncake "
        "issue 1382); use at most 64GB, or store_mode embedded, which splits a large segment (Mooncake PR 647)."
    ]
    assert rules.check_standalone_segment_limit({**store, "global_segment_size": "64GB"}) == []
    assert rules.check_standalone_segment_limit({**store, "store_mode": "embedded"}) == []


def test_a_mooncake_eviction_leaves_a_share_of_the_objects_not_watermark_minus_ratio():
    # BatchEvict evicts ceil(objects x ratio) at the watermark: 0.6/0.4 leaves 0.36 of the pool, measured 34-37 % on
    # the real master (bench/results/sizing.md); watermark - ratio (0.2) made blocks look 1.8x shorter-lived.
    assert rules.mooncake_floor(0.6, 0.4) == 0.36
    store = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.6, "eviction_ratio": 0.4}
    pool = sizing_of({**mooncake_pool(), "kv_cache_store_config": store})
    assert (pool.high, pool.ratio, pool.floor) == (0.6, 0.4, 0.36)
    assert pool.lifetime_seconds == pytest.approx(0.36 * pool.capacity_bytes / pool.write_bytes_per_second)


def test_blocks_living_shorter_than_the_minimum_warn():
    settings = load_from_pulumi_config(mooncake_pool(), "svc")
    engines = rules.engine_envs(settings.env_sections())
    assert [str(f) for f in rules.check_block_lifetime(settings.user_config(), engines, {})] == [
        "kv_cache_store_config.global_segment_size: is 1GB x 2 engine rank(s): the writers (1.1 GiB/s, "
        "max_num_batched_tokens 8192 x 1 DP rank(s) per second) turn the pool over so fast that a block may be "
        "evicted 1.00 s after it is written, before decode reads it (10 s, kv_pool_sizing.min_block_lifetime_seconds); "
        "set at least 11GB, or kv_pool_sizing.prefill_tokens_per_second to the rate you measured."
    ]
    assert rules.check_block_lifetime(settings.user_config(), engines, {"min_block_lifetime_seconds": 0.9}) == []


def test_the_default_minimum_is_the_longest_ascend_timeout():
    timeouts = {"ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000"}
    engines = {"prefill": {**timeouts, "ASCEND_TRANSFER_TIMEOUT": "12000"}, "decode": timeouts}
    assert rules.default_min_lifetime_seconds(engines) == 12.0
    # unset, vllm-ascend's transfer timeout is 33064 ms
    assert rules.default_min_lifetime_seconds({"prefill": timeouts, "decode": {}}) == 33.064


def test_an_inprocess_memcache_pool_is_sized_by_dram_size_per_engine_pod():
    """Motor 8919e55's LocalService.prepare() rewrites each rank's dram.size to max(1, dram_size // the pod's ranks)
    GB, else to a share of 80 % of the node's free memory (local_service.py:109-121): the conf's size never holds."""
    assert sizing_of(memcache_pool()).unit_bytes is None  # no dram_size: the node's free memory decides
    service = memcache_pool()
    service["kv_cache_store_config"]["dram_size"] = "8GB"
    pool = sizing_of(service)
    assert (pool.field, pool.units, pool.unit_name, pool.capacity_bytes, pool.high, pool.floor) == (
        "kv_cache_store_config.dram_size", 2, "engine pod's LocalService", 16 * 2**30, 0.7, 0.6)
    assert pool.frontier() == "not measured for this backend"
    service["kv_cache_store_config"]["dram_size"] = "5GB"
    for side in ("prefill", "decode"):
        service[f"motor_engine_{side}_config"]["engine_config"]["tensor_parallel_size"] = 2
    assert sizing_of(service).unit_bytes == 2 * 2 * 2**30  # each of 2 ranks: 5 // 2 = 2GB
    service["motor_engine_decode_config"]["engine_config"]["tensor_parallel_size"] = 1
    assert sizing_of(service).unit_bytes is None  # pods of 2 and of 1 rank: no one size per pod
    assert pool.first_eviction_seconds == pool.fill_seconds(0.7)  # no Mooncake eviction period


def test_a_store_no_engine_writes_to_holds_nothing_and_says_so():
    service = plain_pd()
    service["kv_cache_store_config"] = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.6,
                                        "eviction_ratio": 0.4}
    settings = load_from_pulumi_config(service, "svc")
    assert settings.pool_sizing() is None
    assert sizing_view.row("svc", settings) == (
        "svc", "mooncake", "none: no engine uses a store connector, the store holds nothing", "", "", "", "")


@pytest.mark.parametrize("sizing, problem", [
    ({"model": "Qwen3-8B", "model_shape": {"num_hidden_layers": 2, "num_key_value_heads": 1, "head_dim": 64}},
     "kv_pool_sizing: model and model_shape both name the model; keep one"),
    ({"model_shape": {"num_hidden_layers": 2, "head_dim": 64}},
     "kv_pool_sizing.model_shape: needs num_key_value_heads (or num_attention_heads) and head_dim (or hidden_size "
     "with num_attention_heads), or kv_lora_rank with qk_rope_head_dim (MLA)"),
    ({"model": "Qwen3-9B"},
     "kv_pool_sizing.model: 'Qwen3-9B' is not allowed; write one of 'Qwen2.5-7B', 'Qwen3-8B', 'Qwen3-32B', "
     "'Llama-3.1-8B', 'Llama-3.1-70B' or 'DeepSeek-V3'"),
    ({"prefill_tokens_per_second": 0},
     "kv_pool_sizing.prefill_tokens_per_second: 0 must be above 0; write a number greater than 0"),
    ({"min_block_lifetime_seconds": 1e308},  # crashed the policy pack's arithmetic
     "kv_pool_sizing.min_block_lifetime_seconds: 1e+308 is above 86400, the most this field takes; write 86400 or less"),
    ({"min_block_lifetime_seconds": float("inf")},
     "kv_pool_sizing.min_block_lifetime_seconds: Infinity is above 86400, the most this field takes; write 86400 or "
     "less"),
])
def test_kv_pool_sizing_refuses_what_names_no_model_or_rate(sizing, problem):
    service = mooncake_pool()
    service["kv_pool_sizing"] = sizing
    assert problems_of(service) == [problem]


def test_a_yuanrong_pool_below_one_request_names_the_mib_that_work():
    service = mooncake_pool()
    for side in ("prefill", "decode"):
        for connector in service[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"][
                "kv_connector_extra_config"]["connectors"][1:]:
            connector["kv_connector_extra_config"]["backend"] = "yuanrong"
    service["kv_cache_store_config"] = {"backend": "yuanrong", "shared_memory_size_mb": 128,
                                        "etcd_client_cidrs": ["192.168.10.11/32"]}
    # Qwen3-8B: 2048 tokens = 16 blocks of 18 MiB = 288 MiB over 2 node workers evicting at 100 %: 144 MiB each.
    assert problems_of(service) == [
        "kv_cache_store_config.shared_memory_size_mb: is 128 x 2 node worker(s) = 256 MiB, 256 MiB below the 1 "
        "eviction watermark: less than one max_model_len request for each engine that writes to it, 1 prefill "
        "instance(s) x 288 MiB (2048 tokens of table row Qwen3-8B (from /mnt/weight/qwen3_8B)) = 288 MiB; set at "
        "least 144."
    ]


def test_the_ranks_of_an_engine_pod_hold_their_pool_memory_within_its_request():
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "40GB"
    service["motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 2
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 40GB: the 2 ranks of a prefill pod hold 2 x (40 GiB + 1 GiB "
        "local buffer) = 82 GiB of host memory, more than the 64Gi the engine pod requests "
        "(pods.prefill.requests.memory), so the scheduler may place it on a node without that room; use at most 31GB, "
        "raise pods.prefill.requests.memory to 82Gi, or spread the ranks over more pods (single_p_instance_pod_num)."
    ]
    service["kv_cache_store_config"]["global_segment_size"] = "31GB"
    load_from_pulumi_config(service, "svc")
    service["kv_cache_store_config"]["global_segment_size"] = "40GB"
    service["pods"] = {"prefill": {"requests": {"memory": "82Gi"}}}  # the other way out the message names
    load_from_pulumi_config(service, "svc")


def test_the_pool_memory_rule_reads_each_sides_own_request():
    """The default 64Gi holds one rank's 20 GiB segment and 1 GiB buffer; a decode pod asking 16Gi does not, and the
    prefill pod (still 64Gi) is not named."""
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "20GB"
    load_from_pulumi_config(service, "svc")
    service["pods"] = {"decode": {"requests": {"cpu": "8", "memory": "16Gi"}}}
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 20GB: the 1 ranks of a decode pod hold 1 x (20 GiB + 1 GiB "
        "local buffer) = 21 GiB of host memory, more than the 16Gi the engine pod requests "
        "(pods.decode.requests.memory), so the scheduler may place it on a node without that room; use at most 15GB, "
        "raise pods.decode.requests.memory to 21Gi, or spread the ranks over more pods (single_d_instance_pod_num)."
    ]


def test_an_engine_pod_without_a_memory_request_asks_for_its_limit_or_nothing():
    """Kubernetes defaults a missing request to the limit: 32Gi holds 21 GiB; with neither, the pod asks for nothing."""
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "20GB"
    service["pods"] = {"prefill": {"requests": {"cpu": "16"}, "limits": {"memory": "32Gi"}}}
    load_from_pulumi_config(service, "svc")
    service["pods"] = {"prefill": {"requests": {"cpu": "16"}}}
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 20GB: the 1 ranks of a prefill pod hold 1 x (20 GiB + 1 GiB "
        "local buffer) = 21 GiB of host memory, more than what the engine pod requests (nothing: "
        "pods.prefill.requests.memory is unset), so the scheduler may place it on a node without that room; set "
        "pods.prefill.requests.memory to 21Gi, or spread the ranks over more pods (single_p_instance_pod_num)."
    ]


def test_a_standalone_store_process_and_the_ranks_buffers_fit_the_engine_pods_request():
    """Standalone: the one store process of a pod holds the segment, its ranks only their local buffers (the store
    runs in the engine container, so the engine pod's memory request covers it)."""
    service = mooncake_pool()
    service["kv_cache_store_config"].update(store_mode="standalone", global_segment_size="63GB")
    service["motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 2
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: is 63GB: the store process of a prefill pod holds 63 GiB and its 2 "
        "ranks 2 x 1 GiB local buffer = 65 GiB of host memory, more than the 64Gi the engine pod requests "
        "(pods.prefill.requests.memory), so the scheduler may place it on a node without that room; use at most 62GB, "
        "raise pods.prefill.requests.memory to 65Gi, or spread the ranks over more pods (single_p_instance_pod_num)."
    ]
    service["kv_cache_store_config"]["global_segment_size"] = "62GB"  # 2 x 40GB would not fit embedded
    load_from_pulumi_config(service, "svc")


def test_a_memcache_finding_names_dram_size():
    service = memcache_pool()
    service["kv_cache_store_config"]["dram_size"] = "1GB"
    settings = load_from_pulumi_config(service, "svc")
    engines = rules.engine_envs(settings.env_sections())
    assert [str(f) for f in rules.check_block_lifetime(settings.user_config(), engines, {})] == [
        "kv_cache_store_config.dram_size: is 1GB x 2 engine pod's LocalService(s): the "
        "writers (1.1 GiB/s, max_num_batched_tokens 8192 x 1 DP rank(s) per second) turn the pool over so fast that a "
        "block may be evicted 1.07 s after it is written, before decode reads it (10 s, "
        "kv_pool_sizing.min_block_lifetime_seconds); set at least 10GB, or kv_pool_sizing.prefill_tokens_per_second "
        "to the rate you measured."
    ]


def test_a_model_config_beyond_any_models_size_or_depth_is_not_read(tmp_path):
    """Issue 45 §4: a 1.3 GB config.json was read whole (2.7 GiB), one nested 100,000 deep was a RecursionError."""
    large, deep = tmp_path / "large", tmp_path / "deep"
    large.mkdir(), deep.mkdir()
    (large / "config.json").write_text('{"num_hidden_layers": 2, "pad": "' + "x" * rules.MAX_MODEL_CONFIG_BYTES + '"}')
    (deep / "config.json").write_text('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}")
    assert (rules.read_model_config(str(large)), rules.read_model_config(str(deep))) == (None, None)
    (large / "config.json").write_text('{"num_hidden_layers": 2}')
    assert rules.read_model_config(str(large)) == {"num_hidden_layers": 2}


def standalone_memcache(dram_size: str | None = None) -> dict:
    service = memcache_pool("800I_A3")  # A3: local_service_mode standalone by default
    if dram_size is not None:
        service["kv_cache_store_config"]["dram_size"] = dram_size
    return service


def test_a_standalone_memcache_pool_is_one_local_service_per_engine_pod_of_dram_size():
    """Motor 8919e55: engine.sh starts one node manager per engine container, whose LocalService thread takes
    kv_cache_store_config.dram_size as its DRAM pool (local_service.py _run); the vLLM ranks' conf says 0GB."""
    pool = sizing_of(standalone_memcache("20GB"))
    assert (pool.field, pool.unit_name, pool.units, pool.unit_bytes, pool.capacity_bytes) == (
        "kv_cache_store_config.dram_size", "engine pod's LocalService", 2, 20 * 2**30, 40 * 2**30)
    assert load_from_pulumi_config(standalone_memcache("20GB"), "svc").user_config()[
        "kv_cache_store_config"]["dram_size"] == "20GB"  # what Motor's node manager reads
    # Unset, Motor takes 80 % of the node's free memory when the pod starts: not known offline.
    assert sizing_of(standalone_memcache()).unit_bytes is None


def test_a_standalone_memcache_pool_below_one_request_is_refused():
    service = standalone_memcache("2GB")
    service["motor_engine_prefill_config"]["engine_config"]["max-model-len"] = 40000
    assert problems_of(service) == [
        "kv_cache_store_config.dram_size: is 2GB x 2 engine pod's LocalService(s) = 4 GiB, 2.8 GiB below the 0.7 "
        "eviction watermark: less than one max_model_len request for each engine that writes to it, 1 prefill "
        "instance(s) x 5.5 GiB (40000 tokens of table row Qwen3-8B (from /mnt/weight/qwen3_8B)) = 5.5 GiB; set at "
        "least 4GB."
    ]
    service["kv_cache_store_config"]["dram_size"] = "4GB"
    load_from_pulumi_config(service, "svc")


def test_a_standalone_memcache_blocks_living_shorter_than_the_minimum_warn():
    settings = load_from_pulumi_config(standalone_memcache("1GB"), "svc")
    engines = rules.engine_envs(settings.env_sections())
    assert [str(f) for f in rules.check_block_lifetime(settings.user_config(), engines, {})] == [
        "kv_cache_store_config.dram_size: is 1GB x 2 engine pod's LocalService(s): the writers (1.1 GiB/s, "
        "max_num_batched_tokens 8192 x 1 DP rank(s) per second) turn the pool over so fast that a block may be "
        "evicted 1.07 s after it is written, before decode reads it (10 s, kv_pool_sizing.min_block_lifetime_seconds); "
        "set at least 10GB, or kv_pool_sizing.prefill_tokens_per_second to the rate you measured."
    ]


def test_a_standalone_local_service_beyond_the_engine_pods_request_is_refused():
    """The LocalService is a thread of the node manager in the engine container: the pod's memory holds it."""
    assert problems_of(standalone_memcache("100GB")) == [
        f"kv_cache_store_config.dram_size: is 100GB: the LocalService of a {side} pod holds 100 GiB of host memory, "
        f"more than the 64Gi the engine pod requests (pods.{side}.requests.memory), so the scheduler may place it on a "
        f"node without that room; use at most 64GB, or raise pods.{side}.requests.memory to 100Gi."
        for side in ("prefill", "decode")
    ]
    load_from_pulumi_config(standalone_memcache("64GB"), "svc")


@pytest.mark.parametrize("dram_size", ["100MB", "0GB", "1.5GB", "40Gi"])
def test_dram_size_is_a_whole_number_of_gb(dram_size):
    # Motor's LocalService._parse_dram_size_gb: int(value[:-2]) of a value ending in GB; 0 leaves no DRAM pool.
    assert problems_of(standalone_memcache(dram_size)) == [
        f"kv_cache_store_config.dram_size: {dram_size!r} is not a whole number of GB; write e.g. 40GB"
    ]
