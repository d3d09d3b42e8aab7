"""KVStore with dashboards: the Grafana dashboard ConfigMap (the sidecar's label) and the PrometheusRule, their
queries and the thresholds taken from the stack's settings; and with them the Motor service's, on a ServiceMonitor of
the coordinator's obs Service."""

from __future__ import annotations

import json

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from tests.pool_metrics import (
    RECORDINGS,
    exposed_families,
    names_in,
    queried_metrics,
    rendered_queries,
)
from tests.program_runs import render, stack_values

SEL = 'job="mindie-motor-kvs-master",namespace="svc"'
DASHBOARD = ("ConfigMap", "mindie-motor-kv-store-dashboard")
RULES = ("PrometheusRule", "mindie-motor-kv-store-alerts")


def store(stack: str, **settings) -> dict:
    values = stack_values(stack)
    values["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    values["kv_cache_store_config"].update(settings)
    return values


def mooncake(**settings) -> dict:
    return store("mooncake-layerwise", service_monitor=True, dashboards=True, eviction_high_watermark_ratio=0.8,
                 eviction_ratio=0.15, default_kv_lease_ttl=12000, **settings)


def rules_of(rendered) -> dict[str, dict]:
    (group,) = rendered.get(*RULES)["spec"]["groups"]
    return {rule["alert"]: rule for rule in group["rules"]}


def test_dashboards_are_opt_in():
    rendered = render(store("mooncake-layerwise", service_monitor=True))
    assert DASHBOARD not in rendered.objects and RULES not in rendered.objects


def test_dashboards_need_the_service_monitor():
    with pytest.raises(ProgramError) as caught:
        render(store("mooncake-layerwise", dashboards=True))
    assert "dashboards: true needs service_monitor: true; the dashboard and alerts query the series Prometheus " \
        "scrapes through the store's ServiceMonitor" in str(caught.value)


def test_dashboards_refuse_a_coordinator_serving_tls():
    values = mooncake()
    values["motor_deploy_config"]["tls_config"] = {"mgmt_tls_config": {"enable_tls": True}}
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert "kv_cache_store_config.dashboards: true scrapes the coordinator's /metrics over plain http, but " \
        "motor_deploy_config.tls_config.mgmt_tls_config.enable_tls is true (the obs port then serves TLS): set " \
        "dashboards: false, or mgmt_tls_config.enable_tls: false" in str(caught.value)
    values["motor_deploy_config"]["tls_config"] = {"mgmt_tls_config": {"enable_tls": False}}
    assert DASHBOARD in render(values).objects


@pytest.mark.parametrize("written", ["true", "false", 1])
def test_dashboards_read_enable_tls_as_motor_does(written):
    """Motor's `if ...enable_tls:` (observability_server.py:146) turns TLS on for any truthy value, "false" too."""
    values = mooncake()
    values["motor_deploy_config"]["tls_config"] = {"mgmt_tls_config": {"enable_tls": written}}
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert f"motor_deploy_config.tls_config.mgmt_tls_config.enable_tls is {json.dumps(written)}, which Motor reads " \
        "as true (the obs port then serves TLS)" in str(caught.value)


def test_dashboard_configmap_is_labelled_for_the_grafana_sidecar():
    configmap = render(mooncake()).get(*DASHBOARD)
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert list(configmap["data"]) == ["kv-pool-svc.json"]
    board = json.loads(configmap["data"]["kv-pool-svc.json"])
    assert board["title"] == "KV pool (mooncake) - svc"
    assert board["uid"] == "kvpool-348c658682ae8701d3e9"  # sha256("svc"): a 63-character namespace fits Grafana's 40
    assert [p["title"] for p in board["panels"]] == [
        "Capacity and used", "Used against the eviction watermark", "Eviction", "Puts", "Gets", "Leases", "Masters",
    ]
    assert [(v["type"], v["name"], v["query"]) for v in board["templating"]["list"]] == [
        ("datasource", "datasource", "prometheus"),
    ]
    watermark = board["panels"][1]
    assert watermark["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
    assert [(t["refId"], t["expr"], t["legendFormat"]) for t in watermark["targets"]] == [
        ("A", f"max(master_allocated_bytes{{{SEL}}}) / max(master_total_capacity_bytes{{{SEL}}})", "used"),
        ("B", "vector(0.8)", "eviction_high_watermark_ratio"),
    ]
    leases = board["panels"][5]
    assert leases["targets"][0]["expr"] == (
        f"(sum(rate(master_get_replica_list_requests_total{{{SEL}}}[5m])) + "
        f"sum(rate(master_batch_get_replica_list_items_total{{{SEL}}}[5m])) + "
        f"sum(rate(master_exist_key_requests_total{{{SEL}}}[5m])) + "
        f"sum(rate(master_batch_exist_key_items_total{{{SEL}}}[5m]))) * 12"
    )


def test_mooncake_alert_thresholds_come_from_the_settings():
    rules = rules_of(render(mooncake()))
    assert list(rules) == [
        "KVPoolMasterDown", "KVPoolPutFailures", "KVPoolAboveEvictionWatermark", "KVPoolEvictionOutpacesLease",
        "KVPoolShorterLivedThanSized",
    ]
    assert rules["KVPoolMasterDown"]["expr"] == f"(sum(up{{{SEL}}}) or vector(0)) < 1"
    assert rules["KVPoolAboveEvictionWatermark"] == {
        "alert": "KVPoolAboveEvictionWatermark",
        "expr": f"max(master_allocated_bytes{{{SEL}}}) / max(master_total_capacity_bytes{{{SEL}}}) > 0.8",
        "for": "5m",
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": "The Mooncake pool of svc stays above its eviction watermark",
            "description": "{{ $value | humanizePercentage }} of the pool is used, above eviction_high_watermark_ratio "
            "0.8, for 5 minutes: eviction (every ~10 ms, freeing eviction_ratio 0.15) does not bring it back, so "
            "objects are leased (default_kv_lease_ttl 12000 ms) or pinned faster than they can go.",
        },
    }
    assert rules["KVPoolEvictionOutpacesLease"]["expr"] == (
        f"sum(rate(master_evicted_size_bytes{{{SEL}}}[5m])) * 12 > max(master_total_capacity_bytes{{{SEL}}})"
    )
    assert rules["KVPoolEvictionOutpacesLease"]["for"] == "10m"
    assert "every default_kv_lease_ttl (12000 ms)" in rules["KVPoolEvictionOutpacesLease"]["annotations"]["description"]
    assert rules["KVPoolPutFailures"]["expr"] == (
        f"(sum(increase(master_put_start_failures_total{{{SEL}}}[5m])) + "
        f"sum(increase(master_batch_put_start_failed_items_total{{{SEL}}}[5m]))) > 0"
    )
    assert rules["KVPoolPutFailures"]["annotations"]["description"].startswith(
        "{{ $value }} puts failed in 5 minutes. Eviction starts at eviction_high_watermark_ratio 0.8 and frees "
        "eviction_ratio 0.15 of the pool"
    )


# Qwen3-8B's KV (36 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes) per token, and mooncake-layerwise's pool: a
# 29 GB segment from each of the prefill and decode instance's engine ranks.
QWEN3_8B_BYTES_PER_TOKEN = 36 * 8 * 128 * 2 * 2
POOL_BYTES = 2 * 29 * 2**30
FLOOR = 0.8 * (1 - 0.15)  # what eviction leaves: the watermark less eviction_ratio of it


def test_the_sizing_alert_compares_the_measured_block_lifetime_with_the_predicted_one():
    rule = rules_of(render(mooncake()))["KVPoolShorterLivedThanSized"]
    lifetime = POOL_BYTES * FLOOR / (8192 * QWEN3_8B_BYTES_PER_TOKEN)  # one prefill instance's default rate
    assert f"{lifetime:.2f}" == "35.06"
    assert rule == {
        "alert": "KVPoolShorterLivedThanSized",
        "expr": f"max(master_total_capacity_bytes{{{SEL}}}) * 0.68 / "
                f"sum(rate(master_evicted_size_bytes{{{SEL}}}[5m])) < 35.06",
        "for": "10m",
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": "Blocks in the Mooncake pool of svc are evicted sooner than the sizing predicts",
            "description": "A block now stays {{ $value | humanizeDuration }} (the 0.68 of the pool eviction leaves, "
            "over the bytes evicted per second), less than the 35.06 s the stack's sizing predicts for its writers: "
            "1 prefill instance(s) at 8192 tokens/s (max_num_batched_tokens 8192 x 1 DP rank(s) per second). They "
            "put more than planned: set kv_pool_sizing.prefill_tokens_per_second to the measured rate and size the "
            "pool again (`kvpool size`).",
        },
    }


