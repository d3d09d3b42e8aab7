"""Offline `kvpool preview` against the floor: a bare Pulumi program declaring the same objects, side by side.

    venv/bin/python bench/floor.py [--reps 5] [--sizes 1,4,8,16] [--up-reps 3] [--up-sizes 1,16]

For each size NP+ND, bench/preview_vs_deploy.py's service (stacks/Pulumi.dev.yaml's MemCache service with N prefill
and N decode instances, imported with `python -m kvpool import` as stack nN) is previewed once by ours; the floor
program (bench/floor/__main__.py) then declares exactly the objects of that preview's manifests folder, each with its
typed pulumi_kubernetes class and nothing else (no settings, no components, no checks, no policy pack). A check run
(not measured) proves it: the floor's run, built into manifests by kvpool/cli/views/manifests.py, writes the same text as
ours, file for file. Then, alternately and each in a fresh process, after one warm-up run of each:

  ours:  python -m kvpool preview --stack nN    (schema check, API-server checks and the policy pack included)
  floor: kvpool.cli.engine.stack_config.load_stack_config + kvpool.cli.engine.mock_engine.run_program of bench/floor, stack nN

and, to show where the difference goes, three steps between them: the floor previewed by `python -m kvpool preview
--no-policy` (ours' checks and files on the floor's objects), the same with `--policy-pack` bench/floor/empty_pack (a
Python pack whose one policy checks nothing: what the policy protocol costs, whatever a pack checks), and ours with
`--no-policy`. floor.md adds up the steps at the largest size.

Why the floor runs through kvpool/cli/engine/mock_engine.py and not through a test's `pulumi.runtime.set_mocks`: that module is
how `kvpool preview` runs any program, ours included: the SDK's mock monitor, the stack's config loaded from its
files as the CLI would, one root stack as the language host makes it, and every registration recorded as the engine
receives it (the work the Go engine does in its own process for `pulumi preview`). Ours and the floor share it, so
the difference between them is exactly our work: the settings, the components, building, checking and writing the
manifests, the policy pack and printing the plan. The floor process imports the mock engine and nothing of our
program (kvpool/cli/engine/mock_engine.py imports no settings model; tests/test_mock_engine.py holds it to that).

Every Python process, offline or started by the CLI, caches its bytecode (preview_vs_deploy.CACHED_BYTECODE).
Wall time is the whole process, start to exit; CPU time the user + system time of all its processes; peak memory
the largest process's peak RSS and, from one more run of each, the peak of the summed PSS of all the run's processes
(ours starts the policy pack's process), all measured by preview_vs_deploy.py's helpers. Ratios are ours / floor within the same run, so both see the same load.
Writes bench/results/floor.md and bench/results/floor.png.

With the real engine (the Pulumi CLI and Kubernetes provider of `bash tools/real-engine/build.sh`; skipped, saying
so, when they are not built): tests/e2e/realengine.py's PulumiWorkspace (a copy of the project, a file backend, no
cluster) runs, alternately and after one warm-up run of each,

  ours:  pulumi preview --policy-pack kvpool/policies -s nN    (the project, Motor's scripts not configured)
  floor: pulumi preview -s nN                           (bench/floor, the same manifests folder)
  floor: pulumi preview --policy-pack empty_pack -s nN  (and bench/floor/empty_pack)

timed start to exit, and once more each for the summed PSS of all their processes (CLI, language host, program,
provider, pack).

And `pulumi up` (skipped, saying so, without the cluster's binaries or Motor's checkout, whose scripts ours reads at
deploy time): on one local cluster (tests/e2e/realengine.py's Cluster: etcd, kube-apiserver, controller manager,
scheduler, kwok nodes, made for the engine pods by tests/e2e/cluster_stacks.py's ensure_nodes), for each of
--up-sizes, ours' offline preview of stack nN configured for `pulumi up` (Motor's scripts, which go into a ConfigMap)
gives the manifests the floor declares, checked as above. Both declare the same namespace, names and NodePorts, so
they are never up at once: alternately, after one warm-up run of each,

  ours:  pulumi up --yes --skip-preview --policy-pack kvpool/policies -s nN
  floor: pulumi up --yes --skip-preview -s nN

each timed start to exit (the provider returns when every Deployment is Ready; kwok readies the pods), then
`pulumi destroy --yes` (not timed), so that every `pulumi up` creates everything.
"""

