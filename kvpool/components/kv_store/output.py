"""The `kv_store` stack output as a consumer reads it: its name, and the list each refusal of one of its fields goes
to. kvpool/components/kv_store/contract.py reads the fields every backend has; each backend's RENDERER
(registry.Renderer) rebuilds its own part (engine env, client files, host paths, lease) into these problems."""

from __future__ import annotations

OUTPUT = "kv_store"


class OutputProblems(list):
    """Problems with the owner's output, each prefixed with the owner stack and the field."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def add(self, field: str, message: str) -> None:
        self.append(f"{self.target}'s {OUTPUT}.{field}: {message}")
