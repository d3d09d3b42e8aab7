"""Offline preview against MindIE Motor's `deploy.py --dry-run`, side by side on the same service.

    venv/bin/python -m bench.preview_vs_deploy [--reps 5] [--sizes 1,4,8,16]

Builds what deploy.py needs under build/bench/ (a venv from bench/requirements-deploy.txt, Motor's requirements
pinned; a writable copy of Motor's examples/deployer, read from MOTOR_DEPLOYER_DIR or
../shared/reference/motor-8919e55/examples/deployer; a stub `kubectl` that answers deploy.py's node-label query
with one A2 node), then for each size NP+ND writes one user_config.json + env.json (stacks/Pulumi.dev.yaml's
MemCache service with N prefill and N decode instances), imports that pair with `python -m kvpool import` into a
throw-away project, and runs, alternately and each in a fresh process:

  deploy.py --config user_config.json --env env.json --dry-run
  python -m kvpool preview --stack nN   (the policy pack and the strict schema check included, as by default)

Both refuse more than 16 instances per role (Motor's INSTANCE_NUM_MAX; our settings enforce the same limit), so
16P+16D is the largest service either can preview.

Wall time is the whole process, start to exit. Peak memory is the largest process's peak RSS
(getrusage(RUSAGE_CHILDREN) of a fresh launcher per run, which covers the pack's process too), and, from one
more run of each, the peak of the summed PSS of all the run's processes, sampled every 5 ms. Both tools get a
bytecode cache (PYTHONPYCACHEPREFIX under build/bench) and one warm-up run, as on a machine where they ran
before. Writes bench/results/preview.md and bench/results/preview.png (matplotlib from bench/requirements.txt,
in build/bench/plot-venv).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests import deploy_py

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "bench"
RESULTS = ROOT / "bench" / "results"
DEFAULT_DEPLOYER = ROOT.parent / "shared" / "reference" / "motor-8919e55" / "examples" / "deployer"
MOTOR_MAX_INSTANCES = 16
# deploy.py --dry-run asks for the nodes labelled accelerator=huawei-Ascend910: one A2 node.
NODES = deploy_py.nodes({"accelerator": "huawei-Ascend910", "accelerator-type": "module-910b-8"})
PLOT = (
    [("deploy", "deploy.py --dry-run (Motor)", "s"), ("preview", "python -m kvpool preview", "o")],
    "Offline preview vs deploy.py --dry-run, same service",
)
LAUNCHER = """import resource, subprocess, sys, time
started = time.perf_counter()
rc = subprocess.run(sys.argv[2:], cwd=sys.argv[1], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE).returncode
wall = time.perf_counter() - started
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(rc, wall, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)
"""


def run(command: list[str], **kwargs) -> None:
    subprocess.run(command, check=True, **kwargs)


def venv(name: str, requirements: Path) -> Path:
    """build/bench/<name>: a venv of `requirements`, rebuilt when the file changes."""
    path = BUILD / name
    stamp = requirements.read_text()
    if (path / ".installed").is_file() and (path / ".installed").read_text() == stamp:
        return path / "bin" / "python"
    shutil.rmtree(path, ignore_errors=True)
    run([sys.executable, "-m", "venv", str(path)])
    run([str(path / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-r",
         str(requirements)])
    (path / ".installed").write_text(stamp)
    return path / "bin" / "python"


def deployer_copy(source: Path) -> Path:
    target = BUILD / "deployer"
    return target if (target / "deploy.py").is_file() else deploy_py.writable_copy(source, target)


def service_files(size: int) -> Path:
    """user_config.json + env.json: the dev stack's service with `size` prefill and `size` decode instances."""
    folder = BUILD / "services" / f"n{size}"
    folder.mkdir(parents=True, exist_ok=True)
    config = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]
    user: dict = {"version": "v2.0"}
    env: dict = {"version": "2.0.0"}
    for key, value in config.items():
        section = key.split(":", 1)[1]
        if section == "env":
            env.update(value)
        else:
            user[section] = value
    user["motor_deploy_config"].update(p_instances_num=size, d_instances_num=size, job_id=f"svc-n{size}")
    (folder / "user_config.json").write_text(json.dumps(user, indent=2) + "\n")
    (folder / "env.json").write_text(json.dumps(env, indent=2) + "\n")
    return folder


