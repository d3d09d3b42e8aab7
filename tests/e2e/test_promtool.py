"""Prometheus' own promtool (tools/real-engine/build.sh promtool) on the pool's rendered PrometheusRule.

`promtool check rules` parses every rule as Prometheus loads it. `promtool test rules` evaluates them on series
that start from the values of the recorded live scrape (tests/fixtures/pool_metrics/, see
tests/live/test_pool_metrics.py) and then meet, or do not meet, each alert's condition: every alert fires when its
condition holds for its `for`, and stays quiet before and otherwise. The stacks are the examples: mooncake-ha as it
is (eviction 0.6/0.4, lease 11000 ms, 2 masters), dev's MemCache with dashboards turned on. The Motor service's
alerts are mooncake-ha's with 2 prefill and 2 decode instances, on series that start from the recorded /metrics of
Motor's coordinator (tests/conformance/test_coordinator_metrics.py).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvpool.settings.loader import load_from_pulumi_config
from tests.e2e.realengine import BUILD_COMMAND, find_binaries
from tests.outside import absent
from tests.pool_metrics import RECORDINGS
from tests.program_runs import render, render_stack, stack_values

pytestmark = pytest.mark.e2e

POD = "mindie-motor-kv-store-0"
STANDBY = "mindie-motor-kv-store-1"
MIB = 2**20


@pytest.fixture(scope="module")
def promtool() -> Path:
    found, missing = find_binaries(("promtool",))
    if missing:
        absent(f"real engine: promtool not built; run `{BUILD_COMMAND} promtool`")
    return found["promtool"]


def rules_of(rendered, name: str = "mindie-motor-kv-store-alerts") -> dict[str, Any]:
    return {"groups": rendered.get("PrometheusRule", name)["spec"]["groups"]}


@pytest.fixture(scope="module")
def mooncake_rules() -> dict[str, Any]:
    return rules_of(render_stack("mooncake-ha"))


@pytest.fixture(scope="module")
def memcache_rules() -> dict[str, Any]:
    values = stack_values("dev")
    values["kv_cache_store_config"].update(service_monitor=True, dashboards=True)
    return rules_of(render(values, stack="dev"))


@pytest.fixture(scope="module")
def motor_rules() -> dict[str, Any]:
    values = stack_values("mooncake-ha")
    values["motor_deploy_config"].update(p_instances_num=2, d_instances_num=2)
    return rules_of(render(values, stack="mooncake-ha"), "mindie-motor-service-alerts")


def recorded(backend: str, metric: str) -> float:
    """The unlabelled sample of `metric` in the live scrape."""
    for line in RECORDINGS[backend].read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == metric:
            return float(value)
    raise LookupError(f"{metric} is not in {RECORDINGS[backend].name}")


def series(namespace: str, metric: str, values: str, pod: str = POD,
           job: str = "mindie-motor-kvs-master") -> dict[str, str]:
    """A series as the ServiceMonitor's scrape labels it."""
    return {"series": f'{metric}{{job="{job}",namespace="{namespace}",pod="{pod}"}}', "values": values}


VALUE = "{{ $value }}"
PERCENT = "{{ $value | humanizePercentage }}"
POD_LABEL = "{{ $labels.pod }}"
DURATION = "{{ $value | humanizeDuration }}"


def r_expr(rules: dict[str, Any], name: str) -> str:
    (rule,) = [r for g in rules["groups"] for r in g["rules"] if r["alert"] == name]
    return rule["expr"]


def quiet(name: str, eval_time: str) -> dict[str, Any]:
    return {"eval_time": eval_time, "alertname": name, "exp_alerts": []}


def fires(rules: dict[str, Any], name: str, eval_time: str, fills: dict[str, str],
          labels: dict[str, str] | None = None) -> dict[str, Any]:
    """The alert fires at eval_time, its annotations' templates filled as `fills` says."""
    (rule,) = [r for g in rules["groups"] for r in g["rules"] if r["alert"] == name]
    annotations = dict(rule["annotations"])
    for template, value in fills.items():
        annotations = {key: text.replace(template, value) for key, text in annotations.items()}
    return {"eval_time": eval_time, "alertname": name,
            "exp_alerts": [{"exp_labels": {**rule["labels"], **(labels or {})}, "exp_annotations": annotations}]}