from __future__ import annotations

import datetime
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # `python bench/floor.py` from anywhere

from bench.preview_vs_deploy import (  # noqa: E402 (after the path above)
    BUILD,
    CACHED_BYTECODE,
    ROOT,
    bench_arguments,
    bench_env,
    import_stack,
    machine,
    measured,
    objects_written,
    other_load,
    others_running,
    project,
    replot,
    service_files,
    summary_row,
    tree_peak,
    write_results,
)
from bench.pulumi_up import bench_cluster  # noqa: E402
from tests.e2e.cluster_stacks import (  # noqa: E402
    deployment_namespaces,
    deployments_not_ready_in,
    ensure_nodes,
)
from tests.e2e.cluster_stacks import manifests as written_objects  # noqa: E402
from tests.e2e.realengine import (  # noqa: E402
    BUILD_COMMAND,
    CLUSTER_BINARIES,
    MOTOR_CHECKOUT,
    MOTOR_DEPLOYER,
    PULUMI_BINARIES,
    Cluster,
    PulumiWorkspace,
    find_binaries,
)
from tests.e2e.views import offline_in_copy_to  # noqa: E402

FLOOR_PROGRAM = ROOT / "bench" / "floor"
EMPTY_PACK = "empty_pack"
"""bench/floor/empty_pack: a Python policy pack whose one policy checks nothing, what `--policy-pack` costs anyway."""
FLOOR_RUNNER = """import gc, sys
from pathlib import Path
from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import load_stack_config
project_dir = Path(sys.argv[1])
run_program(project_dir, load_stack_config(project_dir, sys.argv[2]))
gc.freeze()
"""
"""The floor's process: what `kvpool preview` does to run a program, and nothing else (its exit too: kvpool/__main__.py
leaves the objects out of the interpreter's last garbage collection)."""
TOOLS = {
    "floor": "floor program",
    "checked": "floor + kvpool preview's checks",
    "empty_pack": "floor + checks + empty pack",
    "ours_no_pack": "kvpool preview --no-policy",
    "ours": "kvpool preview",
}
"""The offline rows, in the table's order: the floor, then the floor run by `kvpool preview` (the schema and API-server
checks, the manifests and outputs written) without and with the empty pack, then ours without and with our pack."""
PLOT = (
    [("floor", "floor: bare program, same objects", "s"), ("empty_pack", "floor + checks + empty policy pack", "^"),
     ("ours", "python -m kvpool preview", "o")],
    "Offline preview vs the floor program, same objects",
)


def floor_project(folder: Path, manifests: dict[int, Path]) -> Path:
    """`folder` (emptied): bench/floor's program with one stack nN per size, naming that size's manifests folder, and
    its empty policy pack in `folder`/empty_pack."""
    shutil.rmtree(folder, ignore_errors=True)
    (folder / EMPTY_PACK).mkdir(parents=True)
    project = _copy_with_venv(Path("Pulumi.yaml"), folder)
    _copy_with_venv(Path(EMPTY_PACK) / "PulumiPolicy.yaml", folder)
    for size, path in manifests.items():
        stack = {"config": {f"{project['name']}:manifests": str(path)}}
        (folder / f"Pulumi.n{size}.yaml").write_text(yaml.safe_dump(stack))
    return folder


def _copy_with_venv(project_file: Path, folder: Path) -> dict:
    """bench/floor's `project_file` (Pulumi.yaml or a PulumiPolicy.yaml, relative to bench/floor) into `folder` with
    the project's virtualenv by its absolute path, as the copy is not beside bench/, and the program beside it linked.
    Returns the document written."""
    document = yaml.safe_load((FLOOR_PROGRAM / project_file).read_text())
    document["runtime"]["options"]["virtualenv"] = str(ROOT / "venv")
    (folder / project_file).write_text(yaml.safe_dump(document, sort_keys=False))
    program = project_file.parent / "__main__.py"
    (folder / program).symlink_to(FLOOR_PROGRAM / program)
    return document


