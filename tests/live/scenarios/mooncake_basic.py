"""Mooncake, embedded store (mooncake-layerwise stack): the rendered master, an engine client from the rendered
mooncake.json: put/get, /health and /metrics on the rendered metrics port, and the lease
(remove() returns -706 until default_kv_lease_ttl has passed since get())."""

from __future__ import annotations

import json
import time

from _harness import http_get, metric, probes, run, wait_until

METRICS = ["master_key_count", "master_total_capacity_bytes", "master_active_clients", "master_allocated_bytes"]
CLIENT_DEADLINE_S = 15


def json_ok(url: str):
    answer = http_get(url)
    return json.loads(answer[1]) if answer and answer[0] == 200 else None


def main(plan, procs, result):
    master = procs.start(plan["master"])
    admin = f"http://127.0.0.1:{plan['metrics_port']}"
    result["health"], result["master_ready_s"] = wait_until(
        "master /health", lambda: json_ok(admin + "/health"), 15, watch=[master])
    result["probes"] = probes(plan["probes"])
    engine = procs.start(plan["engine"], ["basic"], pipe=True, tag="basic")
    result["setup"] = engine.read_json(20)
    result["ops"] = engine.read_json(20)
    # The master counts a client from its first heartbeat, which a busy machine delays past the puts: poll /metrics
    # until it shows the engine's client (at most CLIENT_DEADLINE_S), then record what it shows.
    deadline = time.monotonic() + CLIENT_DEADLINE_S
    while True:
        status, text = http_get(admin + "/metrics") or (None, "")
        result["metrics_status"] = status
        result["metrics"] = {name: metric(text, name) for name in METRICS}
        if (result["metrics"]["master_active_clients"] or 0) >= 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    result["lease"] = engine.read_json(40)
    # After the puts, gets, lease and removes: the exposition the dashboards and alerts are checked against.
    result["metrics_text"] = http_get(admin + "/metrics")[1]


if __name__ == "__main__":
    run(main)
