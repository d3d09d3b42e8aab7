"""The pool's Grafana dashboard drawn from a live run: the real mooncake_master under load, scraped by the real
Prometheus, every panel query of kvpool/components/kv_store/monitoring.py evaluated by that Prometheus.

The master is the one our component renders for the mooncake-layerwise stack; one engine client
(bench/mooncake_writer.py `mix`) holds the whole pool (POOL_MIB) as its segment, the machinery of
bench/mooncake_capacity.py (a private network namespace, every process stopped by PID). Prometheus
(tools/real-engine/build.sh prometheus, built on demand) scrapes the master every second as the target
job=<store Service>, namespace=<the stack's namespace>, which is what the ServiceMonitor gives it in a cluster,
so the dashboard's queries run unchanged. The load runs in phases (PHASES): puts only, then puts with one in ten
read back, then every put read back, whose leases (default_kv_lease_ttl) keep eviction from freeing the pool, so
puts fail; then the idle pool. Each panel's queries go through /api/v1/query_range over the run.

    venv/bin/python -m bench.pool_dashboard            # run, then write RECORD, PAGE and PICTURE
    venv/bin/python -m bench.pool_dashboard --redraw   # PAGE and PICTURE again from RECORD, no run

Needs root (unshare), tests/live/install_backends.sh and Go 1.26 (Prometheus' cold build: about 3 minutes).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.mooncake_capacity import WRITER, machine, run_capacity_scenario, sized_pool
from bench.preview_vs_deploy import run, venv
from bench.sizing import STACK, stack_values
from kvpool.components.kv_store import monitoring
from kvpool.components.kv_store.common import STORE_SERVICE
from kvpool.internal.dashboards import Signals
from kvpool.settings.loader import load_from_pulumi_config
from tests.e2e.realengine import BUILD_SCRIPT, find_binaries
from tests.live.mooncake_plans import basic_plan
from tests.live.plans import python
from tests.live.rendered import REPO, render

SCENARIO = Path(__file__).resolve().parent / "pool_dashboard_scenario.py"
RECORD = REPO / "bench" / "results" / "pool-dashboard.json"
PAGE = REPO / "bench" / "results" / "pool-dashboard.md"
PICTURE = REPO / "docs" / "pool-dashboard.png"
POOL_MIB = 256
# (ms per MiB, read back every n-th put, name). 50 MiB/s fills the pool's 0.6 in 3 s; reading back every put
# leases 11 s x 50 MiB/s, twice the pool, so eviction finds nothing to free.
PHASES = ((20, 0, "puts"), (20, 10, "puts, 1 in 10 read back"), (20, 1, "puts, each read back"))
PHASE_SECONDS = 300  # the panels' rates average 5 minutes: a phase that long shows its own rates
TAIL_S = 60  # the idle pool after the load
LEAD_S = 10  # the idle pool before it
STEP_S = 2  # query_range's resolution; Prometheus scrapes every second
PROMETHEUS_PORT = 9090
MIB = 2**20
_LEGEND_LABEL = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def signals(namespace: str) -> Signals:
    """The dashboard the stack renders: the queries depend on its eviction settings and lease, not on sizes."""
    settings = load_from_pulumi_config(stack_values(), STACK)
    return monitoring.mooncake(settings.kv_cache_store_config, namespace, settings.pool_sizing())


def prometheus() -> Path:
    run(["bash", str(BUILD_SCRIPT), "prometheus"])  # nothing to do once built; its log has the cold build time
    found, missing = find_binaries(("prometheus",))
    if missing:
        raise SystemExit("tools/real-engine/build.sh prometheus built no prometheus: see its build.log")
    return found["prometheus"]


def scrape_config(port: int, namespace: str) -> dict:
    """What a ServiceMonitor of the store Service gives Prometheus in a cluster: job and namespace on each series."""
    return {"scrape_configs": [{
        "job_name": STORE_SERVICE, "scrape_interval": "1s", "scrape_timeout": "1s",
        "static_configs": [{"targets": [f"127.0.0.1:{port}"], "labels": {"namespace": namespace}}],
    }]}


def measure(binary: Path, phase_seconds: float) -> dict:
    work = Path(tempfile.mkdtemp(prefix="kvd-"))
    try:
        rendered = render(STACK, work / "out")
        lb, plan = basic_plan(rendered, work / "dashboard", sized_pool(POOL_MIB))
        server = lb.add_pod("prometheus-0", [PROMETHEUS_PORT])
        config = server.root / "etc" / "prometheus.yml"
        config.write_text(json.dumps(scrape_config(plan["metrics_port"], rendered.namespace)))  # JSON is YAML
        board = signals(rendered.namespace)
        scenario = {
            "master": plan["master"], "metrics_port": plan["metrics_port"],
            "engine": {**plan["engine"], "argv": [python("mooncake"), str(WRITER)]},
            "prometheus": {"name": "prometheus", "env": {}, "cwd": str(server.root), "argv": [
                str(binary), f"--config.file={config}", f"--storage.tsdb.path={server.root / 'var'}",
                f"--web.listen-address=127.0.0.1:{server.port(PROMETHEUS_PORT)}"]},
            "prometheus_port": server.port(PROMETHEUS_PORT),
            "phases": [f"{phase_seconds}:{pace}:{every}" for pace, every, _ in PHASES],
            "tail_s": TAIL_S, "lead_s": LEAD_S, "step_s": STEP_S,
            "queries": [query.expr for panel in board.panels for query in panel.queries],
        }
        (work / "run").mkdir()
        result = run_capacity_scenario(scenario, work / "run", len(PHASES) * phase_seconds + TAIL_S + 180, SCENARIO)
        panels = [{"title": panel.title, "description": panel.description, "unit": panel.unit,
                   "queries": [{"expr": q.expr, "legend": q.legend, "result": result["queries"][q.expr]}
                               for q in panel.queries]} for panel in board.panels]
        phases = [{"seconds": phase_seconds, "pace_ms": pace, "read_every": every, "name": name, **measured}
                  for (pace, every, name), measured in zip(PHASES, result["phases"], strict=True)]
        return {"stack": STACK, "namespace": rendered.namespace, "pool_mib": POOL_MIB, "phases": phases,
                "start": result["start"], "end": result["end"], "lead_s": LEAD_S, "tail_s": TAIL_S,
                "step_s": STEP_S, "totals": result["totals"], "panels": panels}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def axis_unit(unit: str, peak: float) -> tuple[float, str]:
    """(divisor, suffix) of a panel's axis, as Grafana shows its unit: bytes in IEC steps, percentunit as %."""
    if unit == "bytes":
        steps = [(2**40, "TiB"), (2**30, "GiB"), (MIB, "MiB"), (2**10, "KiB")]
        return next(((size, name) for size, name in steps if peak >= size), (1, "B"))
    return {"percentunit": (0.01, "%"), "reqps": (1, "req/s")}.get(unit, (1, ""))


