"""The Mooncake eviction frontier: put success when one engine writes 3x the pool, per writer pace and master flags.

The master is the one our component renders for the mooncake-layerwise stack, with only the flags under test
changed (the watermark/ratio pairs below, the allocator, the lease); a 64 MB pool owned by the writing engine,
192 puts of 1 MiB (3x the pool), a fresh master for every run, settings and paces interleaved, the same machinery
as tests/live (a private network namespace, every process stopped by PID). The writer is
bench/mooncake_writer.py: back to back ("burst", the fastest this client can write here) or held to a pace in
ms per MiB.

    venv/bin/python -m bench.mooncake_capacity [--reps 5] [--write bench/results/eviction.md]

mooncake_master runs its eviction check on a fixed 10 ms period (kEvictionThreadSleepMs, no flag), so what
decides success is how much of the pool a writer fills between two checks. Needs tests/live/install_backends.sh.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from tests.live.mooncake_plans import CLIENT_FILE, basic_plan
from tests.live.plans import SCENARIOS, STORE, is_running, python
from tests.live.rendered import as_tcp, render, with_sizes

ROOT = Path(__file__).resolve().parent.parent
WRITER = ROOT / "bench" / "mooncake_writer.py"
POOL_MIB = 64  # --pool-mib: a smaller pool makes the same writer fill a larger share of it per eviction period
TICK_MS = 10  # mooncake_master's eviction period (kEvictionThreadSleepMs in master_service.h)


@dataclass(frozen=True)
class Setting:
    high: float
    ratio: float
    extra: tuple[str, ...] = ()
    """Further master flags, `--name=value`."""

    @property
    def label(self) -> str:
        return " ".join([f"{self.high}/{self.ratio}", *(flag.removeprefix("--") for flag in self.extra)])


SHIPPED = Setting(0.6, 0.4)  # stacks/Pulumi.mooncake-layerwise.yaml and mooncake-ha.yaml
EARLIER = Setting(0.7, 0.2)  # what those stacks shipped before this frontier was measured
SEED = Setting(0.9, 0.1)
GRID = [
    SEED, EARLIER, Setting(0.7, 0.3), Setting(0.7, 0.4), Setting(0.6, 0.3), SHIPPED, Setting(0.5, 0.3),
    Setting(0.5, 0.4), Setting(0.5, 0.5), Setting(0.4, 0.4),
]
FLAGS = [
    # Flags that could bear on a put under a fast writer, each on the earlier pair (where they could help most).
    Setting(0.7, 0.2, ("--memory_allocator=cachelib",)),
    Setting(0.7, 0.2, ("--allocation_strategy=free_ratio_first",)),
    Setting(0.7, 0.2, ("--default_kv_lease_ttl=1000",)),
    Setting(0.7, 0.2, ("--allow_evict_soft_pinned_objects=false",)),
]
PACES = ["0", "1", "2"]
"""ms per MiB; "0" is back to back."""


def master_container(container: dict, setting: Setting) -> dict:
    overrides = {
        "--eviction_high_watermark_ratio": str(setting.high),
        "--eviction_ratio": str(setting.ratio),
        **dict(flag.split("=", 1) for flag in setting.extra),
    }
    args, seen = [], set()
    for arg in container["args"]:
        name = arg.split("=", 1)[0]
        if name in overrides:
            arg, _ = f"{name}={overrides[name]}", seen.add(name)
        args.append(arg)
    args += [f"{name}={value}" for name, value in overrides.items() if name not in seen]
    return {**container, "args": args}


def sized_pool(pool_mib: int) -> Callable[[str, str], str]:
    """The client-file change of the bench runs: tcp, the engine's segment is the whole pool, a 16 MB buffer."""
    def change(key: str, content: str) -> str:
        if key != CLIENT_FILE:
            return content
        return with_sizes(as_tcp(content), global_segment_size=f"{pool_mib}MB", local_buffer_size="16MB")
    return change


