"""The pool planner against the real mooncake_master: time from the first put to the first eviction, and put success.

For each pool size and writer pace, the planner (kvpool/policies/rules/pool_sizing.py, through the settings of the
mooncake-layerwise stack with only the segment size and kv_pool_sizing changed) predicts when an empty pool is
first evicted (`PoolSizing.first_eviction_seconds`), what an eviction leaves (`.floor`) and where the pool sits on
the measured eviction frontier (`.frontier()`); the bench runs the master our component renders for that stack (its own 0.6/0.4 and lease), and
one engine client (bench/mooncake_writer.py) that holds the whole pool as its segment and puts 1 MiB values at the
pace the planner was given, 3x the pool, a fresh master per run, cells interleaved, in a private network namespace
(the machinery of bench/mooncake_capacity.py). The master's watermark is on the pool's total usage, so one client
holding the stack's segments as one is the same pool to it.

    venv/bin/python -m bench.sizing [--reps 3] [--sizes 32,64,128,512] [--paces 1,2] [--write FILE] [--plot PNG]

Needs tests/live/install_backends.sh. bench/results/sizing.md and sizing.png are from this.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.mooncake_capacity import WRITER, machine, run_capacity_scenario, sized_pool
from bench.preview_vs_deploy import run, venv
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.live.mooncake_plans import basic_plan
from tests.live.plans import python
from tests.live.rendered import REPO, render

STACK = "mooncake-layerwise"
SCENARIO = Path(__file__).resolve().parent / "mooncake_sizing_scenario.py"
MIB = 2**20
# One layer of 16 KV heads of 128 in bf16: 8192 bytes per token, so a 128-token block is the writer's 1 MiB value.
MODEL_SHAPE = {"num_hidden_layers": 1, "num_key_value_heads": 16, "head_dim": 128}
SIZES_MIB = (32, 64, 128, 512)
PACES_MS = (1, 2)
TOLERANCE = 0.15  # issue 35: the prediction within 15 % at every cell


@dataclass(frozen=True)
class Cell:
    pool_mib: int
    pace_ms: int  # ms per MiB

    @property
    def label(self) -> str:
        return f"{self.pool_mib} MiB @ {self.pace_ms} ms/MiB"

    @property
    def warm(self) -> int:
        """Untimed puts (then removed) that write half the pool's memory once, below the 0.6 watermark."""
        return self.pool_mib // 2

    @property
    def puts(self) -> int:
        return 3 * self.pool_mib  # as bench/results/eviction.md: through two evictions and more


def stack_values() -> dict:
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{STACK}.yaml").read_text())
    return {key.split(":", 1)[1]: value for key, value in document["config"].items()}


