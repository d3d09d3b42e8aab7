"""Put success of the mooncake-layerwise stack's eviction pair against the seed's 0.9/0.1, as tests/live renders them.

tests/live/mooncake_plans.py capacity_plan: the stack's master and the same stack rendered with 0.9/0.1, a 64 MB pool
owned by one engine client, 192 puts of 1 MiB (3x the pool), a fresh master for every run, the two interleaved. The
writer (tests/live/scenarios/mooncake_engine.py `fill`) puts one prepared value back to back ("same", the fastest it
can write here) or builds each value from its key just before its put ("distinct", slower). Whether eviction keeps
up is a race with the master's 10 ms eviction period, so it depends on the machine's load: it is measured here, not
asserted in a test (tests/live/test_mooncake.py checks only what no load changes).

    venv/bin/python -m bench.mooncake_example_eviction [--reps 10] [--fills same,distinct]
        [--write bench/results/mooncake-example-eviction.md]

Needs root and tests/live/install_backends.sh (the Mooncake venv).
"""

from __future__ import annotations

import argparse
import datetime
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.mooncake_capacity import machine, publish, run_capacity_scenario
from tests.live.mooncake_plans import CAPACITY_PUTS, capacity_plan

FILLS = {"same": "one prepared value, back to back", "distinct": "each value built from its key before its put"}


def report(runs: dict[str, dict[str, list[dict]]], command: str, reps: int, started: datetime.datetime) -> list[str]:
    lines = [
        f"# Mooncake eviction of the example stack against the seed's, {CAPACITY_PUTS} x 1 MiB into a 64 MB pool",
        "",
        f"Command: `{command}`",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} on {machine()}, load average at the end "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}. {reps} runs per cell, each on a fresh master.",
        "",
        "| writer | watermark/ratio | accepted puts, each run | min | mean | writer ms per MiB (median) |",
        "|---|---|---|---|---|---|",
    ]
    for fill, by_pair in runs.items():
        for pair, results in by_pair.items():
            ok = [r["ok"] for r in results]
            ms = statistics.median(r["put_s"] for r in results) * 1000 / CAPACITY_PUTS
            lines.append(f"| {fill} ({FILLS[fill]}) | {pair} | {', '.join(map(str, ok))} | {min(ok)} | "
                         f"{statistics.mean(ok):.1f} | {ms:.2f} |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--fills", default=",".join(FILLS), help="comma-separated: " + ", ".join(FILLS))
    parser.add_argument("--write", type=Path, metavar="FILE", help="write the results (markdown) to FILE")
    args = parser.parse_args()
    command = "venv/bin/python -m bench.mooncake_example_eviction " + " ".join(sys.argv[1:])
    started = datetime.datetime.now()
    work = Path(tempfile.mkdtemp(prefix="kvb-example-"))
    try:
        fills = tuple(args.fills.split(","))
        plan = capacity_plan(work, args.reps, fills)
        runs = run_capacity_scenario(plan, work / "capacity", timeout=60 + 10 * args.reps * len(fills))["runs"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    publish(report(runs, command, args.reps, started), args.write)


if __name__ == "__main__":
    main()
