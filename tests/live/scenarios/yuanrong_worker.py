"""openYuanrong datasystem (yuanrong stack): the rendered etcd member, the datasystem worker from the rendered
DaemonSet command and flags (readiness = the rendered exec probe: the ready file exists), and an engine client
that reaches it at DS_WORKER_ADDR from the rendered engine env."""

from __future__ import annotations

import signal

from _harness import http_get, kube_probe, probes, run, wait_until


def main(plan, procs, result):
    etcd = procs.start(plan["etcd"])
    port = plan["etcd_client_port"]
    wait_until("etcd /health", lambda: '"health":"true"' in (http_get(f"http://127.0.0.1:{port}/health") or (0, ""))[1],
               30, watch=[etcd])
    worker = procs.start(plan["worker"])
    _, result["worker_ready_s"] = wait_until(
        "the worker's readiness probe", lambda: kube_probe(plan["probes"]["readiness"])["ok"], 90, interval=0.2,
        watch=[worker])
    result["probes"] = probes(plan["probes"])
    engine = procs.start(plan["engine"], pipe=True, tag="kv")
    result["engine"] = engine.read_json(60)
    procs.stop(engine)
    result["worker_stop_s"] = round(procs.stop(worker, signal.SIGTERM, timeout=20), 2)
    result["worker_exit_code"] = worker.popen.returncode


if __name__ == "__main__":
    run(main)
