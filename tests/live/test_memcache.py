"""MemCache (memcache-hybrid / memfabric-hybrid 1.3.0) run with what the dev stack renders.

Runs here: the MetaService, from our rendered command, template and ports. Does not: the LocalService and
every put/get, which need the Ascend driver and CANN in 1.3.0 (reference/research/backends.md §2); of the
engine side only the conf loading and validation run (scenarios/memcache_engine.py).
"""

from __future__ import annotations

import pytest

from kvpool.internal.motor_config import MMC_LOCAL_KEY
from tests.live.plans import (
    STORE,
    configmaps,
    container_ports,
    engine_process,
    named_port,
    probe_plan,
    run_scenario,
)
from tests.live.rendered import Loopback, Rendered, render

LOCAL_FILE = "mmc-local.conf"
META_CONF = "/tmp/mmc-meta.conf"  # where the rendered command writes the rendered template


@pytest.fixture(scope="module")
def dev(work) -> Rendered:
    return render("dev", work / "out")


@pytest.fixture(scope="module")
def meta(dev, work) -> dict:
    lb = Loopback(work / dev.stack, dev.namespace)
    container = dev.container("Deployment", STORE)
    lb.add_pod("meta-0", container_ports(container), [dev.kv_store["host"]])
    lb.add_pod("engine-0", [])
    maps = configmaps(dev)
    meta = lb.process(container, "meta-0", "memcache", maps, dev.pod_spec("Deployment", STORE)["volumes"])
    probes = probe_plan(lb, "meta-0", container, meta)
    engine = engine_process(dev, lb, "engine-0", "memcache", "memcache_engine.py", maps)
    # Motor's sync_mmc_local_config copies motor-config's conf to CONFIG_PATH, where the engine reads it
    # (tests/conformance runs Motor's script for that copy).
    conf = lb.write_file(
        "engine-0", dev.kv_store["engine_env"]["MMC_LOCAL_CONFIG_PATH"], lb.rewrite(maps["motor-config"][MMC_LOCAL_KEY], "engine-0")
    )
    assert conf.read_text() == lb.rewrite(dev.kv_store["client_files"][LOCAL_FILE], "engine-0")
    bad_conf = conf.with_name("invalid.conf")  # negative control: the loader must be able to refuse
    bad_conf.write_text(conf.read_text().replace("local_service.protocol = device_rdma", "local_service.protocol = bogus"))
    plan = {
        "meta": meta,
        "meta_conf": str(lb.local_path("meta-0", META_CONF)),
        "metrics_port": lb.pods["meta-0"].port(named_port(container, "metrics")),
        "engine": engine,
        "engine_bad_conf": {**engine, "env": {**engine["env"], "MMC_LOCAL_CONFIG_PATH": str(bad_conf)}},
        "ports": lb.pods["meta-0"].ports,
        "probes": probes,
    }
    result = run_scenario("memcache_meta.py", "memcache", plan, work / "memcache", timeout=60)
    result["ports"] = {int(k): v for k, v in plan["ports"].items()}
    return result


def test_meta_service_starts_from_rendered_command_and_template(meta):
    ports = meta["ports"]
    assert meta["rendered_meta_conf"] == (
        f"ock.mmc.meta_service_url = tcp://127.0.0.1:{ports[50088]}\n"
        f"ock.mmc.meta_service.config_store_url = tcp://127.0.0.1:{ports[50089]}\n"
        f"ock.mmc.meta_service.metrics_url = http://127.0.0.1:{ports[50090]}\n"
        "ock.mmc.meta.ha.enable = false\n"
        "ock.mmc.log_level = info\n"
        "ock.mmc.log_output_target = screen\n"
    )  # ${POD_IP} filled in by the rendered sed, from the pod IP
    assert meta["meta_exit_code"] == 0  # SIGTERM, as the kubelet stops it
    assert meta["meta_stop_s"] < 15
    assert (meta["lock_removed"], meta["lock_left"]) == (True, False)  # /tmp/mmc_meta_service.lock


def test_meta_service_health_livez_metrics_on_rendered_metrics_port(meta):
    assert meta["health"]["status"] == "ok" and meta["health"]["service_ready"] is True
    assert meta["livez"] == [200, "ok"]
    assert meta["metrics"]["status"] == 200
    assert meta["metrics"]["memcache_families"] >= 10, meta["metrics"]


def test_rendered_probes_pass_against_the_meta_service(meta):
    """As the kubelet probes: its HTTP client sends `Connection: close`, and MemCache 1.3.0's HTTP server then
    sends the headers (200, Content-Length) but never the body, so an httpGet probe times out and fails,
    though /health answers any keep-alive client. tcpSocket probes work."""
    assert meta["probes"]["readiness"]["ok"], meta["probes"]
    assert meta["probes"]["liveness"]["ok"], meta["probes"]


def test_rendered_local_conf_loads_and_reaches_the_meta_service(meta):
    """init(0, init_bm=False) loads and validates our mmc-local.conf and sets the client up; the put reaches the
    MetaService (one allocation request, refused: no LocalService registered memory, which needs an NPU)."""
    assert meta["engine"] == {"init_rc": 0, "put_rc": -1}
    assert meta["summary_after_put"]["alloc_req"] == 1
    assert meta["summary_after_put"]["alloc_fail"] == 1
    assert meta["engine_bad_conf"] == {"init_rc": -3000, "put_rc": None}  # the loader does refuse a bad value
