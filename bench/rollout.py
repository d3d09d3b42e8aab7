"""An image change on 4P+4D with the real engine: waves (the default rollout, 50%) against all at once (100%).

    venv/bin/python -m bench.rollout [--instances 4]

One local cluster and file backend (the binaries of `bash tools/real-engine/build.sh`, started by
tests/e2e/realengine.py). Engine pods of the two stacks' namespaces become Ready ENGINE_READY_DELAY_S after they
start (tests/e2e/kwok_stages.py), standing in for a model load. For each stack in turn, `rollout` (the default) and
`rollout-at-once` (rollout.<role>.max_unavailable_instances 100%, today's roll), timed wall, start to exit:

  pulumi up                     the first deploy (no instance runs yet, so nothing is chained)
  pulumi up after an image change, sampling the Ready instances of each role every 0.25 s
  pulumi destroy

`pulumi up` needs Motor's scripts (MOTOR_CHECKOUT, default ../shared/reference/motor-8919e55). Writes
bench/results/rollout.md. The cluster is stopped on exit.
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
from pathlib import Path

from bench.preview_vs_deploy import RESULTS, machine, other_load, others_running
from bench.pulumi_up import bench_cluster, real_engine
from kvpool.internal.rollout import DEFAULT_MAX_UNAVAILABLE, max_unavailable
from tests.e2e.cluster_stacks import deployments_not_ready, up_stack
from tests.e2e.kwok_stages import ENGINE_READY_DELAY_S, ENGINE_SIDES
from tests.e2e.realengine import (
    BUILD_COMMAND,
    Cluster,
    PulumiWorkspace,
)
from tests.e2e.rollout_watch import (
    EVENT_LOG_ENV,
    NEW_IMAGE,
    ReadySampler,
    engine_steps,
    engine_waits,
    timeline,
    write_stack,
)
from tests.e2e.views import offline_in_copy_to

STACKS = {"rollout": None, "rollout-at-once": "100%"}  # stack (= namespace) -> max_unavailable_instances


def measure(stack: str, setting: str | None, instances: int, workspace: PulumiWorkspace, cluster: Cluster,
            out: Path) -> dict[str, object]:
    write_stack(workspace, stack, instances, setting)
    workspace.stack_init(stack)
    if offline_in_copy_to(workspace, stack, out).returncode != 0:
        raise SystemExit(f"{stack}: the offline preview failed")
    first = up_stack(workspace, cluster, stack, out)
    if not_ready := deployments_not_ready(cluster, stack):
        raise SystemExit(f"{stack}: pulumi up returned with Deployments not Ready: {', '.join(not_ready)}")
    if chained := {name: waits for name, waits in engine_waits(workspace, stack).items() if waits}:
        raise SystemExit(f"{stack}: a first deploy chained engines: {chained}")
    workspace.run("config", "set", "--path", "motor_deploy_config.image_name", NEW_IMAGE, "-s", stack).check()
    sampler = ReadySampler(cluster, stack)
    events = out / f"{stack}-roll-events.jsonl"
    sampler.start()
    try:
        roll = workspace.run("up", "--yes", "--skip-preview", "-s", stack, "--event-log", str(events), timeout=1800,
                             extra_env=EVENT_LOG_ENV).check()
    finally:
        samples = sampler.stop()
    destroy = workspace.run("destroy", "--yes", "-s", stack, timeout=1800).check()
    result = {
        "first": first.seconds, "roll": roll.seconds, "destroy": destroy.seconds,
        "fewest": {side: sampler.fewest_ready(side) for side in ENGINE_SIDES}, "timeline": timeline(samples, instances),
        "steps": engine_steps(events, sampler.started_at),
    }
    print(f"{stack}: {result['first']:.1f} {result['roll']:.1f} {result['destroy']:.1f} {result['fewest']}",
          file=sys.stderr)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=4, help="instances of each role (default 4)")
    args = parser.parse_args()
    bins = real_engine()
    version = subprocess.run([str(bins["pulumi"]), "version"], capture_output=True, text=True, check=True).stdout.strip()
    load_before, others_before = os.getloadavg(), others_running()
    started = datetime.datetime.now()
    with bench_cluster(bins) as (workspace, cluster, root):
        results = {stack: measure(stack, setting, args.instances, workspace, cluster, root / "kvpool-out")
                   for stack, setting in STACKS.items()}
    load_after, others_after = os.getloadavg(), others_running()

    n = args.instances
    waves, at_once = results["rollout"], results["rollout-at-once"]
    rolls = -(-n // max_unavailable(DEFAULT_MAX_UNAVAILABLE, n))  # waves of the default
    lines = [
        "# Rolls that keep the service up: an image change in waves against all at once",
        "",
        f"`venv/bin/python -m bench.rollout --instances {n}`, {started:%Y-%m-%d %H:%M}. Machine: {machine()}.",
        "",
        (f"stacks/Pulumi.dev.yaml's service with {n} prefill and {n} decode instances, in one local cluster (etcd, "
         "kube-apiserver, controller manager, scheduler, kwok nodes) and one file backend. Engine pods become Ready "
         f"{ENGINE_READY_DELAY_S} s after they start (a kwok stage, tests/e2e/kwok_stages.py), as a model load "
         "delays them; every other pod at once. `rollout` keeps the default rollout (50%: waves of "
         f"{max_unavailable(DEFAULT_MAX_UNAVAILABLE, n)}); `rollout-at-once` sets rollout.<role>.max_unavailable_instances 100%, the roll every "
         "version before issue 23 did. Wall time of each command, once each."),
        "",
        "| | default (50%) | all at once (100%) |",
        "|---|---|---|",
        f"| first `pulumi up` | {waves['first']:.1f} s | {at_once['first']:.1f} s |",
        f"| image change: `pulumi up` | {waves['roll']:.1f} s | {at_once['roll']:.1f} s |",
        *(f"| image change: fewest Ready {side} instances | {waves['fewest'][side]} of {n} | "
          f"{at_once['fewest'][side]} of {n} |" for side in ENGINE_SIDES),
        f"| `pulumi destroy` | {waves['destroy']:.1f} s | {at_once['destroy']:.1f} s |",
        "",
        ("What the order costs. The roll: each wave waits for its engines to be Ready, so "
         f"{rolls} waves take {waves['roll']:.1f} s against {at_once['roll']:.1f} s for one (both await every engine's "
         "new pods; about one engine start-up per wave). A first deploy: nothing is chained, since no instance ran "
         "before (the state holds no dependency between engines after it), so both run the same parallel steps and "
         f"differ only by noise ({waves['first']:.1f} s and {at_once['first']:.1f} s). `pulumi destroy` deletes the "
         "last wave first; the provider deletes in the foreground, so on a real cluster each wave also waits for its "
         "engines to terminate (preStop, at most the pods' 30 s grace period), while kwok removes pods at once: here "
         f"{waves['destroy']:.1f} s against {at_once['destroy']:.1f} s."),
        "",
        "## The engine's update steps",
        "",
        ("Each engine Deployment's update step in the image change, from `pulumi up --event-log` (seconds since "
         "`pulumi up` started; the log's timestamps are whole seconds). A step ends when the Kubernetes provider "
         "has seen all the instance's new pods available (the `pulumi.com/waitFor` annotation, README \"How a "
         "change rolls\"); with the default, the second wave's steps start only then."),
        "",
        "| instance | default: starts | default: ends | all at once: starts | all at once: ends |",
        "|---|---|---|---|---|",
        *(f"| {name} | {waves['steps'][name][0]:.0f} | {waves['steps'][name][1]:.0f} | "
          f"{at_once['steps'][name][0]:.0f} | {at_once['steps'][name][1]:.0f} |" for name in waves["steps"]),
        "",
        "## Timeline of the image change, default rollout",
        "",
        "Seconds since `pulumi up` started; Ready instances of each role; the instances not Ready.",
        "",
        "| s | prefill | decode | not Ready |",
        "|---|---|---|---|",
        *waves["timeline"],
        "",
        "## Timeline of the image change, all at once",
        "",
        "| s | prefill | decode | not Ready |",
        "|---|---|---|---|",
        *at_once["timeline"],
        "",
        f"Ran `{version}` of the Pulumi CLI and the binaries `{BUILD_COMMAND}` built (tools/real-engine/README.md). "
        + other_load(load_before, others_before, load_after, others_after),
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "rollout.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
