"""rollout: per role, how many engine instances an update stops at once. The waves it makes, and how the program
orders them, are kvpool/internal/rollout.py's."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from kvpool.internal.rollout import DEFAULT_MAX_UNAVAILABLE, max_unavailable
from kvpool.settings.types import Closed

_PERCENT = re.compile(r"^([1-9][0-9]?|100)%$")
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
