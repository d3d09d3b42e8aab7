"""The engine stand-in of bench/mooncake_capacity.py: tests/live's Mooncake engine client (same setup from the
rendered mooncake.json) with one more job, a writer at a chosen pace. Runs in the Mooncake venv.

  fill N PACE     N x 1 MiB puts of one prepared value; PACE "0" back to back (the fastest writer this client
                  can be), else the milliseconds per MiB to hold (put i starts no earlier than i x PACE ms)
Prints {"n", "ok", "rcs", "put_s"} as tests/live's `fill` does, then waits on stdin until the scenario kills it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

import mooncake_engine as engine  # noqa: E402 - its setup(), value() and emit(), unchanged


def paced_fill(store, count: int, pace_ms: float) -> None:
    payload = engine.value("fill", engine.MIB)
    rcs: dict[str, int] = {}
    started = time.perf_counter()
    for index in range(count):
        if pace_ms:
            slot = started + index * pace_ms / 1000
            while (left := slot - time.perf_counter()) > 0:
                if left > 0.0003:
                    time.sleep(left - 0.0002)  # sleep most of the gap, spin the rest (sleep overshoots ~0.1 ms)
        rc = store.put(f"obj-{index:05d}", payload)
        rcs[str(rc)] = rcs.get(str(rc), 0) + 1
    engine.emit(n=count, ok=rcs.get("0", 0), rcs=rcs, put_s=round(time.perf_counter() - started, 4))


def main() -> None:
    job, count, pace = sys.argv[1:]
    if job != "fill":
        raise SystemExit(f"unknown job {job}")
    store = engine.setup()
    paced_fill(store, int(count), float(pace))
    sys.stdin.read()  # keep the segment until the scenario kills this process
    os._exit(0)


if __name__ == "__main__":
    main()
