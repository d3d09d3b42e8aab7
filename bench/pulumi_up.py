"""`pulumi preview` and `pulumi up` with the real engine, on the service bench/preview_vs_deploy.py measures.

    venv/bin/python -m bench.pulumi_up [--reps 3] [--sizes 1,4,16]

The real Pulumi CLI and Kubernetes provider on a file backend, against one fresh loopback-only cluster (etcd,
kube-apiserver, controller manager, scheduler, kwok nodes): the binaries of `bash tools/real-engine/build.sh`,
started by tests/e2e/realengine.py. For each size NP+ND, preview_vs_deploy.py's service is imported as stack nN
(namespace svc-nN) into one copy of the project, and timed, wall, start to exit:

  pulumi preview --policy-pack kvpool/policies -s nN       --reps times, before the stack is up
  python -m kvpool preview --stack nN               --reps times, alternating with it (its pack included)
  pulumi up --yes --skip-preview -s nN              once; the provider waits until every Deployment is Ready
  pulumi up --yes --skip-preview --expect-no-changes -s nN    once more: nothing to do

after one unmeasured run of each preview. `pulumi up` needs Motor's scripts (MOTOR_CHECKOUT, default
../shared/reference/motor-8919e55). Writes bench/results/pulumi.md. The cluster is stopped on exit.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from bench.preview_vs_deploy import (
    RESULTS,
    ROOT,
    import_stack,
    machine,
    measured,
    other_load,
    others_running,
    service_files,
)
from tests.e2e.cluster_stacks import (
    deployment_namespaces,
    deployments_not_ready_in,
    manifests,
    up_stack,
)
from tests.e2e.realengine import (
    BUILD_COMMAND,
    CLUSTER_BINARIES,
    MOTOR_CHECKOUT,
    MOTOR_DEPLOYER,
    PULUMI_BINARIES,
    Cluster,
    PulumiWorkspace,
    find_binaries,
)


def spread(walls: list[float]) -> str:
    return f"{statistics.median(walls):.1f} s ({min(walls):.1f}–{max(walls):.1f})"


def measure(size: int, reps: int, workspace: PulumiWorkspace, cluster: Cluster, out: Path) -> dict[str, str]:
    stack = f"n{size}"
    import_stack(workspace.project, service_files(size), size)
    workspace.stack_init(stack)
    pulumi = ["preview", "--policy-pack", "kvpool/policies", "-s", stack]
    ours = [sys.executable, "-m", "kvpool", "preview", "--stack", stack, "--project-dir", str(workspace.project),
            "--out", str(out)]
    env = dict(os.environ)
    walls: dict[str, list[float]] = {"pulumi": [], "kvpool": []}
    for rep in range(reps + 1):  # the first of each is the warm-up (and writes the manifests up_stack reads)
        pulumi_wall = workspace.run(*pulumi).check().seconds
        kvpool_wall = measured(ROOT, ours, env)[0]
        if rep:
            walls["pulumi"].append(pulumi_wall)
            walls["kvpool"].append(kvpool_wall)
    up = up_stack(workspace, cluster, stack, out)
    if not_ready := deployments_not_ready_in(cluster, deployment_namespaces(manifests(out, stack))):
        raise SystemExit(f"{stack}: pulumi up returned with Deployments not Ready: {', '.join(not_ready)}")
    again = workspace.run("up", "--yes", "--skip-preview", "--expect-no-changes", "-s", stack, timeout=1200).check()
    resources = workspace.state(stack)["checkpoint"]["latest"]["resources"]
    kubernetes = sum(1 for r in resources if r["type"].startswith("kubernetes:"))
    print(f"{stack}: preview {walls['pulumi']}, kvpool {walls['kvpool']}, up {up.seconds:.1f}, "
          f"again {again.seconds:.1f}, resources {len(resources)}", file=sys.stderr)
    return {
        "service": f"{size}P+{size}D", "pulumi preview": spread(walls["pulumi"]), "pulumi up": f"{up.seconds:.1f} s",
        "second up": f"{again.seconds:.1f} s", "kvpool preview": spread(walls["kvpool"]),
        "resources": f"{len(resources)} ({kubernetes})",
    }


def real_engine() -> dict[str, Path]:
    """The real engine's binaries, and Motor's checkout that `pulumi up` reads its scripts from; exits naming what is
    missing."""
    bins, missing = find_binaries(PULUMI_BINARIES + CLUSTER_BINARIES)
    if missing:
        raise SystemExit(f"{', '.join(missing)} not built: run `{BUILD_COMMAND}`")
    if not MOTOR_DEPLOYER.is_dir():
        raise SystemExit(f"no Motor checkout at {MOTOR_CHECKOUT} (set MOTOR_CHECKOUT): pulumi up needs Motor's scripts")
    return bins


@contextlib.contextmanager
def bench_cluster(bins: dict[str, Path]) -> Iterator[tuple[PulumiWorkspace, Cluster, Path]]:
    """A loopback cluster and a CLI workspace on it for one bench run, in a temporary folder; stopped and removed
    afterwards, SIGTERM included."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so that `finally` stops the cluster
    root = Path(tempfile.mkdtemp(prefix="motor-kvpool-bench-"))
    cluster = Cluster(bins, root / "cluster")
    try:
        cluster.start()
        workspace = PulumiWorkspace(bins, root / "pulumi", kubeconfig=cluster.kubeconfig)
        workspace.root.mkdir()
        workspace.setup()
        yield workspace, cluster, root
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs of each preview (up runs once per size)")
    parser.add_argument("--sizes", default="1,4,16", help="instances per role, comma-separated (at most 16)")
    args = parser.parse_args()
    bins = real_engine()
    pulumi_version = subprocess.run([str(bins["pulumi"]), "version"], capture_output=True, text=True, check=True).stdout.strip()
    built = ", ".join(dict.fromkeys(path.parent.parent.name for path in bins.values()))

    load_before, others_before = os.getloadavg(), others_running()
    started = datetime.datetime.now()
    with bench_cluster(bins) as (workspace, cluster, root):
        rows = [measure(int(size), args.reps, workspace, cluster, root / "kvpool-out") for size in args.sizes.split(",")]
    load_after, others_after = os.getloadavg(), others_running()

    columns = list(rows[0])
    lines = [
        "# pulumi preview and pulumi up with the real engine",
        "",
        (f"`venv/bin/python -m bench.pulumi_up --reps {args.reps} --sizes {args.sizes}`, {started:%Y-%m-%d %H:%M}. "
         f"Machine: {machine()}."),
        "",
        ("The service of bench/preview.md at each size (stacks/Pulumi.dev.yaml's MemCache P/D service with N prefill "
         "and N decode instances, imported with `python -m kvpool import` as stack nN), every size in its own "
         "namespace in one local cluster (etcd, kube-apiserver, controller manager, "
         "scheduler, kwok nodes; loopback only) and one file backend. Wall time of the whole command. Both previews: "
         f"median (min–max) of {args.reps} runs each, alternating, after one warm-up run of each, before the stack is "
         "up; `pulumi preview --policy-pack kvpool/policies` and `python -m kvpool preview` (which runs the same pack and "
         "the strict schema check). `pulumi up --yes --skip-preview` once (the provider waits until every Deployment "
         "is Ready; kwok readies the pods), then once more with nothing to change (`--expect-no-changes`). "
         "Resources: in the stack's state (Kubernetes objects among them)."),
        "",
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
        *("| " + " | ".join(row[column] for column in columns) + " |" for row in rows),
        "",
        (f"Ran `{pulumi_version}` of the Pulumi CLI, the project's own Python language host, and the binaries "
         f"`{BUILD_COMMAND}` built from their Go modules: {built} (the provider is release v4.25.0's code, installed "
         "under the plugin version the Python SDK asks for; see tools/real-engine/README.md)."),
        "",
        other_load(load_before, others_before, load_after, others_after),
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "pulumi.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