def measure(settings: list[Setting], paces: list[str], reps: int, pool_mib: int) -> dict[str, dict[str, list[dict]]]:
    work = Path(tempfile.mkdtemp(prefix="kvb-"))
    try:
        rendered = render("mooncake-layerwise", work / "out")
        lb, plan = basic_plan(rendered, work / "capacity", sized_pool(pool_mib))
        master = rendered.container("Deployment", STORE)
        engine = {**plan["engine"], "argv": [python("mooncake"), str(WRITER)]}
        plan = {
            "settings": [{"label": s.label, "master": lb.process(master_container(master, s), "master-0", "mooncake")}
                         for s in settings],
            "engine": engine, "metrics_port": plan["metrics_port"], "n": 3 * pool_mib, "reps": reps, "fills": paces,
        }
        timeout = 60 + 4 * reps * len(paces) * len(settings)
        return run_capacity_scenario(plan, work / "capacity", timeout)["runs"]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_capacity_scenario(plan: dict, work: Path, timeout: float,
                          script: Path = SCENARIOS / "mooncake_capacity.py") -> dict:
    """tests/live's run_scenario for a bench scenario (a private network namespace with only loopback), except
    that a process still exiting when the scenario ends gets 10 s to go instead of failing an hour of runs."""
    plan_file = work / "plan.json"
    plan_file.write_text(json.dumps({**plan, "work": str(work), "timeout": timeout}, indent=2))
    command = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"', python("mooncake"),
               str(script), str(plan_file)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the scenario and everything it started share this group
        process.communicate(timeout=10)
        raise SystemExit(f"the {script.stem} scenario overran {timeout + 30:.0f} s and was killed") from None
    lines = stdout.decode().strip().splitlines()
    if not lines:
        raise SystemExit(f"the {script.stem} scenario printed nothing (rc {process.returncode}): {stderr.decode()[-3000:]}")
    result = json.loads(lines[-1])
    if "error" in result:
        raise SystemExit(f"the {script.stem} scenario failed: {result['error']}\n{result.get('traceback', '')}")
    deadline = time.monotonic() + 10
    while (survivors := [pid for pid in result.get("pids", []) if is_running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    if survivors:
        raise SystemExit(f"processes outlived the {script.stem} scenario: {survivors}")
    return result


def summarize(runs: list[dict], puts: int) -> dict:
    ok = [r["ok"] for r in runs]
    return {
        "min": 100 * min(ok) / puts, "max": 100 * max(ok) / puts, "mean": 100 * statistics.mean(ok) / puts,
        "resident": statistics.mean(int(r["master_key_count"] or 0) for r in runs),
        "ms_per_mib": statistics.median(r["put_s"] for r in runs) * 1000 / puts,
    }


def cell(s: dict) -> str:
    span = f"{s['min']:.0f}" if round(s["min"]) == round(s["max"]) else f"{s['min']:.0f}–{s['max']:.0f}"
    return f"{span} % ({s['resident']:.0f})"


def table(results: dict[str, dict[str, list[dict]]], settings: list[Setting], paces: list[str], pool_mib: int) -> list[str]:
    summaries = {pace: {label: summarize(runs, 3 * pool_mib) for label, runs in results[pace].items()} for pace in paces}
    speeds = []
    for pace in paces:
        ms = statistics.median(s["ms_per_mib"] for s in summaries[pace].values())
        share = TICK_MS / ms / pool_mib * 100
        name = "burst" if pace == "0" else f"paced {pace} ms"
        speeds.append(f"{name}: {ms:.2f} ms/MiB, {share:.0f} % of the pool per 10 ms")
    lines = ["| watermark/ratio (flags) | " + " | ".join(speeds) + " |", "|---" * (len(paces) + 1) + "|"]
    for setting in settings:
        marks = {SHIPPED: " **(shipped)**", EARLIER: " (shipped before)", SEED: " (seed)"}.get(setting, "")
        row = [cell(summaries[pace][setting.label]) for pace in paces]
        lines.append(f"| {setting.label}{marks} | " + " | ".join(row) + " |")
    return lines


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return f"{os.cpu_count()} CPUs ({cpu}), {mem / 2**20:.0f} GiB RAM, {platform.system()} {platform.release()}"


def publish(lines: list[str], write: Path | None) -> None:
    """The results page on stdout, and into `write` (bench/results/...) when given."""
    print("\n".join(lines))
    if write:
        write.parent.mkdir(parents=True, exist_ok=True)
        write.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--paces", default=",".join(PACES), help="ms per MiB, comma-separated; 0 = back to back")
    parser.add_argument("--only", choices=["grid", "flags", "all"], default="all")
    parser.add_argument("--settings", help="watermark/ratio pairs instead, e.g. 0.6/0.4,0.5/0.4")
    parser.add_argument("--pool-mib", type=int, default=POOL_MIB, help=f"pool size; 3x as many 1 MiB puts ({POOL_MIB})")
    parser.add_argument("--write", type=Path, metavar="FILE", help="also write the table (markdown) to FILE")
    args = parser.parse_args()
    settings = {"grid": GRID, "flags": [EARLIER, *FLAGS], "all": [*GRID, *FLAGS]}[args.only]
    if args.settings:
        settings = [Setting(*map(float, pair.split("/"))) for pair in args.settings.split(",")]
    paces = args.paces.split(",")
    started = datetime.datetime.now()
    results = measure(settings, paces, args.reps, args.pool_mib)
    lines = [
        f"{3 * args.pool_mib} x 1 MiB into a {args.pool_mib} MB pool (3x), {args.reps} runs per cell, each on a fresh master; "
        "cell: put success min–max over the runs (objects resident at the end, mean)",
        "",
        *table(results, settings, paces, args.pool_mib),
        "",
        f"Measured {started:%Y-%m-%d %H:%M} on {machine()}, load average at the end "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}.",
    ]
    publish(lines, args.write)


if __name__ == "__main__":
    main()
