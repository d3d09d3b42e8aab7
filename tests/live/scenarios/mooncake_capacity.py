"""Mooncake capacity under eviction: for every repetition, writer pace ("fills", see mooncake_engine.py) and
rendered master (one per eviction setting), interleaved, a fresh master and one engine client owning the whole
pool write N x 1 MiB back to back.
Reports put successes, and from /metrics (scraped before the client goes) what stayed resident and what was
evicted."""

from __future__ import annotations

import signal

from _harness import http_get, metric, run, wait_until

METRICS = ["master_key_count", "master_evicted_key_count", "master_put_start_alloc_failures_total",
           "master_total_capacity_bytes"]


def one_run(plan, procs, setting, fill):
    admin = f"http://127.0.0.1:{plan['metrics_port']}"
    master = procs.start(setting["master"], tag=setting["label"])
    wait_until("master /health", lambda: (http_get(admin + "/health") or (0,))[0] == 200, 15, watch=[master])
    engine = procs.start(plan["engine"], ["fill", str(plan["n"]), fill], pipe=True, tag=setting["label"])
    engine.read_json(20)  # setup
    filled = engine.read_json(60)
    text = http_get(admin + "/metrics")[1]
    procs.stop(engine, signal.SIGKILL)
    procs.stop(master, signal.SIGTERM, timeout=5)
    return {"ok": filled["ok"], "rcs": filled["rcs"], "put_s": filled["put_s"],
            **{name: metric(text, name) for name in METRICS}}, text


def main(plan, procs, result):
    result["n"] = plan["n"]
    result["runs"] = {fill: {setting["label"]: [] for setting in plan["settings"]} for fill in plan["fills"]}
    for _ in range(plan["reps"]):
        for fill in plan["fills"]:
            for setting in plan["settings"]:
                summary, text = one_run(plan, procs, setting, fill)
                result["runs"][fill][setting["label"]].append(summary)
                # The last run's exposition, taken after its writer filled the pool past capacity under eviction:
                # the one the dashboards and alerts are checked against (tests/live/test_pool_metrics.py).
                result["metrics_text"] = text


if __name__ == "__main__":
    run(main)