def test_the_sizing_alert_follows_the_stated_write_rate():
    values = mooncake()
    values["kv_pool_sizing"] = {"prefill_tokens_per_second": 2048}
    rule = rules_of(render(values))["KVPoolShorterLivedThanSized"]
    assert f"{POOL_BYTES * FLOOR / (2048 * QWEN3_8B_BYTES_PER_TOKEN):.2f}" == "140.23"
    assert rule["expr"].endswith(" < 140.23")
    assert "1 prefill instance(s) at 2048 tokens/s (kv_pool_sizing.prefill_tokens_per_second)" in \
        rule["annotations"]["description"]


def test_a_pool_other_services_write_to_has_no_sizing_alert():
    """Their engines write too, and this program cannot see them (the fleet's sizing counts them)."""
    assert "KVPoolShorterLivedThanSized" not in rules_of(render(mooncake(allowed_consumers=["service-b"])))


def test_mooncake_ha_adds_the_leader_change_alert_and_counts_every_master():
    rules = rules_of(render(mooncake(ha={"master_replicas": 3})))
    assert rules["KVPoolMasterDown"]["expr"] == f"(sum(up{{{SEL}}}) or vector(0)) < 3"
    assert rules["KVPoolMasterDown"]["annotations"]["description"] == (
        "{{ $value }} of the 3 mooncake_master pool server(s) the stack runs (ha.master_replicas) answer Prometheus; "
        "engines whose master is gone can neither put nor get KV blocks."
    )
    assert rules["KVPoolMasterLeaderChanged"]["expr"] == (
        f"changes(ha_standby_state{{{SEL}}}[15m]) > 0 and max_over_time(ha_standby_state{{{SEL}}}[15m]) >= 6"
    )
    assert rules["KVPoolMasterLeaderChanged"]["for"] == "0m"


