"""The consistency rules of kvpool/policies/rules/, called directly, and through the settings layer."""

from __future__ import annotations

import pytest

from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.service_configs import memcache_pool, mooncake_pool, problems_of


def kv(role: str, backend: str | None) -> dict:
    extra = {} if backend is None else {"backend": backend}
    return {
        "kv_connector": "MultiConnector",
        "kv_role": role,
        "kv_connector_extra_config": {
            "connectors": [
                {"kv_connector": "MooncakeConnectorV1", "kv_role": role},
                {"kv_connector": "AscendStoreConnector", "kv_role": role, "kv_connector_extra_config": extra},
            ]
        },
    }


POOL = {"prefill": kv("kv_producer", "mooncake"), "decode": kv("kv_consumer", "mooncake")}

STORE_BACKEND_PATH = (
    "motor_engine_{side}_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]"
    ".kv_connector_extra_config.backend"
)


def test_backend_consistency_holds_for_equal_and_omitted_backends():
    configs = {"prefill": kv("kv_producer", "mooncake"), "decode": kv("kv_consumer", None)}
    assert rules.check_backend_consistency("mooncake", configs) == []


def test_backend_consistency_names_each_mismatching_side():
    configs = {"prefill": kv("kv_producer", "memcache"), "decode": kv("kv_consumer", "mooncake")}
    assert rules.check_backend_consistency("mooncake", configs) == [
        rules.Finding(
            STORE_BACKEND_PATH.format(side="prefill"),
            "is 'memcache' but kv_cache_store_config.backend is 'mooncake'; the two must be equal (seed FAQ 5: "
            "changing only one leaves the engines on the wrong pool). Set both to the backend you run.",
        )
    ]


def test_backend_consistency_reads_a_single_store_connector():
    single = {"kv_connector": "AscendStoreConnector", "kv_connector_extra_config": {"backend": "yuanrong"}}
    [finding] = rules.check_backend_consistency("memcache", {"prefill": single, "decode": None})
    assert finding.path == "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.backend"


def test_mooncake_eviction_ratios_present_and_in_range():
    assert rules.check_mooncake_eviction({"backend": "mooncake", "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2}) == []
    assert rules.check_mooncake_eviction({"backend": "memcache"}) == []


def test_mooncake_eviction_ratios_missing():
    findings = rules.check_mooncake_eviction({"backend": "mooncake"})
    assert [finding.path for finding in findings] == [
        "kv_cache_store_config.eviction_high_watermark_ratio",
        "kv_cache_store_config.eviction_ratio",
    ]
    assert findings[1].message == (
        "is required for backend 'mooncake' (the fraction of the pool freed per eviction); set a value in [0, 1], "
        "e.g. 0.4 (the seed suggests 0.1)."
    )


@pytest.mark.parametrize(
    ("high", "ratio", "expected"),
    [
        (0.0, 0.1, ["kv_cache_store_config.eviction_high_watermark_ratio: is 0.0; it must be in (0, 1] (a fraction of the pool), e.g. 0.6."]),
        (1.2, 0.1, ["kv_cache_store_config.eviction_high_watermark_ratio: is 1.2; it must be in (0, 1] (a fraction of the pool), e.g. 0.6."]),
        (0.9, -0.1, ["kv_cache_store_config.eviction_ratio: is -0.1; mooncake_master exits unless 0 <= eviction_ratio <= 1; use e.g. 0.4."]),
        (1.0, 1.0, []),
    ],
)
def test_mooncake_eviction_ratio_ranges(high, ratio, expected):
    store = {"backend": "mooncake", "eviction_high_watermark_ratio": high, "eviction_ratio": ratio}
    assert [str(finding) for finding in rules.check_mooncake_eviction(store)] == expected


def test_effective_transfer_timeout_is_vllm_ascends_default_when_unset():
    assert rules.effective_transfer_timeout_ms({}) == 33064
    assert rules.effective_transfer_timeout_ms({"HCCL_RDMA_TIMEOUT": "18", "HCCL_RDMA_RETRY_CNT": 7}) == 10516
    assert rules.effective_transfer_timeout_ms({"ASCEND_TRANSFER_TIMEOUT": "9000"}) == 9000
    assert rules.effective_connect_timeout_ms({}) == 3000


def test_lease_rule_holds_with_timeouts_below_the_lease():
    env = {"ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": 10000}
    store = {"backend": "mooncake", "default_kv_lease_ttl": 11000}
    assert rules.check_lease_exceeds_timeouts(store, {"prefill": env, "decode": env}, POOL) == []


def test_lease_rule_treats_unset_transfer_timeout_as_33064_ms():
    env = {"ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000"}
    findings = rules.check_lease_exceeds_timeouts({"backend": "mooncake"}, {"prefill": env, "decode": {}}, POOL)
    assert [str(finding) for finding in findings] == [
        "kv_cache_store_config.default_kv_lease_ttl: is 11000 ms but env.motor_engine_decode_env.ASCEND_TRANSFER_TIMEOUT "
        "is unset, so vllm-ascend uses 33064 ms; the lease must be longer than the timeout (seed FAQ 3). Set "
        "ASCEND_TRANSFER_TIMEOUT below 11000 (e.g. 10000) in env.motor_engine_decode_env, or raise "
        "default_kv_lease_ttl above 33064."
    ]


def test_lease_rule_equal_values_break_it():
    env = {"ASCEND_CONNECT_TIMEOUT": "11000", "ASCEND_TRANSFER_TIMEOUT": "100"}
    store = {"backend": "mooncake", "default_kv_lease_ttl": 11000}
    [finding] = rules.check_lease_exceeds_timeouts(store, {"prefill": env, "decode": env | {"ASCEND_CONNECT_TIMEOUT": "1"}}, POOL)
    assert "env.motor_engine_prefill_env.ASCEND_CONNECT_TIMEOUT is 11000 ms;" in finding.message


def test_lease_rule_ignores_a_master_that_serves_no_pool():
    transfer_only = {"prefill": {"kv_connector": "MooncakeConnectorV1"}, "decode": None}
    assert rules.check_lease_exceeds_timeouts({"backend": "mooncake"}, {}, transfer_only) == []


def test_kv_role_by_side():
    assert rules.check_kv_role_by_side("prefill", kv("kv_producer", None)) == []
    wrong = kv("kv_consumer", None)
    wrong["kv_connector_extra_config"]["connectors"][1]["kv_role"] = "kv_producer"
    assert [str(finding) for finding in rules.check_kv_role_by_side("decode", kv("kv_producer", None))][:1] == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_role: is 'kv_producer' but the decode side "
        "is kv_consumer (seed FAQ 1: a wrong kv_role stops KV transfer between P and D). Write 'kv_consumer' or "
        "leave kv_role out and it is filled in."
    ]
    assert [finding.path for finding in rules.check_kv_role_by_side("decode", wrong)] == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1].kv_role"
    ]