def drawn_panels(record: dict) -> list[dict]:
    """The panels as the picture draws them: each series' legend with its labels filled in (Grafana's {{label}}),
    seconds since the load began, values in the axis' unit."""
    out = []
    for panel in record["panels"]:
        lines = [{"label": _LEGEND_LABEL.sub(lambda m, s=series: s["metric"].get(m.group(1), ""),
                                             query["legend"]).strip(),
                  "t": [float(t) - record["start"] for t, _ in series["values"]],
                  "v": [float(v) for _, v in series["values"]]}
                 for query in panel["queries"] for series in query["result"]]
        peak = max((v for line in lines for v in line["v"] if not math.isnan(v)), default=0.0)
        divisor, suffix = axis_unit(panel["unit"], peak)
        for line in lines:
            line["v"] = [v / divisor for v in line["v"]]
        out.append({"title": panel["title"], "suffix": suffix, "lines": lines,
                    "x": [-record["lead_s"], record["end"] - record["start"]],
                    "missing": [q["legend"] for q in panel["queries"] if not q["result"]]})
    return out


def series(record: dict, title: str, legend: str) -> list[float]:
    """The values one query of one panel returned (its only series), less NaN (0/0 before the segment is mounted)."""
    panel = next(p for p in record["panels"] if p["title"] == title)
    (result,) = next(q["result"] for q in panel["queries"] if q["legend"] == legend)
    return [value for _, v in result["values"] if not math.isnan(value := float(v))]