def project() -> Path:
    """A throw-away project: Pulumi.yaml copied, the program's folders linked, stacks/ its own."""
    folder = BUILD / "project"
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "stacks").mkdir(parents=True)
    (folder / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    for name in ("__main__.py", "kvpool"):
        (folder / name).symlink_to(ROOT / name)
    return folder


def import_stack(project_dir: Path, folder: Path, size: int) -> None:
    run([sys.executable, "-m", "kvpool", "import", "--user-config", str(folder / "user_config.json"),
         "--env-config", str(folder / "env.json"), "--stack", f"n{size}", "--stacks-dir", str(project_dir / "stacks"),
         "--force"], cwd=ROOT, stdout=subprocess.DEVNULL)


def measured(cwd: Path, command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall s, peak RSS MiB of the largest process, CPU s of all its processes, user + system) of one fresh run."""
    out = subprocess.run([sys.executable, "-c", LAUNCHER, str(cwd), *command], env=env, capture_output=True, text=True,
                         check=True).stdout.split()
    rc, wall, maxrss_kib, cpu = int(out[0]), float(out[1]), int(out[2]), float(out[3])
    if rc != 0:
        raise SystemExit(f"{' '.join(command)} exited with {rc}")
    return wall, maxrss_kib / 1024, cpu


def tree_peak(cwd: Path, command: list[str], env: dict[str, str]) -> float:
    """Peak of the summed proportional set size (MiB: shared pages split between the processes that map them, so a
    fork or a shared library is not counted twice) of the command's process and all its descendants (the Pulumi CLI
    starts its plugins in process groups of their own), sampled every 5 ms."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while process.poll() is None:
        total = 0
        for pid in _descendants(process.pid):
            try:
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue  # exited meanwhile
            total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
        peak = max(peak, total)
        time.sleep(0.005)
    return peak / 1024


def _descendants(root: int) -> list[int]:
    """`root` and every process below it, from each process's parent in /proc/<pid>/stat."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    found, pending = [], [root]
    while pending:
        pid = pending.pop()
        found.append(pid)
        pending += children.get(pid, [])
    return found


def summary_row(size: int, tool: str, samples: list[tuple[float, float, float]], tree: float, objects: int) -> dict:
    """One size's runs of one tool (measured's samples, tree_peak's peak): the numbers a results table shows."""
    walls = [sample[0] for sample in samples]
    return {
        "instances": 2 * size, "size": size, "tool": tool, "wall": statistics.median(walls), "wall_min": min(walls),
        "wall_max": max(walls), "peak": max(sample[1] for sample in samples), "tree": tree,
        "cpu": statistics.median(sample[2] for sample in samples), "objects": objects,
    }


def objects_written(kind: str, out: Path) -> int:
    if kind == "deploy":
        return sum(1 for path in out.glob("*.yaml") for doc in yaml.safe_load_all(path.read_text()) if doc)
    return len(list(out.glob("*.yaml")))


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
    return f"{os.cpu_count()} CPUs ({cpu}), {mem / 2**20:.0f} GiB RAM, {platform.system()} {platform.release()}, " \
           f"Python {platform.python_version()}"


def others_running(seconds: float = 2.0) -> str:
    """The processes that used the CPU during `seconds`, busiest first (from /proc/<pid>/stat)."""
    def ticks() -> dict[int, tuple[str, int]]:
        found = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            name, fields = text[text.index("(") + 1 : text.rindex(")")], text.rsplit(")", 1)[1].split()
            found[int(stat.parent.name)] = (name, int(fields[11]) + int(fields[12]))
        return found

    before = ticks()
    time.sleep(seconds)
    after = ticks()
    hz = os.sysconf("SC_CLK_TCK")
    busy = sorted(
        ((used - before[pid][1]) / hz / seconds, name)
        for pid, (name, used) in after.items()
        if pid in before and pid != os.getpid() and used > before[pid][1]
    )[::-1]
    return ", ".join(f"{name} {100 * share:.0f} %" for share, name in busy[:6] if share >= 0.05) or "nothing (< 5 % CPU)"


