"""The kwok stages of the test cluster: kwok's own "fast" stages, but engine pods of ROLLOUT_NAMESPACES become
Ready only ENGINE_READY_DELAY_S after they are scheduled, as a model load delays them (issue 23; used by
tests/e2e/rollout_watch.py), and every pod of LATE_NAMESPACES only LATE_READY_DELAY_S after, so that the create of any
of their Deployments stays in flight that long (the provider awaits readiness) and a test can kill the CLI inside it
(tests/e2e/test_interrupted_updates.py). Every other pod is readied at once. The four pod-ready stages are derived
from kwok's own when the cluster starts, so exactly one of them matches any pod.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

ROLLOUT_NAMESPACES = ("rollout", "rollout-at-once")
ENGINE_READY_DELAY_S = 20
LATE_NAMESPACES = ("cut-store",)
LATE_READY_DELAY_S = 15
ENGINE_SIDES = ("prefill", "decode")
COMPONENT_KEY = '.metadata.labels["app.kubernetes.io/component"]'


def stages(fast: Path, out: Path) -> Path:
    """kwok's fast stages with its pod-ready stage split in four: unchanged outside ROLLOUT_NAMESPACES and
    LATE_NAMESPACES, delayed for engine pods of the former, unchanged for their other pods, delayed for every pod of
    the latter. Written to `out`."""
    documents = [doc for doc in yaml.safe_load_all(fast.read_text()) if doc]
    ready = next(doc for doc in documents if doc["kind"] == "Stage" and doc["metadata"]["name"] == "pod-ready")
    rollout = list(ROLLOUT_NAMESPACES)
    late = list(LATE_NAMESPACES)
    sides = list(ENGINE_SIDES)

    def variant(name: str, expressions: list[dict[str, Any]], delay_ms: int = 0) -> dict[str, Any]:
        stage = copy.deepcopy(ready)
        stage["metadata"]["name"] = name
        stage["spec"]["selector"]["matchExpressions"] += expressions
        if delay_ms:
            stage["spec"]["delay"] = {"durationMilliseconds": delay_ms}
        return stage

    split = [
        variant("pod-ready", [{"key": ".metadata.namespace", "operator": "NotIn", "values": rollout + late}]),
        variant("pod-ready-delayed-engine", [
            {"key": ".metadata.namespace", "operator": "In", "values": rollout},
            {"key": COMPONENT_KEY, "operator": "In", "values": sides},
        ], ENGINE_READY_DELAY_S * 1000),
        variant("pod-ready-other", [
            {"key": ".metadata.namespace", "operator": "In", "values": rollout},
            {"key": COMPONENT_KEY, "operator": "NotIn", "values": sides},
        ]),
        variant("pod-ready-late", [{"key": ".metadata.namespace", "operator": "In", "values": late}],
                LATE_READY_DELAY_S * 1000),
    ]
    out.write_text(yaml.safe_dump_all([doc for doc in documents if doc is not ready] + split, sort_keys=False))
    return out
