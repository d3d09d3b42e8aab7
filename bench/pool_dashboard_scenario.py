"""The scenario of bench/pool_dashboard.py, run in the Mooncake venv inside `unshare -n` (tests/live's _harness).

A master, Prometheus scraping its /metrics every second, and one engine client (bench/mooncake_writer.py `mix`)
running the load's phases; then every panel query of the plan through Prometheus' /api/v1/query_range over the
run, and a last scrape of the master for the totals.
"""

from __future__ import annotations

import json
import signal
import sys
import time
import urllib.parse
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

from _harness import ScenarioError, http_get, metric, run, wait_until  # noqa: E402 - tests/live's scenario harness

# Counters and gauges of the last scrape that the results page states (the panels show their rates).
TOTALS = ("master_total_capacity_bytes", "master_put_start_requests_total", "master_put_start_failures_total",
          "master_get_replica_list_requests_total", "master_exist_key_requests_total", "master_evicted_key_count",
          "master_successful_evictions_total", "master_key_count")


def query_range(api: str, expr: str, start: float, end: float, step: float) -> list[dict]:
    query = urllib.parse.urlencode({"query": expr, "start": start, "end": end, "step": step})
    answer = http_get(f"{api}/api/v1/query_range?{query}", timeout=30)
    if not answer or answer[0] != 200:
        raise ScenarioError(f"query_range {expr!r}: {answer}")
    return json.loads(answer[1])["data"]["result"]


def scrapes(api: str) -> int:
    """How many scrapes of the master Prometheus holds from the last 10 s."""
    series = query_range(api, "up", time.time() - 10, time.time(), 1)
    return len(series[0]["values"]) if series else 0


def main(plan, procs, result):
    admin = f"http://127.0.0.1:{plan['metrics_port']}"
    api = f"http://127.0.0.1:{plan['prometheus_port']}"
    master = procs.start(plan["master"])
    wait_until("master /health", lambda: (http_get(admin + "/health") or (0,))[0] == 200, 15, watch=[master])
    prometheus = procs.start(plan["prometheus"])
    wait_until("Prometheus ready", lambda: (http_get(api + "/-/ready") or (0,))[0] == 200, 60, watch=[prometheus])
    wait_until("two scrapes of the idle pool", lambda: scrapes(api) >= 2, 15, interval=0.5)  # so each rate has a start
    engine = procs.start(plan["engine"], ["mix", *plan["phases"]], pipe=True)
    engine.read_json(20)  # setup
    result["start"] = time.time()
    result["phases"] = [engine.read_json(float(phase.split(":")[0]) + 60) for phase in plan["phases"]]
    time.sleep(plan["tail_s"])  # the idle pool after the load: leases run out, rates fall
    result["end"] = time.time()
    result["totals"] = {name: metric((http_get(admin + "/metrics") or (0, ""))[1], name) for name in TOTALS}
    procs.stop(engine, signal.SIGKILL)
    start, end = result["start"] - plan["lead_s"], result["end"]
    result["queries"] = {expr: query_range(api, expr, start, end, plan["step_s"]) for expr in plan["queries"]}
    procs.stop(prometheus, signal.SIGTERM)
    procs.stop(master, signal.SIGTERM, timeout=5)


if __name__ == "__main__":
    run(main)
