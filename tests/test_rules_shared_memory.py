"""The MemCache long-context /dev/shm advisory (kvpool/policies/rules/shared_memory.py): Motor's MemCache FAQ has
decode crash with shm_crash on long-sequence requests at the default 4Gi /dev/shm, and 80k-token inputs run at
32Gi."""

from __future__ import annotations

import copy

from kvpool.policies.rules.sections import kv_transfer_configs
from kvpool.policies.rules.shared_memory import check_memcache_long_context_shm
from tests.service_configs import memcache_pool, mooncake_pool

FAQ = ("tokens with the MemCache pool: Motor's MemCache FAQ reports long-sequence requests crashing decode with "
       "shm_crash at a 4Gi /dev/shm, and 128 requests of 80k input and 1k output tokens running at 32Gi. Set "
       "dshm_size: 32Gi (more under heavier load), with pods.<side>.limits.memory above it where one is set.")


def advice(service: dict) -> list[tuple[str, str, object]]:
    deploy = service["motor_deploy_config"]
    findings = check_memcache_long_context_shm(
        service, kv_transfer_configs(service), service.get("kv_cache_store_config") or {}, deploy.get("dshm_size"))
    return [(f.path, f.message, f.example) for f in findings]


def long_context(service: dict, *sides: str, tokens: int = 81920) -> dict:
    service = copy.deepcopy(service)
    for side in sides:
        engine = service[f"motor_engine_{side}_config"]["engine_config"]
        engine.pop("max-model-len", None)
        engine["max_model_len"] = tokens
    return service


def test_the_default_shm_with_an_80k_decode_is_advised_to_the_faqs_32gi():
    assert advice(long_context(memcache_pool(), "decode")) == [(
        "motor_deploy_config.dshm_size", "is 4Gi (the default) while decode's max_model_len is 81920 " + FAQ, "32Gi")]


def test_both_sides_and_a_written_size_are_named():
    service = long_context(memcache_pool(), "prefill", "decode", tokens=131072)
    service["motor_deploy_config"]["dshm_size"] = "16Gi"
    assert advice(service) == [(
        "motor_deploy_config.dshm_size",
        "is 16Gi while prefill's max_model_len is 131072 and decode's max_model_len is 131072 " + FAQ, "32Gi")]


def test_vllms_dashed_spelling_counts_too():
    service = memcache_pool()
    service["motor_engine_decode_config"]["engine_config"]["max-model-len"] = 80000
    assert [path for path, _, _ in advice(service)] == ["motor_deploy_config.dshm_size"]


def test_nothing_below_the_faqs_length_at_32gi_or_without_memcache():
    assert advice(long_context(memcache_pool(), "decode", tokens=79999)) == []
    at_32 = long_context(memcache_pool(), "decode")
    at_32["motor_deploy_config"]["dshm_size"] = "32Gi"
    assert advice(at_32) == []
    at_32["motor_deploy_config"]["dshm_size"] = "32768Mi"
    assert advice(at_32) == []
    assert advice(long_context(mooncake_pool(), "decode")) == []


def test_a_store_connector_without_backend_pools_through_the_stores_memcache():
    service = long_context(memcache_pool(), "decode")
    del service["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"][
        "kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"]["backend"]
    assert [path for path, _, _ in advice(service)] == ["motor_deploy_config.dshm_size"]
    del service["kv_cache_store_config"]  # seed 000: no backend means memcache
    assert [path for path, _, _ in advice(service)] == ["motor_deploy_config.dshm_size"]
