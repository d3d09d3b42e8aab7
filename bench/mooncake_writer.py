"""The engine stand-in of bench/mooncake_capacity.py: tests/live's Mooncake engine client (same setup from the
rendered mooncake.json) with one more job, a writer at a chosen pace. Runs in the Mooncake venv.

  fill N PACE [WARM]
                  N x 1 MiB puts of one prepared value; PACE "0" back to back (the fastest writer this client
                  can be), else the milliseconds per MiB to hold (put i starts no earlier than i x PACE ms);
                  WARM: that many untimed puts first, then removed (below: why)
Prints {"n", "ok", "rcs", "put_s"} as tests/live's `fill` does (and "t0", time.monotonic() at the first put: the
clock is system-wide, so a scenario can time the master against it; "done_ms", when each put returned), then waits on stdin until the scenario kills it.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

import mooncake_engine as engine  # noqa: E402 - its setup(), value() and emit(), unchanged


def paced_fill(store, count: int, pace_ms: float, warm: int = 0) -> None:
    payload = engine.value("fill", engine.MIB)
    rcs: dict[str, int] = {}
    # The client's first put sets up its transfer path, and a put into segment memory never written before pays its
    # page faults (~2 ms per MiB here, against ~0.5 once written): warm-up puts, removed before the timed ones.
    warm_rcs = [store.put(f"warm-{index}", payload) for index in range(warm)]
    warm_rcs += [store.remove(f"warm-{index}") for index in range(warm)]
    assert set(warm_rcs) <= {0}, warm_rcs
    done_ms = []
    t0, started = time.monotonic(), time.perf_counter()
    for index in range(count):
        if pace_ms:
            slot = started + index * pace_ms / 1000
            while (left := slot - time.perf_counter()) > 0:
                if left > 0.0003:
                    time.sleep(left - 0.0002)  # sleep most of the gap, spin the rest (sleep overshoots ~0.1 ms)
        rc = store.put(f"obj-{index:05d}", payload)
        rcs[str(rc)] = rcs.get(str(rc), 0) + 1
        done_ms.append(round((time.perf_counter() - started) * 1000, 2))
    engine.emit(n=count, ok=rcs.get("0", 0), rcs=rcs, put_s=round(time.perf_counter() - started, 4), t0=t0,
                done_ms=done_ms)


def main() -> None:
    job, count, pace, *warm = sys.argv[1:]
    if job != "fill" or len(warm) > 1:
        raise SystemExit(f"usage: fill N PACE [WARM], not {sys.argv[1:]}")
    store = engine.setup()
    paced_fill(store, int(count), float(pace), int(warm[0]) if warm else 0)
    sys.stdin.read()  # keep the segment until the scenario kills this process
    os._exit(0)

if __name__ == "__main__":
    main()
