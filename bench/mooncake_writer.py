"""The engine stand-in of bench/mooncake_capacity.py: tests/live's Mooncake engine client (same setup from the
rendered mooncake.json) with two more jobs, a writer at a chosen pace and a mixed load. Runs in the Mooncake venv.

  fill N PACE [WARM]
                  N x 1 MiB puts of one prepared value; PACE "0" back to back (the fastest writer this client
                  can be), else the milliseconds per MiB to hold (put i starts no earlier than i x PACE ms);
                  WARM: that many untimed puts first, then removed (below: why)
Prints {"n", "ok", "rcs", "put_s"} as tests/live's `fill` does (and "t0", time.monotonic() at the first put: the
clock is system-wide, so a scenario can time the master against it; "done_ms", when each put returned), then waits on stdin until the scenario kills it.

  mix SECONDS:PACE:READ_EVERY ...
                  phases, one after the other (bench/pool_dashboard.py): for SECONDS, 1 MiB puts of fresh keys at
                  PACE ms per MiB; every READ_EVERY-th put (0: none) is read back at once, is_exist then get, as a
                  decode engine reads what prefill just wrote: both grant the key a lease. Prints one line per
                  phase {"phase", "n", "ok", "rcs", "reads", "hits"}; then waits on stdin as `fill` does.

  keys N SECONDS SIZE PREFIX BATCH
                  N distinct keys PREFIX-i of SIZE bytes each (contents derived from the key), put_batch of BATCH
                  keys at a time (its one rc counted for each key), spread evenly over SECONDS: a pool of many
                  small objects (bench/mooncake_ha_failover.py); a line {"progress", "t"} every 5 s, then {"n",
                  "ok", "rcs", "put_s", "failed"} (failed: [start, end) index runs of the keys whose batch did not
                  return 0); waits on stdin.
  check N SIZE PREFIX BATCH
                  batch_is_exist, then get_batch of the keys found, of every key `keys` wrote; prints {"n",
                  "exist", "verified", "read_s", "missing"} (missing: [start, end) index runs) and exits.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

import mooncake_engine as engine  # noqa: E402 - its setup(), value() and emit(), unchanged


def wait_for_slot(started: float, index: int, pace_ms: float) -> None:
    """Hold put `index` until index x pace_ms after `started` (perf_counter)."""
    slot = started + index * pace_ms / 1000
    while (left := slot - time.perf_counter()) > 0:
        if left > 0.0003:
            time.sleep(left - 0.0002)  # sleep most of the gap, spin the rest (sleep overshoots ~0.1 ms)


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
        wait_for_slot(started, index, pace_ms)
        rc = store.put(f"obj-{index:05d}", payload)
        rcs[str(rc)] = rcs.get(str(rc), 0) + 1
        done_ms.append(round((time.perf_counter() - started) * 1000, 2))
    engine.emit(n=count, ok=rcs.get("0", 0), rcs=rcs, put_s=round(time.perf_counter() - started, 4), t0=t0,
                done_ms=done_ms)


def mixed_load(store, phases: list[tuple[float, float, int]]) -> None:
    payload = engine.value("fill", engine.MIB)
    written = 0
    for phase, (seconds, pace_ms, read_every) in enumerate(phases):
        rcs: dict[str, int] = {}
        reads = hits = count = 0
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            wait_for_slot(started, count, pace_ms)
            key = f"obj-{written:06d}"
            rc = store.put(key, payload)
            rcs[str(rc)] = rcs.get(str(rc), 0) + 1
            if read_every and count % read_every == 0:
                reads += 1
                hits += store.is_exist(key) == 1 and bytes(store.get(key)) == payload
            count += 1
            written += 1
        engine.emit(phase=phase, n=count, ok=rcs.get("0", 0), rcs=rcs, reads=reads, hits=hits)


def many_keys(store, count: int, seconds: float, size: int, prefix: str, batch: int) -> None:
    rcs: dict[str, int] = {}
    failed: list[list[int]] = []
    pace_ms = seconds * 1000 / max(1, -(-count // batch))
    started = last = time.perf_counter()
    for index, first in enumerate(range(0, count, batch)):
        wait_for_slot(started, index, pace_ms)
        keys = [f"{prefix}-{i}" for i in range(first, min(count, first + batch))]
        rc = store.put_batch(keys, [engine.value(key, size) for key in keys])  # one rc for the whole batch
        rcs[str(rc)] = rcs.get(str(rc), 0) + len(keys)
        if rc != 0:
            failed = runs(failed, first, first + len(keys))
        if time.perf_counter() - last >= 5:
            last = time.perf_counter()
            engine.emit(progress=first + len(keys), t=round(last - started, 2))
    engine.emit(n=count, ok=rcs.get("0", 0), rcs=rcs, put_s=round(time.perf_counter() - started, 3), failed=failed)


def runs(ranges: list[list[int]], start: int, end: int) -> list[list[int]]:
    """`ranges` ([start, end) index runs, ascending) with [start, end) added after its last one."""
    if ranges and ranges[-1][1] == start:
        ranges[-1][1] = end
    else:
        ranges.append([start, end])
    return ranges


def check_keys(store, count: int, size: int, prefix: str, batch: int) -> None:
    exist = verified = 0
    missing: list[list[int]] = []
    started = time.perf_counter()
    for first in range(0, count, batch):
        keys = [f"{prefix}-{i}" for i in range(first, min(count, first + batch))]
        exists = store.batch_is_exist(keys)
        found = [key for key, rc in zip(keys, exists, strict=True) if rc == 1]
        for offset, rc in enumerate(exists):
            if rc != 1:
                missing = runs(missing, first + offset, first + offset + 1)
        exist += len(found)
        if found:
            verified += sum(bytes(data) == engine.value(key, size)
                            for key, data in zip(found, store.get_batch(found), strict=True))
    engine.emit(n=count, exist=exist, verified=verified, read_s=round(time.perf_counter() - started, 3),
                missing=missing)


def main() -> None:
    job, *args = sys.argv[1:]
    if job == "fill" and len(args) in (2, 3):
        store = engine.setup()
        paced_fill(store, int(args[0]), float(args[1]), int(args[2]) if len(args) == 3 else 0)
    elif job == "mix" and args:
        store = engine.setup()
        mixed_load(store, [(float(s), float(p), int(r)) for s, p, r in (arg.split(":") for arg in args)])
    elif job == "keys" and len(args) == 5:
        store = engine.setup()
        many_keys(store, int(args[0]), float(args[1]), int(args[2]), args[3], int(args[4]))
    elif job == "check" and len(args) == 4:
        store = engine.setup()
        check_keys(store, int(args[0]), int(args[1]), args[2], int(args[3]))
        os._exit(0)
    else:
        raise SystemExit(f"usage: fill N PACE [WARM] | mix SECONDS:PACE:READ_EVERY ... | keys N SECONDS SIZE PREFIX "
                         f"BATCH | check N SIZE PREFIX BATCH, not {sys.argv[1:]}")
    sys.stdin.read()  # keep the segment until the scenario kills this process
    os._exit(0)

if __name__ == "__main__":
    main()
