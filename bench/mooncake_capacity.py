"""Measure Mooncake put success when one engine writes 3x the pool back to back, per eviction setting.

The masters are the ones our component renders: the mooncake-layerwise stack (eviction 0.7/0.2) and the same
stack rendered with the seed's 0.9/0.1; a 64 MB pool owned by the writing engine, 192 puts of 1 MiB, a fresh
master for every repetition, settings interleaved. Same machinery as tests/live (a private network namespace,
every process stopped by PID).

    venv/bin/python -m bench.mooncake_capacity [--reps 10] [--fill same|distinct|both]

Writer pace matters (eviction runs asynchronously, about every 10 ms): "same" puts one prepared value each
time (~0.3 ms per MiB here), "distinct" builds each value from its key first (~1.2 ms per MiB).

Needs tests/live/install_backends.sh first. Prints one line per repetition and a summary per setting.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

from tests.live.mooncake_plans import CAPACITY_PUTS, capacity_plan
from tests.live.plans import run_scenario


def measure(reps: int, fills: list[str]) -> dict[str, dict[str, list[dict]]]:
    work = Path(tempfile.mkdtemp(prefix="kvb-"))
    try:
        plan = capacity_plan(work, reps, tuple(fills))
        timeout = 30 + 3 * reps * len(fills) * 2
        return run_scenario("mooncake_capacity.py", "mooncake", plan, work / "capacity", timeout=timeout)["runs"]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--fill", choices=["same", "distinct", "both"], default="both",
                        help="same: one prepared 1 MiB value; distinct: each value built from its key before its put")
    args = parser.parse_args()
    fills = ["same", "distinct"] if args.fill == "both" else [args.fill]
    for fill, runs in measure(args.reps, fills).items():
        print(f"\nfill={fill}: {CAPACITY_PUTS} x 1 MiB into a 64 MB pool, {args.reps} repetitions")
        print(f"{'eviction':>9}  {'put ok per repetition':<60} {'min':>4} {'mean':>6} {'max':>4}  "
              f"{'resident':>10} {'evicted':>10} {'s/192':>6}")
        for label, results in runs.items():
            ok = [r["ok"] for r in results]
            resident = [int(r["master_key_count"]) for r in results]
            evicted = [int(r["master_evicted_key_count"]) for r in results]
            seconds = statistics.mean(r["put_s"] for r in results)
            print(f"{label:>9}  {' '.join(map(str, ok)):<60} {min(ok):>4} {statistics.mean(ok):>6.1f} {max(ok):>4}  "
                  f"{min(resident):>4}-{max(resident):<5} {min(evicted):>4}-{max(evicted):<5} {seconds:>6.3f}")
            print(f"{'':>9}  success {100 * min(ok) / CAPACITY_PUTS:.0f}-{100 * max(ok) / CAPACITY_PUTS:.0f} %")


if __name__ == "__main__":
    main()
