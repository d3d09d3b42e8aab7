"""How a change rolls over a role's engine instances: the waves the `rollout` setting makes (the setting itself,
RolloutConfig, is kvpool/settings/rollout.py's).

Every engine instance is its own Deployment with strategy Recreate (its NPUs are exclusive), so updating one stops
it until its new pod is Ready. Updating all of a role's Deployments at once stops the whole role. Instead, the
instances that already run are split into waves of at most `max_unavailable_instances`, and each Deployment of
wave k depends on every Deployment of wave k-1: on an update the Pulumi engine starts wave k only when the
Kubernetes provider has seen wave k-1 Ready. Instances new in this run depend on nothing (nothing of them serves
yet), so a first deploy runs in parallel as before. Which instances ran before the program reads from this very
stack's last `engines` output (a StackReference to itself).

"Seen Ready" needs the provider's await to hold until the new pods are Ready, and its own Deployment await does not
for Recreate (measured, provider 4.25.0: README, "How a change rolls"): the Deployment controller creates the new
ReplicaSet only once the old pods are gone, and until then the Deployment still carries the old revision, Available
and NewReplicaSetAvailable, which the provider takes for a finished rollout; the next wave then started about 1 s
after the update. So every engine Deployment tells the provider what Ready is (`pulumi.com/waitFor`,
READY_ANNOTATION): its pods all updated and all available, read only from a status that has observed the update's
generation. Only the new ReplicaSet counts as updated, and it exists only after every old pod is gone.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

ENGINES_OUTPUT = "engines"  # kvpool/program/__init__.py exports {side: [instance names]}
ROLLOUT_OUTPUT = "rollout"  # {side: {"max_unavailable_instances": n}}, the setting resolved for the instance count
DEFAULT_MAX_UNAVAILABLE = "50%"
READY_ANNOTATION = "pulumi.com/waitFor"  # the Kubernetes provider's own await override


def max_unavailable(setting: int | str, instances: int) -> int:
    """The number of a role's `instances` one wave may stop: at least 1, at most all of them."""
    if isinstance(setting, str):
        count = math.floor(instances * int(setting.removesuffix("%")) / 100)
    else:
        count = setting
    return max(1, min(count, instances))


def waves(running: Sequence[str], size: int) -> list[list[str]]:
    """The running instances (in instance order) in waves of `size`: wave k updates after wave k-1 is Ready."""
    return [list(running[start:start + size]) for start in range(0, len(running), size)]


def previous_instances(previous_outputs: Mapping[str, Any] | None, side: str) -> set[str]:
    """The instance names of `side` in a stack's last `engines` output (none before its first deploy)."""
    engines = (previous_outputs or {}).get(ENGINES_OUTPUT)
    names = engines.get(side) if isinstance(engines, Mapping) else None
    return {name for name in names if isinstance(name, str)} if isinstance(names, list) else set()


def ready_when(replicas: int) -> dict[str, str]:
    """The engine Deployment's annotation by which the provider's create and update end only when all `replicas`
    pods of the Deployment's current template are available (module docstring)."""
    return {READY_ANNOTATION: json.dumps([
        f"jsonpath={{.status.updatedReplicas}}={replicas}",
        f"jsonpath={{.status.availableReplicas}}={replicas}",
    ])}
