"""How a change rolls over a role's engine instances: the `rollout` setting and the waves it makes.

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
import re
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import Field, field_validator

from kvpool.settings.types import Closed

ENGINES_OUTPUT = "engines"  # kvpool/program/__init__.py exports {side: [instance names]}
ROLLOUT_OUTPUT = "rollout"  # {side: {"max_unavailable_instances": n}}, the setting resolved for the instance count
DEFAULT_MAX_UNAVAILABLE = "50%"
_PERCENT = re.compile(r"^([1-9][0-9]?|100)%$")
READY_ANNOTATION = "pulumi.com/waitFor"  # the Kubernetes provider's own await override
SERVICE_SET_MESSAGE = (
    "deploy_mode infer_service_set hands every engine instance to the InferServiceSet operator, which rolls them by "
    "its own rules; motor-kvpool cannot order them. Remove rollout, or use deploy_mode multi_deployment"
)


class RoleRollout(Closed):
    max_unavailable_instances: int | str = Field(
        DEFAULT_MAX_UNAVAILABLE,
        description="How many of the role's running instances an update may stop at once: a whole number (1 or "
        "more), or a percentage of the role's instance count rounded down, at least 1 (Kubernetes' rule for "
        "maxUnavailable). The default 50% rolls an even count in 2 waves keeping half serving (4 instances: 2 and "
        "2), an odd count in 3 (3 instances: 1, 1, 1, keeping 2); write 2 for 3 instances to roll in 2 waves "
        "keeping 1. 100% restores the all-at-once roll (the fastest, the role stops). A single instance always "
        "stops. Each wave takes an engine's start-up time (minutes for a real model load).",
    )

    @field_validator("max_unavailable_instances", mode="before")
    @classmethod
    def _count_or_percentage(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        if isinstance(value, str) and _PERCENT.fullmatch(value):
            return value
        raise ValueError(
            f"{value!r} is not allowed: an instance is updated by stopping it (strategy Recreate: its NPUs are "
            "exclusive), so at least 1 is unavailable; write a whole number from 1, or a percentage from 1% to "
            "100% such as \"50%\""
        )


class RolloutConfig(Closed):
    """Per role, how many engine instances an update stops at once (multi_deployment only)."""

    prefill: RoleRollout = Field(default_factory=RoleRollout)
    decode: RoleRollout = Field(default_factory=RoleRollout)

    def wave_size(self, side: Literal["prefill", "decode"] | str, instances: int) -> int:
        """How many of the side's `instances` one wave stops."""
        return max_unavailable((self.prefill if side == "prefill" else self.decode).max_unavailable_instances, instances)


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