def plot(rows: list[dict], target: Path, series: list[tuple[str, str, str]], title: str) -> None:
    """Wall time (median, min-max bars) against instances, one line per (tool, label, marker) of `series`."""
    python = venv("plot-venv", ROOT / "bench" / "requirements.txt")
    data = json.dumps(rows)
    script = f"""
import json, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = json.loads({data!r})
fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
for tool, label, marker in {series!r}:
    points = sorted((r["instances"], r["wall"], r["wall_min"], r["wall_max"]) for r in rows if r["tool"] == tool)
    xs = [p[0] for p in points]
    ax.errorbar(xs, [p[1] for p in points], yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
                marker=marker, capsize=3, label=label)
ax.set_xticks(sorted({{r["instances"] for r in rows}}))
ax.set_xlim(left=0)
ax.set_xlabel("engine instances (prefill + decode)")
ax.set_ylabel("wall time, s (median; bars: min-max)")
ax.set_ylim(bottom=0)
ax.grid(alpha=0.3)
ax.legend()
ax.set_title({title!r})
fig.tight_layout()
fig.savefig({str(target)!r})
"""
    run([str(python), "-c", script])


def other_load(load_before: tuple[float, ...], others_before: str, load_after: tuple[float, ...], others_after: str) -> str:
    """The results' line on what else ran (os.getloadavg and others_running, before and after the runs)."""
    return (
        f"Other load on the machine: load average {' '.join(f'{x:.1f}' for x in load_before)} before and "
        f"{' '.join(f'{x:.1f}' for x in load_after)} after; CPU use of other processes over 2 s before the runs: "
        f"{others_before}; after: {others_after}."
    )


def bench_arguments(doc: str) -> argparse.ArgumentParser:
    """The options every side-by-side bench takes: --reps, --sizes, --replot."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--sizes", default="1,4,8,16", help="instances per role, comma-separated (at most 16)")
    parser.add_argument("--replot", action="store_true", help="only redraw the plot from the last run's numbers")
    return parser


def replot(name: str, plot_args: tuple) -> None:
    plot(json.loads((BUILD / f"{name}-results.json").read_text()), RESULTS / f"{name}.png", *plot_args)


def write_results(name: str, lines: list[str], rows: list[dict], plot_args: tuple, load: str) -> None:
    """bench/results/<name>.md (`lines`, then `load` and the plot) and <name>.png, the rows in
    build/bench/<name>-results.json for --replot; prints the text."""
    lines = [*lines, "", load, "", f"![wall time against instances]({name}.png)"]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")
    (BUILD / f"{name}-results.json").write_text(json.dumps(rows, indent=2))
    plot(rows, RESULTS / f"{name}.png", *plot_args)
    print("\n".join(lines))


CACHED_BYTECODE = {"PYTHONDONTWRITEBYTECODE": "", "PYTHONPYCACHEPREFIX": str(BUILD / "pycache")}
"""Every measured Python process, offline or started by the real CLI, writes its bytecode to (and reads it from) one
cache under build/bench, as on a machine where the tools ran before (an empty PYTHONDONTWRITEBYTECODE is as good as
none): where the environment says not to write bytecode, each run would compile the project's modules again."""


def bench_env() -> dict[str, str]:
    """The environment of every measured offline run: CACHED_BYTECODE; the stub kubectl first on PATH."""
    env = dict(os.environ)
    env.update(PATH=f"{deploy_py.kubectl_dir(BUILD / 'bin')}{os.pathsep}{env['PATH']}", KVPOOL_NODES=NODES,
               **CACHED_BYTECODE)
    return env