def summary(record: dict) -> dict:
    totals = record["totals"]
    return {
        "capacity_mib": totals["master_total_capacity_bytes"] / MIB,
        "peak_used_mib": max(series(record, "Capacity and used", "used")) / MIB,
        "peak_used_share": max(series(record, "Used against the eviction watermark", "used")),
        "watermark": series(record, "Used against the eviction watermark", "eviction_high_watermark_ratio")[0],
        "evicted_keys": totals["master_evicted_key_count"],
        "eviction_passes": totals["master_successful_evictions_total"],
        "puts": totals["master_put_start_requests_total"],
        "put_failures": totals["master_put_start_failures_total"],
        "writer_put_failures": sum(phase["n"] - phase["ok"] for phase in record["phases"]),
        "seconds": record["end"] - record["start"],
    }


def page(record: dict) -> str:
    s = summary(record)
    missing = ", ".join(f"{panel['title']}: {query['legend']}" for panel in record["panels"]
                        for query in panel["queries"] if not query["result"]) or "none"
    phases = "\n".join(
        f"| {p['name']} | {p['seconds']:.0f} s | {p['pace_ms']:g} ms | {p['n']} | {p['n'] - p['ok']} | "
        f"{p['reads']} | {p['hits']} |" for p in record["phases"])
    return f"""# The pool dashboard on a live run

`venv/bin/python -m bench.pool_dashboard` (redraw from the record: `--redraw`). The real `mooncake_master`, as our
component renders it for the `{record['stack']}` stack (eviction at {s['watermark']:g} of the pool, its
`default_kv_lease_ttl`), with one engine client holding a {record['pool_mib']} MB segment, the whole pool; the real
Prometheus (github.com/prometheus/prometheus v{record['prometheus']}, `tools/real-engine/build.sh prometheus`) scraping the master every second as
`job="{STORE_SERVICE}",namespace="{record['namespace']}"`; each panel's queries, exactly as
kvpool/components/kv_store/monitoring.py renders them for the stack, through Prometheus' `/api/v1/query_range` (step
{record['step_s']} s) from {record['lead_s']} s before the load to {record['tail_s']} s after it. The writer puts 1 MiB
values of fresh keys at its pace; a read is `is_exist` then `get` of the key just put, and each grants a lease
(hits: reads that found the key, its bytes intact).

| phase | length | ms per MiB | puts | failed | reads | hits |
|---|---|---|---|---|---|---|
{phases}

- capacity {s['capacity_mib']:.0f} MiB; peak used {s['peak_used_mib']:.0f} MiB ({s['peak_used_share']:.0%} of the pool)
- {s['evicted_keys']:.0f} keys evicted in {s['eviction_passes']:.0f} eviction passes
- {s['puts']:.0f} puts, {s['put_failures']:.0f} failed (the writer saw {s['writer_put_failures']} fail)
- {s['seconds']:.0f} s from the first put to the last scrape

Queries that returned no series (drawn as "no data"): {missing}. The rates are `rate(...[5m])`, as on the
dashboard: each point averages the five minutes before it, so the rates lag the phases.

Measured {record['measured']}. The queries' answers: [pool-dashboard.json](pool-dashboard.json).

![the pool dashboard](../../docs/pool-dashboard.png)
"""