def check_same_objects(floor_dir: Path, stack: str, manifests: Path) -> None:
    """The floor declares exactly the objects of `manifests`: its run, as kvpool/cli/views/manifests.py writes it, is the same
    text file for file."""
    from kvpool.cli.engine.mock_engine import run_program
    from kvpool.cli.engine.stack_config import load_stack_config
    from kvpool.cli.views.manifests import kubernetes_objects, manifest_text

    run = run_program(floor_dir, load_stack_config(floor_dir, stack))
    floor = {obj.file_name: manifest_text(obj.body) for obj in kubernetes_objects(run.resources)}
    ours = {path.name: path.read_text(encoding="utf-8") for path in manifests.glob("*.yaml")}
    if floor != ours:
        differing = sorted(name for name in floor.keys() | ours.keys() if floor.get(name) != ours.get(name))
        raise SystemExit(f"the floor of {stack} does not declare the objects of {manifests}: {', '.join(differing)}")


def gap_lines(by_key: dict[tuple[int, str], dict], size: int) -> list[str]:
    """floor.md's table of where ours' wall time and largest process's memory above the floor go, at `size`: each
    step from one offline row to the next."""
    steps = [  # each step: its label, the rows added and the rows subtracted
        ("the checks and the files (floor + kvpool preview's checks - floor)", ["checked"], ["floor"]),
        ("the policy protocol (floor + checks + empty pack - floor + checks)", ["empty_pack"], ["checked"]),
        ("our program and settings (kvpool preview --no-policy - floor + checks)", ["ours_no_pack"], ["checked"]),
        ("our policies beyond an empty pack's cost ((kvpool preview - kvpool preview --no-policy) - (floor + checks "
         "+ empty pack - floor + checks))", ["ours", "checked"], ["ours_no_pack", "empty_pack"]),
    ]
    lines = [
        f"Where ours' time and memory above the floor go at {size}P+{size}D (differences of the medians above; the "
        "steps add up to ours - floor):",
        "",
        "| step | wall | CPU, all processes | peak MiB, largest process |",
        "|---|---|---|---|",
    ]
    for label, added, subtracted in steps:
        difference = {key: sum(by_key[size, tool][key] for tool in added)
                      - sum(by_key[size, tool][key] for tool in subtracted) for key in ("wall", "cpu", "peak")}
        lines.append(f"| {label} | {difference['wall']:+.2f} s | {difference['cpu']:+.2f} s | {difference['peak']:+.0f} |")
    return lines


def spread(walls: list[float]) -> str:
    return f"{statistics.median(walls):.2f} s ({min(walls):.2f}–{max(walls):.2f})"


