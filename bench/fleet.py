"""`kvpool fleet` (offline) over generated fleets of 10 to 100 stacks: serial against one process per core.

    venv/bin/python bench/fleet.py [--sizes 10,25,50,100] [--reps 1] [--results bench/results/fleet.md]

Each fleet is a temporary copy of the project (Pulumi.yaml, __main__.py, components/ and kvpool/policies/ linked, as the
tests' project_with_stacks does) whose stacks folder holds N generated stack files: groups of four, one MemCache owner
(stacks/Pulumi.service-a.yaml's service) and three consumers reading its pool (stacks/Pulumi.service-b.yaml's), each
in its own namespace, admitted by its owner, with no NodePort: a fleet of one cluster without a problem, whose offline
source runs every stack's program (the owners first, then the consumers with the owners' outputs). For each size,
alternately, in fresh processes, after one warm-up run of each at the smallest size (bytecode cached as in every
bench, preview_vs_deploy.CACHED_BYTECODE):

  serial:   python -m kvpool fleet --project-dir COPY --jobs 1
  parallel: python -m kvpool fleet --project-dir COPY          (one process per core: os.cpu_count())

timed start to exit (wall; CPU: user + system time of the process and the workers it waited for, medians). Both
must print the same report, byte for byte, and exit 0: the bench stops otherwise.
Writes the table (wall, seconds per stack, parallel / serial) to --results.
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/fleet.py` from anywhere

from bench.preview_vs_deploy import (  # noqa: E402
    CACHED_BYTECODE,
    RESULTS,
    ROOT,
    machine,
    other_load,
    others_running,
)
from kvpool.settings.service import PROJECT  # noqa: E402
from tests.program_runs import project_with_stacks, stack_values  # noqa: E402

GROUP = 4  # an owner and three consumers
MODES = {"serial": ["--jobs", "1"], "parallel": []}


def fleet_stacks(count: int) -> dict[str, dict]:
    """`count` stack files' values: owner-<g> and consumer-<g>-<i> (i = 1..3), one group of four after another."""
    stacks = {}
    for index in range(count):
        group, member = divmod(index, GROUP)
        owner = f"owner-{group}"
        if member == 0:
            values = stack_values("service-a")
            members = range(1, min(GROUP, count - group * GROUP))
            values["kv_cache_store_config"]["allowed_consumers"] = [f"consumer-{group}-{m}" for m in members]
            stacks[owner] = values
        else:
            values = stack_values("service-b")
            values["kv_cache_store_config"]["target_stack"] = f"organization/{PROJECT}/{owner}"
            stacks[f"consumer-{group}-{member}"] = values
    return stacks


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(project_dir: Path, mode: str) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and of the workers it waited for, the report) of one `kvpool fleet` in a fresh
    process."""
    env = {**os.environ, **CACHED_BYTECODE}
    cpu = _cpu()
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "kvpool", "fleet", "--project-dir", str(project_dir), *MODES[mode]],
                            cwd=ROOT, env=env, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - started, _cpu() - cpu
    if result.returncode != 0:
        raise SystemExit(f"kvpool fleet ({mode}, {project_dir}) exited with {result.returncode}:\n{result.stdout}"
                         f"{result.stderr}")
    return wall, cpu, result.stdout


def measure(sizes: list[int], reps: int, workdir: Path) -> list[dict]:
    projects = {size: project_with_stacks(workdir / f"fleet-{size}", fleet_stacks(size)) for size in sizes}
    for mode in MODES:  # warm-up: the bytecode cache, the page cache
        timed(projects[min(sizes)], mode)
    rows = []
    for size in sizes:
        walls: dict[str, list[float]] = {mode: [] for mode in MODES}
        cpus: dict[str, list[float]] = {mode: [] for mode in MODES}
        reports = set()
        for _ in range(reps):
            for mode in MODES:
                wall, cpu, report = timed(projects[size], mode)
                walls[mode].append(wall)
                cpus[mode].append(cpu)
                reports.add(report)
        if len(reports) != 1:
            raise SystemExit(f"{size} stacks: the serial and the parallel fleet printed different reports")
        serial, parallel = (statistics.median(walls[mode]) for mode in MODES)
        rows.append({"stacks": size, "serial": serial, "parallel": parallel,
                     "serial_min": min(walls["serial"]), "parallel_min": min(walls["parallel"]),
                     "serial_cpu": statistics.median(cpus["serial"]), "parallel_cpu": statistics.median(cpus["parallel"])})
        print(f"{size} stacks: serial {serial:.2f} s, parallel {parallel:.2f} s", file=sys.stderr)
    return rows


def table(rows: list[dict]) -> list[str]:
    lines = ["| stacks | serial wall (min) | serial s/stack | serial CPU | parallel wall (min) | parallel s/stack | "
             "parallel CPU | parallel / serial wall |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        n = row["stacks"]
        lines.append(f"| {n} | {row['serial']:.2f} s ({row['serial_min']:.2f}) | {row['serial'] / n:.3f} | "
                     f"{row['serial_cpu']:.2f} s | {row['parallel']:.2f} s ({row['parallel_min']:.2f}) | "
                     f"{row['parallel'] / n:.3f} | {row['parallel_cpu']:.2f} s | {row['parallel'] / row['serial']:.2f}x |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,25,50,100", help="stacks per fleet, comma-separated")
    parser.add_argument("--reps", type=int, default=1, help="runs of each mode per size (the median is shown)")
    parser.add_argument("--results", type=Path, default=RESULTS / "fleet.md")
    args = parser.parse_args(argv)
    sizes = [int(size) for size in args.sizes.split(",")]
    load_before, others_before = os.getloadavg(), others_running()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as workdir:
        rows = measure(sizes, args.reps, Path(workdir))
    load = other_load(load_before, others_before, os.getloadavg(), others_running())
    lines = [
        "# kvpool fleet over generated fleets",
        "",
        f"`venv/bin/python bench/fleet.py --sizes {args.sizes} --reps {args.reps}`, "
        f"{datetime.datetime.now():%Y-%m-%d %H:%M}. Machine: {machine()}.",
        "",
        f"Fleets of N stack files in groups of {GROUP} (a MemCache owner and three consumers of its pool, each in its "
        "own namespace, no NodePort; no problem), `python -m kvpool fleet` offline in a fresh process: serial "
        "(`--jobs 1`) and parallel (the default, one process per core), alternately, wall time start to exit (and CPU: "
        f"user + system of the process and its workers), the median of {args.reps} run(s) each after one warm-up run "
        "of each; both printed the same report, exit 0.",
        "",
        *table(rows),
        "",
        load,
    ]
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