def test_ucm_connector_must_be_kv_both():
    ucm = kv("kv_producer", None)
    ucm["kv_connector_extra_config"]["connectors"][1] = {"kv_connector": "UCMConnector", "kv_role": "kv_producer"}
    [finding] = rules.check_kv_role_by_side("prefill", ucm)
    assert finding.message.startswith("is 'kv_producer' but UCMConnector always runs as kv_both")


def test_settings_fail_fast_with_the_rule_text_faq5_backend_mismatch():
    service = memcache_pool()
    service["kv_cache_store_config"] = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2}
    service["env"] = mooncake_pool()["env"]
    assert problems_of(service) == [
        f"{STORE_BACKEND_PATH.format(side=side)}: is 'memcache' but kv_cache_store_config.backend is 'mooncake'; the "
        "two must be equal (seed FAQ 5: changing only one leaves the engines on the wrong pool). Set both to the "
        "backend you run."
        for side in ("prefill", "decode")
    ]


def test_settings_fail_fast_on_missing_mooncake_ratios():
    service = mooncake_pool()
    del service["kv_cache_store_config"]["eviction_ratio"]
    assert problems_of(service) == [
        "kv_cache_store_config.eviction_ratio: is required for backend 'mooncake' (the fraction of the pool freed per "
        "eviction); set a value in [0, 1], e.g. 0.4 (the seed suggests 0.1)."
    ]


def test_settings_set_timeouts_below_the_default_lease_by_construction():
    service = mooncake_pool()
    del service["env"]
    settings = load_from_pulumi_config(service, "svc")
    for side in ("prefill", "decode"):
        env = settings.env_sections()[f"motor_engine_{side}_env"]
        assert (env["ASCEND_CONNECT_TIMEOUT"], env["ASCEND_TRANSFER_TIMEOUT"], env["PYTHONHASHSEED"]) == (
            "10000", "10000", "0"
        )


def test_settings_fail_fast_on_the_lease_rule():
    service = mooncake_pool()
    del service["env"]
    service["kv_cache_store_config"]["default_kv_lease_ttl"] = 8000
    assert problems_of(service) == [
        f"kv_cache_store_config.default_kv_lease_ttl: is 8000 ms but env.motor_engine_{side}_env.{name} is 10000 ms; "
        f"the lease must be longer than the timeout (seed FAQ 3). Set {name} below 8000 (e.g. 7000) in "
        f"env.motor_engine_{side}_env, or raise default_kv_lease_ttl above 10000."
        for side in ("prefill", "decode")
        for name in ("ASCEND_CONNECT_TIMEOUT", "ASCEND_TRANSFER_TIMEOUT")
    ]


def test_settings_fail_fast_on_kv_role_faq1():
    service = memcache_pool()
    service["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"]["kv_role"] = "kv_consumer"
    assert problems_of(service) == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_role: is 'kv_consumer' but the prefill side "
        "is kv_producer (seed FAQ 1: a wrong kv_role stops KV transfer between P and D). Write 'kv_producer' or "
        "leave kv_role out and it is filled in."
    ]