def test_memcache_dashboard_and_alerts():
    rendered = render(store("dev", service_monitor=True, dashboards=True))
    assert list(rules_of(rendered)) == ["KVPoolMasterDown", "KVPoolPutFailures"]
    assert rules_of(rendered)["KVPoolPutFailures"]["expr"] == (
        f"(sum(increase(memcache_alloc_failures_total{{{SEL}}}[5m])) + "
        f"sum(increase(memcache_batch_alloc_failures_total{{{SEL}}}[5m]))) > 0"
    )
    board = json.loads(rendered.get(*DASHBOARD)["data"]["kv-pool-svc.json"])
    assert [p["title"] for p in board["panels"]] == ["Capacity and used", "Eviction", "Puts", "Gets", "MetaService"]


def test_yuanrong_refuses_dashboards():
    with pytest.raises(ProgramError) as caught:
        render(store("yuanrong", service_monitor=True, dashboards=True))
    assert "kv_cache_store_config.dashboards: is for mooncake and memcache only: the openYuanrong worker exposes no " \
        "Prometheus metrics endpoint for a dashboard to query; leave it false" in str(caught.value)


@pytest.mark.parametrize("backend", ["mooncake", "memcache", "motor"])
def test_every_queried_metric_is_in_the_recorded_scrape(backend):
    """The recording is a live scrape of the real binary (tests/live/test_pool_metrics.py checks it still is), or
    Motor's coordinator's /metrics (tests/conformance/test_coordinator_metrics.py)."""
    exposed = exposed_families(RECORDINGS[backend].read_text())
    assert sorted(queried_metrics(backend) - exposed) == []


def test_names_in_reads_metric_names_only():
    expr = 'sum by (medium) (rate(memcache_alloc_failures_total{job="a b",medium="up"}[5m])) * 1e3 > up or vector(0.8)'
    assert names_in(expr) == {"memcache_alloc_failures_total", "up"}
    assert "up" not in queried_metrics("mooncake")  # Prometheus writes it; no binary exposes it
    assert "up" in {name for expr in rendered_queries("mooncake") for name in names_in(expr)}


MOTOR_SEL = 'job="mindie-motor-coordinator-obs",namespace="svc"'
MOTOR_DASHBOARD = ("ConfigMap", "mindie-motor-service-dashboard")
MOTOR_RULES = ("PrometheusRule", "mindie-motor-service-alerts")
COORDINATOR_MONITOR = ("ServiceMonitor", "mindie-motor-coordinator-obs")


def motor_service(prefill: int, decode: int) -> dict:
    values = mooncake()
    values["motor_deploy_config"].update(p_instances_num=prefill, d_instances_num=decode)
    return values


def test_the_motor_service_dashboard_comes_with_the_pools():
    rendered = render(store("mooncake-layerwise", service_monitor=True))
    assert {MOTOR_DASHBOARD, MOTOR_RULES, COORDINATOR_MONITOR} & set(rendered.objects) == set()
    rendered = render(motor_service(3, 2))
    monitor = rendered.get(*COORDINATOR_MONITOR)
    assert monitor["spec"] == {
        "selector": {"matchLabels": {"app": "mindie-motor-coordinator"}},
        "namespaceSelector": {"matchNames": ["svc"]},
        "endpoints": [{"port": "obs", "path": "/metrics", "interval": "30s"}],
    }
    # It scrapes the obs Service: the one coordinator Service with a port of that name.
    obs = rendered.get("Service", "mindie-motor-coordinator-obs")
    assert obs["metadata"]["labels"]["app"] == "mindie-motor-coordinator"
    assert [p["name"] for p in obs["spec"]["ports"]] == ["obs"]
    assert [p["name"] for p in rendered.get("Service", "mindie-motor-coordinator-infer")["spec"]["ports"]] == ["infer"]