def main() -> None:
    parser = bench_arguments(__doc__)
    parser.add_argument("--deployer", type=Path, default=Path(os.environ.get("MOTOR_DEPLOYER_DIR", DEFAULT_DEPLOYER)))
    args = parser.parse_args()
    if args.replot:
        replot("preview", PLOT)
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    if not (args.deployer / "deploy.py").is_file():
        raise SystemExit(f"no deploy.py in {args.deployer}: set MOTOR_DEPLOYER_DIR to Motor's examples/deployer")

    deploy_python = venv("deploy-venv", ROOT / "bench" / "requirements-deploy.txt")
    deployer = deployer_copy(args.deployer)
    project_dir = project()
    env = bench_env()
    out_dir = BUILD / "preview-out"
    commands = {}
    for size in sizes:
        folder = service_files(size)
        import_stack(project_dir, folder, size)
        ours = [sys.executable, "-m", "kvpool", "preview", "--stack", f"n{size}", "--project-dir", str(project_dir),
                "--out", str(out_dir)]
        commands[size] = {}
        if size <= MOTOR_MAX_INSTANCES:
            theirs = [str(deploy_python), "deploy.py", "--config", str(folder / "user_config.json"),
                      "--env", str(folder / "env.json"), "--dry-run"]
            commands[size]["deploy"] = (deployer, theirs)
        commands[size]["preview"] = (ROOT, ours)

    load_before, others_before = os.getloadavg(), others_running()
    started = datetime.datetime.now()
    samples: dict[tuple[int, str], list[tuple[float, float, float]]] = {}
    objects: dict[tuple[int, str], int] = {}
    for size, tools in commands.items():  # warm-up: bytecode caches, page cache
        for tool, (cwd, command) in tools.items():
            shutil.rmtree(deployer / "output_yamls", ignore_errors=True)
            measured(cwd, command, env)
            out = deployer / "output_yamls" if tool == "deploy" else out_dir / f"n{size}" / "manifests"
            objects[size, tool] = objects_written(tool, out)
    for rep in range(args.reps):  # alternately: deploy.py, then ours, size by size
        for size, tools in commands.items():
            for tool, (cwd, command) in tools.items():
                samples.setdefault((size, tool), []).append(measured(cwd, command, env))
        print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    trees = {(size, tool): tree_peak(cwd, command, env) for size, tools in commands.items()
             for tool, (cwd, command) in tools.items()}
    load_after, others_after = os.getloadavg(), others_running()

    rows = [summary_row(size, tool, samples[size, tool], trees[size, tool], objects[size, tool])
            for size, tools in commands.items() for tool in tools]
    by_key = {(row["size"], row["tool"]): row for row in rows}
    lines = [
        "# Offline preview vs deploy.py --dry-run",
        "",
        f"`{' '.join(['venv/bin/python', '-m', 'bench.preview_vs_deploy', '--reps', str(args.reps), '--sizes', args.sizes])}`"
        f", {started:%Y-%m-%d %H:%M}. Machine: {machine()}.",
        "",
        "The same service at each size (stacks/Pulumi.dev.yaml's MemCache P/D service with N prefill and N decode "
        "instances, one user_config.json + env.json, imported with `python -m kvpool import`); each command in a "
        f"fresh process, {args.reps} runs each, alternating deploy.py and ours, after one warm-up run of each. "
        "`python -m kvpool preview` runs the program under the mocks, the policy pack (its own process) and the "
        "strict Kubernetes 1.30 schema check, and writes the manifests; deploy.py (Motor 8919e55) writes its YAML "
        "files, with a stub kubectl answering its node-label query. Both refuse more than 16 instances per role "
        "(Motor's limit, which our settings enforce too), so 64P+64D cannot be measured with either.",
        "",
        "| service | tool | wall median (min–max) | peak MiB, largest process | peak MiB, all processes | objects "
        "| wall vs deploy.py | memory vs deploy.py |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        for tool in commands[size]:
            row = by_key[size, tool]
            base = by_key.get((size, "deploy"))
            ratio_wall = f"{row['wall'] / base['wall']:.2f}x" if base and tool == "preview" else "—"
            ratio_mem = (f"{row['peak'] / base['peak']:.2f}x ({row['tree'] / base['tree']:.2f}x)"
                         if base and tool == "preview" else "—")
            name = "deploy.py --dry-run" if tool == "deploy" else "kvpool preview"
            lines.append(
                f"| {size}P+{size}D | {name} | {row['wall']:.2f} s ({row['wall_min']:.2f}–{row['wall_max']:.2f}) "
                f"| {row['peak']:.0f} | {row['tree']:.0f} | {row['objects']} | {ratio_wall} | {ratio_mem} |"
            )
    lines += [
        "",
        "Objects: Kubernetes objects written (deploy.py: YAML documents in output_yamls/; ours: manifests/ files, "
        "which also hold the namespace, RBAC, NetworkPolicies and ConfigMaps deploy.py applies with kubectl "
        "create). Memory ratio: largest process (all processes).",
    ]
    write_results("preview", lines, rows, PLOT, other_load(load_before, others_before, load_after, others_after))


if __name__ == "__main__":
    main()