def run_tests(promtool: Path, tmp_path: Path, rules: dict[str, Any], tests: list[dict[str, Any]]) -> str:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(rules))
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(
        {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}, sort_keys=False))
    done = subprocess.run([str(promtool), "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("backend, count", [("mooncake", 6), ("memcache", 2), ("motor", 3)])
def test_promtool_checks_the_rendered_rules(promtool, tmp_path, request, backend, count):
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(request.getfixturevalue(f"{backend}_rules")))
    done = subprocess.run([str(promtool), "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"Checking rules.yaml\n  SUCCESS: {count} rules found\n\n"), done.stderr


def test_mooncake_alerts_fire_when_their_condition_holds_and_stay_quiet_otherwise(promtool, tmp_path, mooncake_rules):
    ns, r = "mooncake-ha", mooncake_rules
    capacity = recorded("mooncake", "master_total_capacity_bytes")
    allocated = recorded("mooncake", "master_allocated_bytes")
    assert capacity == 64 * MIB  # the capacity run's engine mounts a 64 MiB segment and writes 3 times as much
    lease_s = 11  # mooncake-ha's default_kv_lease_ttl
    failures = recorded("mooncake", "master_put_start_failures_total")
    batch_failed = recorded("mooncake", "master_batch_put_start_failed_items_total")
    evicted = recorded("mooncake", "master_evicted_size_bytes")
    standby = recorded("mooncake", "ha_standby_state")
    slow = round(capacity / lease_s * 60 / 2)  # bytes a minute: half the capacity per lease
    # The block lifetime mooncake-ha's sizing predicts (18.56 s), and the bytes a minute eviction frees when blocks
    # live exactly that long: the 0.36 of the pool eviction leaves (0.6 x (1 - 0.4)) once per lifetime.
    lifetime = float(r_expr(r, "KVPoolShorterLivedThanSized").rpartition(" < ")[2])
    assert lifetime == round(load_from_pulumi_config(stack_values(ns), ns).pool_sizing().lifetime_seconds, 2) == 18.56
    sized = capacity * 0.36 / lifetime * 60
    tests = [
        {  # both masters answer for 10 minutes, then the standby goes: 1 of 2 < ha.master_replicas
            "name": "master down",
            "input_series": [series(ns, "up", "1x30"), series(ns, "up", "1x10 0x20", pod=STANDBY)],
            "alert_rule_test": [quiet("KVPoolMasterDown", "10m"),
                                quiet("KVPoolMasterDown", "11m"),  # down, not yet for 1m
                                fires(r, "KVPoolMasterDown", "13m", {VALUE: "1"})],
        },
        {  # no put fails for 10 minutes, then 3 a minute
            "name": "put failures",
            "input_series": [series(ns, "master_put_start_failures_total", f"{failures:g}+0x10 {failures + 3:g}+3x10"),
                             series(ns, "master_batch_put_start_failed_items_total", f"{batch_failed:g}+0x20")],
            "alert_rule_test": [quiet("KVPoolPutFailures", "10m"),
                                fires(r, "KVPoolPutFailures", "20m", {VALUE: "15"})],
        },
        {  # the recorded use, then half the pool (below 0.6) for 28 minutes, then 0.75 for 10
            "name": "above the eviction watermark",
            "input_series": [
                series(ns, "master_total_capacity_bytes", f"{capacity:g}x40"),
                series(ns, "master_allocated_bytes", f"{allocated:g} {capacity / 2:g}x28 {capacity * 3 / 4:g}x10"),
            ],
            "alert_rule_test": [quiet("KVPoolAboveEvictionWatermark", "29m"),
                                quiet("KVPoolAboveEvictionWatermark", "33m"),  # above, not yet for 5m
                                fires(r, "KVPoolAboveEvictionWatermark", "36m", {PERCENT: "75%"})],
        },
        {  # eviction frees half the capacity per lease for 20 minutes, then twice the capacity per lease
            "name": "eviction outpaces the lease",
            "input_series": [series(ns, "master_total_capacity_bytes", f"{capacity:g}x40"), series(
                ns, "master_evicted_size_bytes",
                f"{evicted:g}+{slow:g}x20 {evicted + 21 * slow:g}+{4 * slow:g}x20",
            )],
            "alert_rule_test": [quiet("KVPoolEvictionOutpacesLease", "20m"),
                                quiet("KVPoolEvictionOutpacesLease", "27m"),  # fast, not yet for 10m
                                fires(r, "KVPoolEvictionOutpacesLease", "37m", {})],
        },
        {  # blocks live twice the predicted lifetime for 20 minutes, then half of it
            "name": "shorter lived than sized",
            "input_series": [series(ns, "master_total_capacity_bytes", f"{capacity:g}x40"), series(
                ns, "master_evicted_size_bytes",
                f"{evicted:g}+{sized / 2:g}x20 {evicted + 21 * sized / 2:g}+{2 * sized:g}x20",
            )],
            "alert_rule_test": [quiet("KVPoolShorterLivedThanSized", "20m"),
                                quiet("KVPoolShorterLivedThanSized", "27m"),  # short-lived, not yet for 10m
                                fires(r, "KVPoolShorterLivedThanSized", "37m", {DURATION: f"{lifetime / 2:g}s"})],
        },
        {  # the standby watches (its recorded state, then 3 WATCHING), is promoted at 20m, then stays PROMOTED
            "name": "leader change",
            "input_series": [series(ns, "ha_standby_state", f"{standby:g} 3x19 6 7x40", pod=STANDBY)],
            "alert_rule_test": [quiet("KVPoolMasterLeaderChanged", "19m"),
                                fires(r, "KVPoolMasterLeaderChanged", "22m", {POD_LABEL: STANDBY},
                                      {"job": "mindie-motor-kvs-master", "namespace": ns, "pod": STANDBY}),
                                quiet("KVPoolMasterLeaderChanged", "50m")],  # no change for 15m: quiet
        },
    ]
    assert run_tests(promtool, tmp_path, r, tests) == "Processing test file: tests.yaml\n  SUCCESS\n\n"


def test_memcache_alerts_fire_when_their_condition_holds_and_stay_quiet_otherwise(promtool, tmp_path, memcache_rules):
    ns, r = "dev", memcache_rules
    failures = recorded("memcache", "memcache_alloc_failures_total")
    assert failures == 1  # the live run's client put, refused (no LocalService memory without an NPU)
    batch_failed = recorded("memcache", "memcache_batch_alloc_failures_total")
    tests = [
        {
            "name": "meta service down",
            "input_series": [series(ns, "up", "1x10 0x10")],
            "alert_rule_test": [quiet("KVPoolMasterDown", "10m"),
                                fires(r, "KVPoolMasterDown", "13m", {VALUE: "0"})],
        },
        {
            "name": "put failures",
            "input_series": [series(ns, "memcache_alloc_failures_total", f"{failures:g}+0x10 {failures + 2:g}+2x10"),
                             series(ns, "memcache_batch_alloc_failures_total", f"{batch_failed:g}+0x20")],
            "alert_rule_test": [quiet("KVPoolPutFailures", "10m"),
                                fires(r, "KVPoolPutFailures", "20m", {VALUE: "10"})],
        },
    ]
    assert run_tests(promtool, tmp_path, r, tests) == "Processing test file: tests.yaml\n  SUCCESS\n\n"


def test_motor_service_alerts_fire_when_their_condition_holds_and_stay_quiet_otherwise(promtool, tmp_path, motor_rules):
    ns, r = "mooncake-ha", motor_rules
    coordinator = "mindie-motor-coordinator-0"

    def motor(metric: str, values: str) -> dict[str, str]:
        return series(ns, metric, values, pod=coordinator, job="mindie-motor-coordinator-obs")

    active_prefill = recorded("motor", "motor:active_prefill_workers")
    active_decode = recorded("motor", "motor:active_decode_workers")
    assert (active_prefill, active_decode) == (2, 1)  # the recording: both prefill stubs, one of the two decode
    tests = [
        {
            "name": "coordinator down",
            "input_series": [motor("up", "1x10 0x10")],
            "alert_rule_test": [quiet("MotorCoordinatorDown", "10m"),
                                quiet("MotorCoordinatorDown", "11m"),  # down, not yet for 1m
                                fires(r, "MotorCoordinatorDown", "13m", {})],
        },
        {  # 2 of 2 prefill instances for 10 minutes, then the recorded decode count (1 of 2) and one prefill gone
            "name": "workers inactive",
            "input_series": [motor("motor:active_prefill_workers", f"{active_prefill:g}x10 1x20"),
                             motor("motor:active_decode_workers", f"2x10 {active_decode:g}x20")],
            "alert_rule_test": [quiet("MotorPrefillWorkersInactive", "10m"),
                                quiet("MotorPrefillWorkersInactive", "14m"),  # short, not yet for 5m
                                fires(r, "MotorPrefillWorkersInactive", "16m", {VALUE: "1"}),
                                quiet("MotorDecodeWorkersInactive", "10m"),
                                fires(r, "MotorDecodeWorkersInactive", "16m", {VALUE: "1"})],
        },
        {  # no coordinator series at all: nothing is known to serve
            "name": "no worker series",
            "input_series": [motor("up", "1x20")],
            "alert_rule_test": [fires(r, "MotorPrefillWorkersInactive", "10m", {VALUE: "0"}),
                                fires(r, "MotorDecodeWorkersInactive", "10m", {VALUE: "0"})],
        },
    ]
    assert run_tests(promtool, tmp_path, r, tests) == "Processing test file: tests.yaml\n  SUCCESS\n\n"
