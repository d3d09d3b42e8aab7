"""The scenario of bench/sizing.py, run in the Mooncake venv inside `unshare -n` (tests/live's _harness).

For every repetition and cell (pool size x writer pace), interleaved: a fresh master, one writer
(bench/mooncake_writer.py) putting N x 1 MiB at its pace into its own segment, and this process scraping the
master's /metrics back to back until `master_evicted_key_count` leaves 0. The counter, not the first key: polling
is_exist on a key grants it a lease (default_kv_lease_ttl, 11 s in the stack), which would keep it from eviction.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

from _harness import http_get, metric, run, wait_until  # noqa: E402 - tests/live's scenario harness

POLL_GAP_S = 0.002  # between scrapes: leaves the 2 cores to the writer and the master


def scrape(url: str) -> tuple[float, float, float | None, float | None]:
    """(sent, answered, evicted keys, resident keys)."""
    sent = time.monotonic()
    answer = http_get(url)
    text = answer[1] if answer else ""
    return sent, time.monotonic(), metric(text, "master_evicted_key_count"), metric(text, "master_key_count")


def one_run(procs, cell):
    admin = f"http://127.0.0.1:{cell['metrics_port']}"
    master = procs.start(cell["master"], tag=cell["label"])
    wait_until("master /health", lambda: (http_get(admin + "/health") or (0,))[0] == 200, 15, watch=[master])
    engine = procs.start(cell["engine"], ["fill", str(cell["n"]), cell["pace"], str(cell["warm"])], pipe=True, tag=cell["label"])
    engine.read_json(20)  # setup; the first put follows at once
    deadline = time.monotonic() + cell["n"] * float(cell["pace"]) / 1000 * 2 + 5
    before = after = None
    while time.monotonic() < deadline:
        sample = scrape(admin + "/metrics")
        if sample[2]:
            after = sample
            break
        before = sample
        time.sleep(POLL_GAP_S)
    filled = engine.read_json(60)
    final = scrape(admin + "/metrics")
    procs.stop(engine, signal.SIGKILL)
    procs.stop(master, signal.SIGTERM, timeout=5)
    run = {"ok": filled["ok"], "n": filled["n"], "rcs": filled["rcs"], "put_s": filled["put_s"],
           "done_ms": filled["done_ms"],
           "evicted_end": final[2], "resident_end": final[3]}
    if after is not None:
        # The eviction happened after the last scrape that saw none was sent and before this one was answered.
        since = before[0] if before else filled["t0"]
        run.update(evicted_after_s=[max(since - filled["t0"], 0.0), after[1] - filled["t0"]],
                   evicted_first=after[2], resident_at_first=after[3])
    return run


def main(plan, procs, result):
    result["runs"] = {cell["label"]: [] for cell in plan["cells"]}
    for _ in range(plan["reps"]):
        for cell in plan["cells"]:
            result["runs"][cell["label"]].append(one_run(procs, cell))


if __name__ == "__main__":
    run(main)