PLOT_SCRIPT = """
import json, sys, math, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
record = json.load(sys.stdin)
panels, phases, target = record["panels"], record["phases"], sys.argv[1]
# Grafana's dark theme and its classic palette
BG, PANEL, TEXT, GRID = "#111217", "#181b1f", "#ccccdc", "#2c3235"
COLORS = ["#73bf69", "#f2cc0c", "#8ab8ff", "#ff780a", "#f2495c", "#5794f2", "#b877d9"]
rows = math.ceil(len(panels) / 2)
fig, axes = plt.subplots(rows, 2, figsize=(14, 3.1 * rows), dpi=90, facecolor=BG)
for ax in axes.flat[len(panels):]:
    ax.set_visible(False)
for ax, panel in zip(axes.flat, panels):
    ax.set_facecolor(PANEL)
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.grid(color=GRID, lw=0.8)
    ax.tick_params(colors=TEXT, labelsize=8)
    ax.set_title(panel["title"], color=TEXT, loc="left", fontsize=10, fontweight="bold")
    start = 0
    for phase in phases:  # phase boundaries, drawn as Grafana draws annotations
        ax.axvline(start, color="#6e9fff", ls="--", lw=0.8, alpha=0.6)
        start += phase["seconds"]
    ax.axvline(start, color="#6e9fff", ls="--", lw=0.8, alpha=0.6)
    for color, line in zip(COLORS, panel["lines"]):
        ax.plot(line["t"], line["v"], color=color, lw=1.5, label=line["label"])
        ax.fill_between(line["t"], line["v"], color=color, alpha=0.1)
    for legend in panel["missing"]:
        ax.plot([], [], color=GRID, label=f"{legend}: no data")
    ax.yaxis.set_major_formatter(lambda v, _, s=panel["suffix"]: f"{v:g} {s}".strip())
    ax.set_ylim(bottom=0)
    ax.set_xlim(*panel["x"])
    ax.set_xlabel("s since the load began", color=TEXT, fontsize=8)
    ax.legend(loc="upper left", bbox_to_anchor=(0, -0.2), ncol=4, frameon=False, fontsize=8, labelcolor=TEXT,
              handlelength=1.2)
names = "; ".join(f"{p['name']} ({p['seconds']:.0f} s)" for p in phases)
fig.suptitle(f"KV pool, {record['title']}: {names}, then idle", color=TEXT, fontsize=11)
fig.tight_layout(rect=(0, 0, 1, 0.97))
fig.savefig(target, facecolor=BG)
"""


def draw(record: dict, target: Path) -> None:
    plot_python = venv("plot-venv", REPO / "bench" / "requirements.txt")
    data = {"panels": drawn_panels(record), "phases": record["phases"],
            "title": f"mooncake_master of {record['stack']}, {record['pool_mib']} MB"}
    run([str(plot_python), "-c", PLOT_SCRIPT, str(target)], input=json.dumps(data), text=True)  # too long for argv


def build_time() -> str:
    """The cold build of Prometheus as build.sh logged it."""
    log = Path(os.environ.get("MOTOR_KVPOOL_CACHE", Path.home() / ".cache" / "motor-kvpool")) / "real-engine"
    lines = [line for line in (log / "build-times.log").read_text().splitlines() if " prometheus " in line]
    return lines[-1].split(" built in ", 1)[1] if lines else "not logged"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--redraw", action="store_true", help=f"from {RECORD.relative_to(REPO)}, no run")
    parser.add_argument("--phase-seconds", type=float, default=PHASE_SECONDS, help=f"each phase's length ({PHASE_SECONDS})")
    args = parser.parse_args()
    if args.redraw:
        record = json.loads(RECORD.read_text())
    else:
        binary = prometheus()
        version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout
        started, load_before = datetime.datetime.now(), os.getloadavg()
        record = measure(binary, args.phase_seconds)
        record["prometheus"] = re.search(r"version (\S+)", version).group(1)
        record["measured"] = (
            f"{started:%Y-%m-%d %H:%M} on {machine()}; load average {' '.join(f'{x:.1f}' for x in load_before)} "
            f"before, {' '.join(f'{x:.1f}' for x in os.getloadavg())} after; Prometheus built in {build_time()} "
            "(its first build, build-times.log)")
        RECORD.write_text(json.dumps(record) + "\n")
    PAGE.write_text(page(record))
    draw(record, PICTURE)
    print(json.dumps(summary(record)))


if __name__ == "__main__":
    main()
