"""Mooncake (mooncake-transfer-engine-non-cuda 0.3.13.post1) run with what the mooncake-layerwise and
mooncake-ha stacks render; the few changes beyond the loopback ones are listed in mooncake_plans.py."""

from __future__ import annotations

import json

import pytest

from tests.live.mooncake_plans import (
    CAPACITY_PUTS,
    CLIENT_FILE,
    HA_KEYS,
    STORE,
    basic_plan,
    capacity_plan,
    ha_plan,
    machine_sized_client_files,
    master_flag,
)
from bench.mooncake_capacity import WRITER
from tests.live.plans import python, run_scenario
from tests.live.rendered import Rendered, render, render_variant


@pytest.fixture(scope="module")
def layerwise(work) -> Rendered:
    return render("mooncake-layerwise", work / "out")


# ---------------------------------------------------------------------------------------------------------------
# Put/get, admin HTTP server, lease


@pytest.fixture(scope="module")
def basic(layerwise, work) -> dict:
    _, plan = basic_plan(layerwise, work, machine_sized_client_files)
    return run_scenario("mooncake_basic.py", "mooncake", plan, work, timeout=60)


def test_engine_client_from_rendered_mooncake_json_puts_and_gets(basic):
    assert basic["setup"]["setup_rc"] == 0
    ops = basic["ops"]
    assert (ops["put_rc"], ops["get_ok"], ops["exist"], ops["get_b_ok"]) == (0, True, 1, True)


def test_master_answers_health_and_metrics_on_rendered_metrics_port(basic):
    assert basic["health"]["status"] == "ok"
    assert (basic["health"]["role"], basic["health"]["ha_state"]) == ("leader", "serving")
    assert basic["metrics_status"] == 200
    metrics = basic["metrics"]
    assert metrics["master_key_count"] == 2  # live-k and lease-b (lease-a was removed)
    assert metrics["master_active_clients"] == 1
    assert metrics["master_total_capacity_bytes"] == 2**30  # the engine's segment, BASIC_SEGMENT "1GB"


def test_rendered_probes_pass_against_the_master(basic):
    """readiness tcpSocket rpc, liveness httpGet /health on metrics, run as the kubelet runs them."""
    assert basic["probes"] == {"readiness": {"ok": True, "detail": "connected"},
                               "liveness": {"ok": True, "detail": "status 200, body complete: True"}}


def test_lease_blocks_remove_for_the_rendered_ttl(basic, layerwise):
    """get() grants a lease of --default_kv_lease_ttl (the stack's own 11000 ms, not a shortened one: the
    test costs those 11 s); until it ends remove() returns -706 OBJECT_HAS_LEASE. A put alone grants none."""
    ttl_s = int(master_flag(layerwise.container("Deployment", STORE), "default_kv_lease_ttl")) / 1000
    assert ttl_s == 11.0
    assert basic["ops"]["remove_after_put_rc"] == 0
    lease = basic["lease"]
    assert lease["first_remove_rc"] == -706
    assert lease["final_remove_rc"] == 0
    assert ttl_s - 0.2 <= lease["blocked_s"] <= ttl_s + 1.0, lease
    assert lease["exist_after"] == 0


# ---------------------------------------------------------------------------------------------------------------
# Capacity under eviction: what a refused put is. How many puts each eviction pair keeps at which pace is a timing,
# measured by bench/mooncake_example_eviction.py (bench/results/mooncake-example-eviction.md), never floored here.


@pytest.fixture(scope="module")
def capacity(work) -> dict:
    plan = capacity_plan(work, reps=1, fills=("same",))
    return run_scenario("mooncake_capacity.py", "mooncake", plan, work / "capacity", timeout=120)


def test_capacity_fastest_writer_a_refused_put_is_pool_full_and_counted(capacity):
    """One prepared value put back to back (~2-3 GB/s here) can outrun the eviction thread (it runs every 10 ms): with
    the example's pair and with 0.9/0.1, every put the master refuses is NO_AVAILABLE_HANDLE (-200, pool full), nothing
    else, and the master counts each one in master_put_start_alloc_failures_total, the metric the dashboards alert on."""
    runs = capacity["runs"]["same"]
    assert sorted(runs) == ["0.6/0.4", "0.9/0.1"]
    for label, [run] in runs.items():
        assert run["master_total_capacity_bytes"] == 64 * 2**20, label
        assert set(run["rcs"]) <= {"0", "-200"}, (label, run["rcs"])
        assert run["master_put_start_alloc_failures_total"] == CAPACITY_PUTS - run["ok"], label
        assert run["rcs"].get("-200", 0) == CAPACITY_PUTS - run["ok"], label


GENEROUS_PACE_MS = "20"
"""ms per MiB (bench/mooncake_writer.py `fill N PACE`): 0.8 % of the 64 MB pool per 10 ms eviction period, ten times
slower than the slowest pace bench/results/eviction.md measured. Above the example's 0.6 watermark the pool has
25.6 MiB of room, 512 ms of writes at this pace: a put is refused only if the eviction thread stalls that long while
the master goes on serving puts. How much a faster writer keeps under load is bench/mooncake_example_eviction.py's
measurement (bench/results/mooncake-example-eviction.md), not a test's."""


