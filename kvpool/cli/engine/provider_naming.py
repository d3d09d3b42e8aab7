"""The Kubernetes provider's naming of an object, as the offline tooling emulates it: one rule for the state the
mock engine returns (kvpool/cli/engine/mock_engine.py) and for the manifests a preview writes (kvpool/cli/views/manifests.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def named_metadata(metadata: Mapping[str, Any] | None, logical_name: str) -> dict[str, Any]:
    """`metadata` with a name: its own, else the resource's logical name. Without metadata.name the provider
    auto-names the object (the logical name and a random suffix); the logical name alone keeps the values that
    depend on the name known and previews deterministic."""
    named = dict(metadata or {})
    named.setdefault("name", logical_name)
    return named
