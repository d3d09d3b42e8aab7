"""Names: no two Kubernetes objects of one kind share a namespace and name."""

from __future__ import annotations

from typing import Sequence


def check_duplicate_names(objects: Sequence[tuple[str, str, str]]) -> list[tuple[int, str]]:
    """(index, message) for every object whose (type, namespace, name) an earlier one already has: the second
    declaration would overwrite the first in the cluster."""
    seen: set[tuple[str, str, str]] = set()
    found = []
    for index, key in enumerate(objects):
        if key in seen:
            found.append((index, f"{key[0]} {key[1]}/{key[2]} is declared twice; the second would overwrite the first "
                                 f"in the cluster. Give one of them another name."))
        seen.add(key)
    return found
