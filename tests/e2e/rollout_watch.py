"""Engine rolls on the test cluster (issue 23): a 4P+4D stack whose engines take ENGINE_READY_DELAY_S to become
Ready (tests/e2e/kwok_stages.py, in ROLLOUT_NAMESPACES), and a sampler of the Ready instances of each role while
`pulumi up` runs (shared by tests/e2e/test_rollout.py and bench/rollout.py)."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from tests.e2e.kwok_stages import ENGINE_SIDES
from tests.e2e.realengine import Cluster, PulumiWorkspace

NEW_IMAGE = "mindie-motor-vllm:3.0.0b3-800I-A2-py3.11-Ubuntu24.04-lts-x86_64"


def write_stack(workspace: PulumiWorkspace, stack: str, instances: int, max_unavailable: int | str | None) -> None:
    """stacks/Pulumi.<stack>.yaml in the workspace: the dev service with `instances` of each role (namespace = the
    stack), and rollout.<role>.max_unavailable_instances when given."""
    config = yaml.safe_load((workspace.project / "stacks" / "Pulumi.dev.yaml").read_text())
    deploy = config["config"]["motor-kvpool:motor_deploy_config"]
    deploy.update(p_instances_num=instances, d_instances_num=instances)
    if max_unavailable is not None:
        config["config"]["motor-kvpool:rollout"] = {
            side: {"max_unavailable_instances": max_unavailable} for side in ENGINE_SIDES
        }
    (workspace.project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config, sort_keys=False))


def _name(urn: str) -> str:
    """An engine Deployment's Kubernetes name from its URN: its EnginePool (named after its side) names it
    `<side>-<name>` (kvpool/internal/child_names.py)."""
    name = urn.rsplit("::", 1)[1]
    for side in ENGINE_SIDES:
        name = name.removeprefix(f"{side}-")
    return name


def engine_waits(workspace: PulumiWorkspace, stack: str) -> dict[str, list[str]]:
    """Each engine Deployment in the stack's state -> the engine Deployments it depends on."""
    resources = workspace.state(stack)["checkpoint"]["latest"]["resources"]
    return {
        _name(r["urn"]): sorted(_name(d) for d in r.get("dependencies", []) if _name(d).startswith("vllm-"))
        for r in resources if r["type"] == "kubernetes:apps/v1:Deployment" and _name(r["urn"]).startswith("vllm-")
    }


def ready_instances(cluster: Cluster, namespace: str) -> dict[str, set[str]]:
    """Per side, the engine instances (the pods' `app` label) whose pods are all Ready and none terminating."""
    pods = cluster.get(f"/api/v1/namespaces/{namespace}/pods")["items"]
    by_instance: dict[tuple[str, str], list[bool]] = {}
    for pod in pods:
        labels = pod["metadata"].get("labels", {})
        side = labels.get("app.kubernetes.io/component")
        if side not in ENGINE_SIDES:
            continue
        ready = pod["metadata"].get("deletionTimestamp") is None and any(
            c["type"] == "Ready" and c["status"] == "True" for c in pod.get("status", {}).get("conditions", [])
        )
        by_instance.setdefault((side, labels["app"]), []).append(ready)
    found: dict[str, set[str]] = {side: set() for side in ENGINE_SIDES}
    for (side, instance), readiness in by_instance.items():
        if all(readiness):
            found[side].add(instance)
    return found


@dataclass
class Sample:
    seconds: float  # since the sampler started
    ready: dict[str, set[str]]


@dataclass
class ReadySampler:
    """Samples ready_instances every `interval` seconds in a thread, from start() to stop()."""

    cluster: Cluster
    namespace: str
    interval: float = 0.25
    samples: list[Sample] = field(default_factory=list)
    started_at: float = 0.0  # wall clock (time.time()) of start(), to place the CLI's event log on the samples
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        started = time.monotonic()
        self.started_at = time.time()

        def loop() -> None:
            while not self._stop.is_set():
                self.samples.append(Sample(time.monotonic() - started, ready_instances(self.cluster, self.namespace)))
                self._stop.wait(self.interval)

        self._thread = threading.Thread(target=loop, daemon=True)
        self._thread.start()

    def stop(self) -> list[Sample]:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        return self.samples

    def fewest_ready(self, side: str) -> int:
        return min(len(sample.ready[side]) for sample in self.samples)

    def down_intervals(self, instance: str, side: str) -> list[tuple[float, float]]:
        """The (first, last) sample times of each stretch in which `instance` was not Ready."""
        stretches: list[tuple[float, float]] = []
        start = last = None
        for sample in self.samples:
            if instance not in sample.ready[side]:
                start = sample.seconds if start is None else start
                last = sample.seconds
            elif start is not None:
                stretches.append((start, last))
                start = None
        if start is not None:
            stretches.append((start, last))
        return stretches


def timeline(samples: list[Sample], instances: int, step: float = 2.0) -> list[str]:
    """Markdown table rows, one per `step` seconds: the Ready count of each side and which instances are down."""
    rows, next_at = [], 0.0
    for sample in samples:
        if sample.seconds + 1e-9 < next_at and sample is not samples[-1]:
            continue
        down = sorted(
            f"{name}" for side in ENGINE_SIDES for name in
            {f"vllm-{side[0]}{i}" for i in range(instances)} - sample.ready[side]
        )
        counts = " | ".join(f"{len(sample.ready[side])}/{instances}" for side in ENGINE_SIDES)
        rows.append(f"| {sample.seconds:5.1f} | {counts} | {', '.join(down) or '—'} |")
        next_at = sample.seconds + step
    return rows


# The CLI writes its engine events to --event-log FILE only when its debug commands are on.
EVENT_LOG_ENV = {"PULUMI_DEBUG_COMMANDS": "true"}


def engine_steps(event_log: Path, started_at: float) -> dict[str, tuple[float, float]]:
    """Each engine Deployment's update step in a `pulumi up --event-log` file: (start, end) in seconds since
    `started_at` (wall clock). The log's timestamps are whole seconds, so each time is known to within 1 s."""
    starts: dict[str, float] = {}
    steps: dict[str, tuple[float, float]] = {}
    for line in event_log.read_text().splitlines():
        event = json.loads(line)
        for kind in ("resourcePreEvent", "resOutputsEvent"):
            metadata = event.get(kind, {}).get("metadata", {})
            name = _name(metadata.get("urn", "::"))
            if metadata.get("type") != "kubernetes:apps/v1:Deployment" or not name.startswith("vllm-"):
                continue
            at = event["timestamp"] - started_at
            if kind == "resourcePreEvent":
                starts[name] = at
            else:
                steps[name] = (starts[name], at)
    return dict(sorted(steps.items()))