def test_motor_service_dashboard_panels_and_queries():
    configmap = render(motor_service(3, 2)).get(*MOTOR_DASHBOARD)
    assert configmap["metadata"]["labels"]["grafana_dashboard"] == "1"
    assert configmap["metadata"]["labels"]["app"] == "mindie-motor-coordinator"
    assert list(configmap["data"]) == ["motor-service-svc.json"]
    board = json.loads(configmap["data"]["motor-service-svc.json"])
    assert (board["title"], board["uid"], board["tags"]) == (
        "Motor service - svc", "motor-348c658682ae8701d3e9", ["motor-kvpool", "motor"])
    panels = {p["title"]: [(t["expr"], t["legendFormat"]) for t in p["targets"]] for p in board["panels"]}
    assert panels == {
        "Prefill workers": [(f"max(motor:active_prefill_workers{{{MOTOR_SEL}}})", "active"),
                            (f"max(motor:inactive_prefill_workers{{{MOTOR_SEL}}})", "inactive"),
                            ("vector(3)", "p_instances_num")],
        "Decode workers": [(f"max(motor:active_decode_workers{{{MOTOR_SEL}}})", "active"),
                           (f"max(motor:inactive_decode_workers{{{MOTOR_SEL}}})", "inactive"),
                           ("vector(2)", "d_instances_num")],
        "Tokens per second": [(f"sum(rate(vllm:prompt_tokens_total{{{MOTOR_SEL}}}[5m]))", "prompt"),
                              (f"sum(rate(vllm:generation_tokens_total{{{MOTOR_SEL}}}[5m]))", "generation")],
        "Engines' KV cache usage": [(f"vllm:kv_cache_usage_perc{{{MOTOR_SEL}}}", "mean {{model_name}}")],
        "Prefix cache hit rate": [
            (f"sum(rate(vllm:prefix_cache_hits_total{{{MOTOR_SEL}}}[5m])) / "
             f"sum(rate(vllm:prefix_cache_queries_total{{{MOTOR_SEL}}}[5m]))", "5m"),
            (f"max(vllm:prefix_cache_hit_rate{{{MOTOR_SEL}}})", "since start"),
        ],
        "Time to first token": [
            (f"histogram_quantile({q}, sum by (le) (rate(vllm:time_to_first_token_seconds_bucket{{{MOTOR_SEL}}}[5m])))",
             legend) for q, legend in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99"))
        ],
        "Time per output token": [
            (f"histogram_quantile({q}, sum by (le) (rate(vllm:time_per_output_token_seconds_bucket{{{MOTOR_SEL}}}[5m])))",
             legend) for q, legend in ((0.5, "p50"), (0.95, "p95"), (0.99, "p99"))
        ],
        "Requests": [(f"sum(vllm:num_requests_waiting{{{MOTOR_SEL}}})", "waiting"),
                     (f"sum(vllm:num_requests_running{{{MOTOR_SEL}}})", "running")],
    }
    assert board["panels"][0]["description"] == (
        "Active: prefill instances Motor's scheduler lists as available whose every engine answered the "
        "coordinator's /metrics; inactive: the rest of motor_deploy_config.p_instances_num 3."
    )


def test_motor_service_alert_thresholds_are_the_instance_counts():
    (group,) = render(motor_service(3, 1)).get(*MOTOR_RULES)["spec"]["groups"]
    assert group["name"] == "motor-service"
    rules = {rule["alert"]: rule for rule in group["rules"]}
    assert list(rules) == ["MotorCoordinatorDown", "MotorPrefillWorkersInactive", "MotorDecodeWorkersInactive"]
    assert rules["MotorCoordinatorDown"]["expr"] == f"(sum(up{{{MOTOR_SEL}}}) or vector(0)) < 1"
    assert rules["MotorPrefillWorkersInactive"] == {
        "alert": "MotorPrefillWorkersInactive",
        "expr": f"(max(motor:active_prefill_workers{{{MOTOR_SEL}}}) or vector(0)) < 3",
        "for": "5m",
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": "Prefill instances of svc are not serving",
            "description": "{{ $value }} of the 3 prefill instance(s) the stack runs (motor_deploy_config."
            "p_instances_num) are active in Motor's coordinator for 5 minutes: the others are not registered with "
            "the controller, or one of their engines does not answer /metrics. Without a coordinator series (it is "
            "down, or no instance at all is available) the count is 0.",
        },
    }
    assert rules["MotorDecodeWorkersInactive"]["expr"] == (
        f"(max(motor:active_decode_workers{{{MOTOR_SEL}}}) or vector(0)) < 1"
    )
    assert rules["MotorDecodeWorkersInactive"]["labels"] == {"severity": "critical"}  # one of one: none serves