@pytest.fixture(scope="module")
def generous(work) -> dict:
    plan = capacity_plan(work / "generous", reps=1, fills=(GENEROUS_PACE_MS,))
    plan = {**plan, "settings": plan["settings"][:1],  # the example stack's own pair
            "engine": {**plan["engine"], "argv": [python("mooncake"), str(WRITER)]}}
    return run_scenario("mooncake_capacity.py", "mooncake", plan, work / "generous" / "capacity", timeout=60)


def test_capacity_at_a_generous_pace_the_example_eviction_accepts_every_put(generous):
    """3x the pool written at GENEROUS_PACE_MS: every put is accepted, and only because eviction made room (what
    went in is resident or evicted, nothing refused)."""
    [(label, [run])] = generous["runs"][GENEROUS_PACE_MS].items()
    assert label == "0.6/0.4"
    assert run["master_total_capacity_bytes"] == 64 * 2**20
    assert (run["ok"], run["rcs"], run["master_put_start_alloc_failures_total"]) == (
        CAPACITY_PUTS, {"0": CAPACITY_PUTS}, 0)
    assert (run["master_key_count"] <= 64, run["master_key_count"] + run["master_evicted_key_count"]) == (
        True, CAPACITY_PUTS)


# ---------------------------------------------------------------------------------------------------------------
# Standalone store + HA (mooncake-ha stack)


@pytest.fixture(scope="module")
def ha_rendered(work) -> Rendered:
    """mooncake-ha with store_mode standalone, on tcp (no NPU here; the stack itself is embedded): the store process
    runs as Motor's node manager starts it in the engine container (mooncake_plans.motor_store_process)."""
    return render_variant("mooncake-ha", "mooncake-ha", {"store_mode": "standalone", "protocol": "tcp"}, work)


@pytest.fixture(scope="module")
def ha(ha_rendered, work) -> dict:
    return run_scenario("mooncake_ha.py", "mooncake", ha_plan(ha_rendered, work), work / "ha", timeout=150)


def test_ha_scenario_runs_the_rendered_ha_flags(ha_rendered):
    """What the HA scenario relies on comes from the rendering, not from this test."""
    master = ha_rendered.container("Deployment", STORE)
    flags = {flag: master_flag(master, flag) for flag in ("enable_ha", "ha_backend_type", "enable_oplog")}
    assert flags == {"enable_ha": "true", "ha_backend_type": "etcd", "enable_oplog": "true"}
    assert len(master_flag(master, "etcd_endpoints").split(";")) == 3
    assert json.loads(ha_rendered.kv_store["client_files"][CLIENT_FILE])["master_server_address"].startswith("etcd://")
    assert json.loads(ha_rendered.kv_store["client_files"][CLIENT_FILE])["global_segment_size"] == 0


def test_standalone_store_keeps_data_when_the_writing_engine_is_killed(ha):
    assert ha["writer_setup"]["setup_rc"] == 0
    assert ha["written"] == {"n": HA_KEYS, "ok": HA_KEYS, "rcs": [0]}
    after = ha["after_write"]
    assert after["master_key_count"] == HA_KEYS
    assert after["total_segments"] == 1  # the engine (global_segment_size 0) mounts nothing
    assert after["master_active_clients"] == 1  # the store process; a segment-less engine is not counted
    assert after["store_segment_allocated_bytes"] == HA_KEYS * 2**20  # every byte is in the store process
    assert ha["store_segment"]["size_bytes"] == 256 * 2**20
    assert ha["read_after_writer_kill"] == {"n": HA_KEYS, "exist": HA_KEYS, "verified": HA_KEYS}


def test_rendered_probes_with_ha(ha):
    """The standby does not listen on its RPC port, so it is not Ready (the Service sends nothing to it; HA
    clients find the leader through etcd anyway), but it is live: the kubelet must not restart it. Once
    promoted it passes both."""
    ok = {who: {name: probe["ok"] for name, probe in ha["probes"][who].items()} for who in ha["probes"]}
    assert ok == {
        "leader": {"readiness": True, "liveness": True},
        "standby": {"readiness": False, "liveness": True},
        "new_leader": {"readiness": True, "liveness": True},
    }, ha["probes"]


def test_leader_kill_keeps_objects_with_rendered_ha_flags(ha):
    assert ha["standby_health"]["role"] == "standby"
    assert ha["new_leader_health"]["role"] == "leader"
    assert ha["failover_s"] < 30, ha["failover_s"]  # measured 8-10 s: ~5 s leader warm-up + election
    assert ha["keys_on_new_leader_at_promotion"] == HA_KEYS  # the oplog, at once
    assert ha["segment_remounted_s"] < 40, ha["segment_remounted_s"]
    assert ha["keys_on_new_leader"] == HA_KEYS
    assert ha["reader_after_failover_setup"]["setup_rc"] == 0  # through etcd:// (mooncake.json)
    assert ha["read_after_failover"] == {"n": HA_KEYS, "exist": HA_KEYS, "verified": HA_KEYS}


def test_data_outlives_client_ttl_after_the_writer_died(ha, ha_rendered):
    """The post-failover read comes later than the rendered --client_ttl after the writer's SIGKILL."""
    client_ttl = int(master_flag(ha_rendered.container("Deployment", STORE), "client_ttl"))
    assert ha["read_after_failover_s_after_writer_kill"] > client_ttl
    assert ha["read_after_failover"]["verified"] == HA_KEYS