def real_engine(sizes: list[int], reps: int, manifests: dict[int, Path]) -> list[str]:
    """floor.md's lines on `pulumi preview` of ours and of the floor, alternated; one line saying why not when the
    real engine is not built."""
    bins, missing = find_binaries(PULUMI_BINARIES)
    if missing:
        return [f"Not measured: {', '.join(missing)} not built (`{BUILD_COMMAND}`)."]
    root = Path(tempfile.mkdtemp(prefix="motor-kvpool-floor-"))
    try:
        workspace = PulumiWorkspace(bins, root / "pulumi", kubeconfig=None)
        workspace.root.mkdir()
        workspace.setup()
        floor_dir = floor_project(root / "floor", manifests)
        for size in sizes:
            import_stack(workspace.project, service_files(size), size)
            workspace.run("stack", "init", f"n{size}").check()
            workspace.run("stack", "init", f"n{size}", cwd=floor_dir).check()
        previews = {
            "ours": (workspace.project, ["preview", "--policy-pack", "kvpool/policies"]),
            "floor": (floor_dir, ["preview"]),
            "empty_pack": (floor_dir, ["preview", "--policy-pack", str(floor_dir / EMPTY_PACK)]),
        }
        walls: dict[tuple[int, str], list[float]] = {}
        for rep in range(reps + 1):  # the first of each is the warm-up
            for size in sizes:
                for tool, (cwd, command) in previews.items():
                    seconds = workspace.run(*command, "-s", f"n{size}", cwd=cwd, extra_env=CACHED_BYTECODE).check().seconds
                    if rep:
                        walls.setdefault((size, tool), []).append(seconds)
            print(f"real engine: repetition {rep}/{reps} done", file=sys.stderr)
        trees = {
            (size, tool): tree_peak(cwd, [str(bins["pulumi"]), *command, "-s", f"n{size}", "--non-interactive"],
                                    {**workspace.env(), **CACHED_BYTECODE})
            for size in sizes for tool, (cwd, command) in previews.items()
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)
    rows = [
        "The Pulumi CLI and Kubernetes provider built by tools/real-engine/build.sh, a file backend, no cluster; ours: "
        "`pulumi preview --policy-pack kvpool/policies` of the project, the floor: `pulumi preview` of bench/floor declaring "
        "the same manifests, and the floor with bench/floor/empty_pack, a Python policy pack whose one policy checks "
        "nothing (`--policy-pack empty_pack`: what the policy protocol costs whatever a pack checks); bytecode cached "
        f"as offline; median (min–max) of {reps} runs each, alternating, after one warm-up run of each. Peak MiB: "
        "summed PSS of all the command's processes (CLI, language host, program, provider, pack), one more run.",
        "",
        "| service | ours: pulumi preview --policy-pack kvpool/policies | floor: pulumi preview | floor + empty pack "
        "| ours vs floor | floor + empty pack vs floor | ours vs floor + empty pack | peak MiB, ours | peak MiB, floor "
        "| memory vs floor |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        ours, floor, empty = (statistics.median(walls[size, tool]) for tool in ("ours", "floor", "empty_pack"))
        rows.append(
            f"| {size}P+{size}D | {spread(walls[size, 'ours'])} | {spread(walls[size, 'floor'])} "
            f"| {spread(walls[size, 'empty_pack'])} | {ours / floor:.2f}x | {empty / floor:.2f}x | {ours / empty:.2f}x "
            f"| {trees[size, 'ours']:.0f} | {trees[size, 'floor']:.0f} | {trees[size, 'ours'] / trees[size, 'floor']:.2f}x |"
        )
    return rows


def wait_deleted(cluster: Cluster, namespaces: list[str], timeout: float = 120) -> None:
    """Until the namespaces are gone: `pulumi destroy` returns while a deleted namespace is still terminating (its
    objects being removed), and the next `pulumi up` could not create it meanwhile."""
    deadline = time.monotonic() + timeout
    while any(cluster.get(f"/api/v1/namespaces/{namespace}") is not None for namespace in namespaces):
        if time.monotonic() > deadline:
            raise SystemExit(f"namespaces {', '.join(namespaces)} still there {timeout:.0f} s after pulumi destroy")
        time.sleep(0.5)


def cluster_up(sizes: list[int], reps: int) -> list[str]:
    """floor.md's lines on `pulumi up` of ours and of the floor on the local cluster, alternated, each destroyed
    before the next; one line saying why not when the cluster's binaries or Motor's checkout are missing."""
    bins, missing = find_binaries(PULUMI_BINARIES + CLUSTER_BINARIES)
    if missing:
        return [f"Not measured: {', '.join(missing)} not built (`{BUILD_COMMAND}`)."]
    if not MOTOR_DEPLOYER.is_dir():
        return [f"Not measured: no Motor checkout at {MOTOR_CHECKOUT} (MOTOR_CHECKOUT), whose scripts `pulumi up` reads."]
    walls: dict[tuple[int, str], list[float]] = {}
    namespaces: dict[int, list[str]] = {}  # of each size's Deployments
    with bench_cluster(bins) as (workspace, cluster, root):
        for size in sizes:
            import_stack(workspace.project, service_files(size), size)
            workspace.stack_init(f"n{size}")  # Motor's scripts, as `pulumi up` needs them
            if offline_in_copy_to(workspace, f"n{size}", root / "out").returncode != 0:
                raise SystemExit(f"n{size}: the offline preview for `pulumi up` failed")
            objects = written_objects(root / "out", f"n{size}")
            ensure_nodes(cluster, objects)
            namespaces[size] = deployment_namespaces(objects)
        floor_dir = floor_project(root / "floor", {size: root / "out" / f"n{size}" / "manifests" for size in sizes})
        for size in sizes:
            check_same_objects(floor_dir, f"n{size}", root / "out" / f"n{size}" / "manifests")
            workspace.run("stack", "init", f"n{size}", cwd=floor_dir).check()
        ups = {"ours": (workspace.project, ["--policy-pack", "kvpool/policies"]), "floor": (floor_dir, [])}
        for rep in range(reps + 1):  # the first of each is the warm-up
            for size in sizes:
                for tool, (cwd, options) in ups.items():
                    stack = f"n{size}"
                    up = workspace.run("up", "--yes", "--skip-preview", *options, "-s", stack, cwd=cwd,
                                       extra_env=CACHED_BYTECODE).check()
                    if not_ready := deployments_not_ready_in(cluster, namespaces[size]):
                        raise SystemExit(f"{tool} {stack}: pulumi up returned with Deployments not Ready: {not_ready}")
                    workspace.run("destroy", "--yes", "-s", stack, cwd=cwd).check()
                    wait_deleted(cluster, namespaces[size])
                    if rep:
                        walls.setdefault((size, tool), []).append(up.seconds)
            print(f"pulumi up: repetition {rep}/{reps} done", file=sys.stderr)
    rows = [
        "The local cluster of tests/e2e (etcd, kube-apiserver, controller manager, scheduler, kwok nodes; loopback "
        "only), the same CLI and provider and a file backend; ours: `pulumi up --yes --skip-preview --policy-pack "
        "policies` of the project (Motor's scripts configured), the floor: `pulumi up --yes --skip-preview` of "
        "bench/floor declaring the same manifests (those of ours' offline preview of that configuration, checked file "
        "for file); each returns when every Deployment is Ready (kwok readies the pods at once) and is followed by an "
        "untimed `pulumi destroy --yes`, so every `pulumi up` creates all the objects. Median (min–max) of "
        f"{reps} runs each, alternating, after one warm-up run of each.",
        "",
        "| service | ours: pulumi up --policy-pack kvpool/policies | floor: pulumi up | wall vs floor |",
        "|---|---|---|---|",
    ]
    for size in sizes:
        ours, floor = walls[size, "ours"], walls[size, "floor"]
        rows.append(f"| {size}P+{size}D | {spread(ours)} | {spread(floor)} "
                    f"| {statistics.median(ours) / statistics.median(floor):.2f}x |")
    return rows


def main() -> None:
    parser = bench_arguments(__doc__)
    parser.add_argument("--no-real-engine", action="store_true", help="only the offline preview")
    parser.add_argument("--up-reps", type=int, default=3, help="runs of each `pulumi up` (0: none)")
    parser.add_argument("--up-sizes", help="instances per role of the `pulumi up` rows (default: --sizes)")
    args = parser.parse_args()
    if args.replot:
        replot("floor", PLOT)
        return
    sizes = [int(size) for size in args.sizes.split(",")]
    up_sizes = [int(size) for size in (args.up_sizes or args.sizes).split(",")]
    env = bench_env()
    project_dir, out_dir = project(), BUILD / "floor-out"
    ours = {}
    for size in sizes:
        import_stack(project_dir, service_files(size), size)
        ours[size] = [sys.executable, "-m", "kvpool", "preview", "--stack", f"n{size}", "--project-dir",
                      str(project_dir), "--out", str(out_dir)]
    manifests = {}
    for size in sizes:  # ours' warm-up run writes the manifests the floor declares; kept apart from later runs
        measured(ROOT, ours[size], env)
        manifests[size] = BUILD / "floor-manifests" / f"n{size}"
        shutil.rmtree(manifests[size], ignore_errors=True)
        shutil.copytree(out_dir / f"n{size}" / "manifests", manifests[size])
    floor_dir = floor_project(BUILD / "floor", manifests)
    floor_preview = [sys.executable, "-m", "kvpool", "preview", "--project-dir", str(floor_dir), "--out",
                     str(BUILD / "floor-checked-out")]
    commands = {
        size: {
            "floor": [sys.executable, "-c", FLOOR_RUNNER, str(floor_dir), f"n{size}"],
            "checked": [*floor_preview, "--stack", f"n{size}", "--no-policy"],
            "empty_pack": [*floor_preview, "--stack", f"n{size}", "--policy-pack", str(floor_dir / EMPTY_PACK)],
            "ours_no_pack": [*ours[size], "--no-policy"],
            "ours": ours[size],
        }
        for size in sizes
    }
    for size in sizes:
        check_same_objects(floor_dir, f"n{size}", manifests[size])
        for tool in ("floor", "checked", "empty_pack", "ours_no_pack"):  # their warm-ups (ours' ran above)
            measured(ROOT, commands[size][tool], env)

    load_before, others_before = os.getloadavg(), others_running()
    started = datetime.datetime.now()
    samples: dict[tuple[int, str], list[tuple[float, float, float]]] = {}
    for rep in range(args.reps):  # alternately: each tool in TOOLS' order, size by size
        for size in sizes:
            for tool in TOOLS:
                samples.setdefault((size, tool), []).append(measured(ROOT, commands[size][tool], env))
        print(f"repetition {rep + 1}/{args.reps} done", file=sys.stderr)
    trees = {(size, tool): tree_peak(ROOT, commands[size][tool], env) for size in sizes for tool in TOOLS}
    if args.no_real_engine:
        real_lines = up_lines = ["Not measured (--no-real-engine)."]
    else:
        real_lines = real_engine(sizes, args.reps, manifests)
        up_lines = cluster_up(up_sizes, args.up_reps) if args.up_reps else ["Not measured (--up-reps 0)."]
    load_after, others_after = os.getloadavg(), others_running()

    rows = [summary_row(size, tool, samples[size, tool], trees[size, tool], objects_written("preview", manifests[size]))
            for size in sizes for tool in TOOLS]
    by_key = {(row["size"], row["tool"]): row for row in rows}
    lines = [
        "# Offline preview vs the floor program",
        "",
        f"`venv/bin/python bench/floor.py --reps {args.reps} --sizes {args.sizes} --up-reps {args.up_reps} "
        f"--up-sizes {','.join(map(str, up_sizes))}`, {started:%Y-%m-%d %H:%M}. "
        f"Machine: {machine()}.",
        "",
        "The service of bench/results/preview.md at each size (stacks/Pulumi.dev.yaml's MemCache P/D service with N "
        "prefill and N decode instances). Ours: `python -m kvpool preview` (the program under the mock engine, the "
        "policy pack in its own process, the strict Kubernetes 1.30 schema and API-server checks, the manifests "
        "written). The floor: bench/floor/__main__.py, a bare Pulumi program declaring the same objects (ours' "
        "manifests, checked file for file) with their typed pulumi_kubernetes classes, run by the same mock engine "
        "(kvpool/cli/engine/mock_engine.py) and nothing else; both leave their objects out of the interpreter's last "
        "garbage collection at exit, as kvpool/__main__.py does. Between them, to show where the difference goes: "
        "the floor program previewed by `python -m kvpool preview --no-policy` (the checks and the files written, no "
        "pack), the same with bench/floor/empty_pack (a Python policy pack whose one policy checks nothing: what the "
        "policy protocol costs whatever a pack checks), and ours with `--no-policy`. Each command in a fresh process, "
        f"{args.reps} runs each, alternating the five, after one warm-up run of each.",
        "",
        "| service | tool | wall median (min–max) | CPU median | peak MiB, largest process | peak MiB, all processes "
        "| objects | wall vs floor | CPU vs floor | memory vs floor |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for size in sizes:
        for tool in TOOLS:
            row, base = by_key[size, tool], by_key[size, "floor"]
            above = tool != "floor"
            ratio_wall = f"{row['wall'] / base['wall']:.2f}x" if above else "—"
            ratio_cpu = f"{row['cpu'] / base['cpu']:.2f}x" if above else "—"
            ratio_mem = f"{row['peak'] / base['peak']:.2f}x ({row['tree'] / base['tree']:.2f}x)" if above else "—"
            lines.append(
                f"| {size}P+{size}D | {TOOLS[tool]} | {row['wall']:.2f} s ({row['wall_min']:.2f}–{row['wall_max']:.2f}) "
                f"| {row['cpu']:.2f} s | {row['peak']:.0f} | {row['tree']:.0f} | {row['objects']} | {ratio_wall} "
                f"| {ratio_cpu} | {ratio_mem} |"
            )
    lines += [
        "",
        "CPU: user + system time of all the run's processes (ours: the policy pack's too), which on a busy machine "
        "tracks the work done better than wall time. Memory ratio: largest process (all processes, summed PSS).",
        "",
        *gap_lines(by_key, max(sizes)),
        "",
        "## Real engine: `pulumi preview`",
        "",
        *real_lines,
        "",
        "## Real engine: `pulumi up` on the local cluster",
        "",
        *up_lines,
    ]
    write_results("floor", lines, rows, PLOT, other_load(load_before, others_before, load_after, others_after))


if __name__ == "__main__":
    main()
