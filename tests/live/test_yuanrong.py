"""openYuanrong datasystem (openyuanrong-datasystem 0.8.1) run with what the yuanrong stack renders: etcd from
Debian with the rendered etcd command, the worker from the rendered DaemonSet (our `sh -c` finds the binary in
the wheel's package folder), and an engine client at the rendered DS_WORKER_ADDR. Nothing beyond the loopback
changes: the rendered 32768 MB of shared memory is only reserved, not touched. The etcd data folder is new for
every run, so the rendered --cluster_name needs no change."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.live.plans import (
    STORE,
    add_etcd,
    configmaps,
    engine_process,
    etcd_processes,
    named_port,
    probe_plan,
    run_scenario,
)
from tests.live.rendered import Loopback, Rendered, render

WORKER = "mindie-motor-ds-worker"
KEYS = 16


@pytest.fixture(scope="module")
def yuanrong(work) -> Rendered:
    return render("yuanrong", work / "out")


@pytest.fixture(scope="module")
def worker(yuanrong, work) -> dict:
    lb = Loopback(work / yuanrong.stack, yuanrong.namespace)
    (etcd_pod,) = add_etcd(yuanrong, lb)
    container = yuanrong.container("DaemonSet", WORKER)
    lb.add_pod("node-0", [named_port(container, "worker")])  # host network: the node's ports
    lb.add_pod("engine-0", [], network_of="node-0")
    volumes = yuanrong.pod_spec("DaemonSet", WORKER)["volumes"]
    process = lb.process(container, "node-0", "yuanrong", {}, volumes)
    engine = engine_process(yuanrong, lb, "engine-0", "yuanrong", "yuanrong_engine.py", configmaps(yuanrong))
    engine["env"]["KEYS"] = str(KEYS)
    plan = {
        "etcd": etcd_processes(yuanrong, lb, [etcd_pod])[0],
        "etcd_client_port": lb.pods[etcd_pod].port(named_port(yuanrong.container("StatefulSet", f"{STORE}-etcd"),
                                                              "client")),
        "worker": process,
        "probes": probe_plan(lb, "node-0", container, process),
        "engine": engine,
    }
    result = run_scenario("yuanrong_worker.py", "yuanrong", plan, work / "yuanrong", timeout=120)
    result["client_log_dir"] = engine["env"]["DATASYSTEM_CLIENT_LOG_DIR"]
    result["engine_home"] = engine["env"]["HOME"]
    result["worker_root"] = str(lb.pods["node-0"].root)
    return result


def test_worker_starts_from_rendered_command_and_flags(worker):
    assert worker["worker_ready_s"] < 60
    assert worker["worker_exit_code"] == 0  # SIGTERM, as the kubelet stops it
    logs = Path(worker["worker_root"]) / "tmp/datasystem/logs"  # the rendered --log_dir
    assert (logs / "datasystem_worker.INFO.log").is_file()


def test_rendered_probes_pass_against_the_worker(worker):
    assert worker["probes"] == {"readiness": {"ok": True, "detail": "exit 0"},
                                "liveness": {"ok": True, "detail": "connected"}}


def test_engine_client_sets_and_gets_at_rendered_ds_worker_addr(worker):
    engine = worker["engine"]
    assert engine["get_verified"] == KEYS
    assert engine["exist"] == [True, False]
    assert engine["delete_failed"] == []
    assert engine["exist_after_delete"] == 0
    assert engine["get_deleted"] == "code: [Key not found]"


def test_client_logs_go_to_rendered_log_dir(worker):
    assert any(Path(worker["client_log_dir"]).iterdir())
    assert not (Path(worker["engine_home"]) / ".datasystem").exists()