def planned(cell: Cell, values: dict | None = None) -> rules.PoolSizing:
    """The planner's sizing of the stack with a pool of cell.pool_mib and a writer of one 1 MiB block per pace."""
    values = dict(values or stack_values())
    units = rules.pool_sizing(load_from_pulumi_config(values, STACK).user_config()).units
    block_size = 128  # MODEL_SHAPE's 8192 bytes x 128 = 1 MiB; asserted below against the planner's block
    values["kv_cache_store_config"] = {**values["kv_cache_store_config"],
                                       "global_segment_size": f"{cell.pool_mib * MIB // units}"}
    values["kv_pool_sizing"] = {"model_shape": MODEL_SHAPE,
                                "prefill_tokens_per_second": block_size * 1000 // cell.pace_ms}
    sizing = load_from_pulumi_config(values, STACK).pool_sizing()
    assert sizing is not None and sizing.block_bytes == MIB and sizing.capacity_bytes == cell.pool_mib * MIB
    assert sizing.write_bytes_per_second == MIB * 1000 // cell.pace_ms
    return sizing


def predictions(cells: list[Cell]) -> dict[Cell, dict]:
    values = stack_values()
    out = {}
    for cell in cells:
        sizing = planned(cell, values)
        out[cell] = {"first_eviction_s": sizing.first_eviction_seconds, "lifetime_s": sizing.lifetime_seconds,
                     "share": sizing.share_per_period, "frontier": sizing.frontier(), "floor": sizing.floor}
    return out


def measure(cells: list[Cell], reps: int) -> dict[str, list[dict]]:
    work = Path(tempfile.mkdtemp(prefix="kvs-"))
    try:
        rendered = render(STACK, work / "out")
        plan_cells = []
        for cell in cells:
            _, plan = basic_plan(rendered, work / f"pool-{cell.pool_mib}-{cell.pace_ms}", sized_pool(cell.pool_mib))
            plan_cells.append({"label": cell.label, "n": cell.puts, "pace": str(cell.pace_ms), "warm": cell.warm,
                               "master": plan["master"], "metrics_port": plan["metrics_port"],
                               "engine": {**plan["engine"], "argv": [python("mooncake"), str(WRITER)]}})
        timeout = 60 + reps * sum(8 + 2 * c.puts * c.pace_ms / 1000 for c in cells)
        (work / "sizing").mkdir()
        return run_capacity_scenario({"cells": plan_cells, "reps": reps}, work / "sizing", timeout, SCENARIO)["runs"]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def resident_after_eviction(run: dict, pool_mib: int) -> float | None:
    """The share of the pool left right after the first eviction: what the scrape saw, less the puts that returned
    between the middle of the window and the scrape's answer."""
    if "evicted_after_s" not in run:
        return None
    middle, answered = (1000 * t for t in (sum(run["evicted_after_s"]) / 2, run["evicted_after_s"][1]))
    later = sum(middle < done <= answered for done in run["done_ms"])
    return (run["resident_at_first"] - later) / pool_mib


def summarize(cell: Cell, predicted: dict, runs: list[dict]) -> dict:
    """Measured first eviction per run: the middle of the window the scrapes bound it to."""
    times = [sum(r["evicted_after_s"]) / 2 for r in runs if "evicted_after_s" in r]
    resident = [share for r in runs if (share := resident_after_eviction(r, cell.pool_mib)) is not None]
    windows = [r["evicted_after_s"][1] - r["evicted_after_s"][0] for r in runs if "evicted_after_s" in r]
    success = [100 * r["ok"] / r["n"] for r in runs]
    median = statistics.median(times) if times else None
    error = None if median is None else (median - predicted["first_eviction_s"]) / predicted["first_eviction_s"]
    return {"cell": cell, "runs": len(runs), "evicted_runs": len(times), "median": median,
            "min": min(times, default=None), "max": max(times, default=None),
            "window": max(windows, default=None), "error": error,
            "success_min": min(success), "success_max": max(success),
            "resident": statistics.median(resident) if resident else None, **predicted}


def percent_span(low: float, high: float) -> str:
    return f"{low:.0f} %" if round(low) == round(high) else f"{low:.0f}–{high:.0f} %"


def table(rows: list[dict]) -> list[str]:
    lines = ["| pool | pace | predicted first eviction | measured (median, min–max) | error | scrape window | "
             "left by the first eviction: measured (median) / planner's floor | share per 10 ms: planner's frontier | "
             "put success (min–max) |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        cell = row["cell"]
        measured = ("no eviction seen" if row["median"] is None else
                    f"{row['median'] * 1000:.1f} ms ({row['min'] * 1000:.1f}–{row['max'] * 1000:.1f})")
        error = "–" if row["error"] is None else f"{row['error']:+.0%}"
        window = "–" if row["window"] is None else f"≤ {row['window'] * 1000:.1f} ms"
        resident = "–" if row["resident"] is None else f"{row['resident']:.0%}"
        lines.append(f"| {cell.pool_mib} MiB | {cell.pace_ms} ms/MiB | {row['first_eviction_s'] * 1000:.1f} ms | "
                     f"{measured} | {error} | {window} | {resident} / {row['floor']:.0%} | {row['frontier']} | "
                     f"{percent_span(row['success_min'], row['success_max'])} |")
    return lines


PLOT_SCRIPT = """
import json, sys, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows, target = json.loads(sys.argv[1]), sys.argv[2]
fig, ax = plt.subplots(figsize=(6.4, 5), dpi=110)
top = max(max(r["max"] for r in rows), max(r["predicted"] for r in rows)) * 1.15
ax.plot([0, top], [0, top], color="black", lw=1, label="measured = predicted")
ax.fill_between([0, top], [0, 0.85 * top], [0, 1.15 * top], color="grey", alpha=0.2, label="within 15 %")
for pace, marker in ((1, "o"), (2, "s")):
    points = [r for r in rows if r["pace"] == pace]
    ax.errorbar([r["predicted"] for r in points], [r["median"] for r in points],
                yerr=[[r["median"] - r["min"] for r in points], [r["max"] - r["median"] for r in points]],
                fmt=marker, capsize=3, label=f"{pace} ms per MiB")
ax.set_xscale("log"); ax.set_yscale("log")
from matplotlib.ticker import NullFormatter, ScalarFormatter
for axis in (ax.xaxis, ax.yaxis):
    axis.set_major_formatter(ScalarFormatter()); axis.set_minor_formatter(NullFormatter())
ax.set_xlabel("predicted time to first eviction, ms (planner)")
ax.set_ylabel("measured on mooncake_master, ms (median; bars: min-max)")
ax.grid(alpha=0.3, which="both")
ax.legend()
ax.set_title("Pool planner vs the real master: first eviction")
fig.tight_layout()
fig.savefig(target)
"""


def plot(rows: list[dict], target: Path) -> None:
    points = [{"pace": r["cell"].pace_ms, "predicted": r["first_eviction_s"] * 1000, "median": r["median"] * 1000,
               "min": r["min"] * 1000, "max": r["max"] * 1000} for r in rows if r["median"] is not None]
    python_ = venv("plot-venv", REPO / "bench" / "requirements.txt")
    run([str(python_), "-c", PLOT_SCRIPT, json.dumps(points), str(target)])


def grid(sizes: str, paces: str) -> list[Cell]:
    return [Cell(int(size), int(pace)) for size in sizes.split(",") for pace in paces.split(",")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES_MIB)), help="pool sizes, MiB")
    parser.add_argument("--paces", default=",".join(map(str, PACES_MS)), help="writer paces, ms per MiB")
    parser.add_argument("--write", type=Path, metavar="FILE", help="also write the table (markdown) to FILE")
    parser.add_argument("--plot", type=Path, metavar="PNG", help="and the plot of predicted against measured")
    parser.add_argument("--runs", type=Path, metavar="JSON", help="summarize the runs a previous run printed last "
                        "(bench/results/sizing-runs.json) instead of measuring")
    args = parser.parse_args()
    cells = grid(args.sizes, args.paces)
    predicted = predictions(cells)
    started = datetime.datetime.now()
    load_before = os.getloadavg()
    runs = json.loads(args.runs.read_text())["runs"] if args.runs else measure(cells, args.reps)
    rows = [summarize(cell, predicted[cell], runs[cell.label]) for cell in cells]
    within = sum(r["error"] is not None and abs(r["error"]) <= TOLERANCE for r in rows)
    when = (f"From {args.runs}." if args.runs else
            f"Measured {started:%Y-%m-%d %H:%M} on {machine()}, {args.reps} runs per cell; load average "
            f"{' '.join(f'{x:.1f}' for x in load_before)} before, {' '.join(f'{x:.1f}' for x in os.getloadavg())} after.")
    lines = [*table(rows), "", f"Within {TOLERANCE:.0%} of the prediction (median): {within} of {len(rows)} cells. {when}"]
    print("\n".join(lines))
    print(json.dumps({"runs": runs}))  # every run, for the record
    if args.write:
        args.write.write_text("\n".join(lines) + "\n")
    if args.plot:
        plot(rows, args.plot)

if __name__ == "__main__":
    main()
