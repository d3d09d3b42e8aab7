"""docs/restarts.md: which pods a change restarts, from the restart catalogue (kvpool/internal/restarts.py), the checksum
inputs (kvpool/internal/checksums.py) and the Motor files each role runs (kvpool/internal/motor_config.py)."""

from __future__ import annotations

from kvpool.internal.checksums import INPUTS, PREFIX
from kvpool.internal.motor_config import (
    ENGINE_BACKEND_SCRIPTS,
    MOTOR_FILES,
    ROLE_SCRIPTS,
)
from kvpool.internal.restarts import RESTARTS
from tools.reference.markdown import page, table

ROLE_WORDS = {"controller": "the controller", "coordinator": "the coordinator", "prefill": "the prefill engines",
              "decode": "the decode engines", "kv_conductor": "the KV conductor"}


def _runners(file: str) -> str:
    """Who runs or reads one of Motor's files: the roles of ROLE_SCRIPTS, and the engines of a backend whose
    engine.sh runs it."""
    roles = [ROLE_WORDS[role] for role, files in ROLE_SCRIPTS.items() if file in files]
    if {"the prefill engines", "the decode engines"} <= set(roles):
        roles = [role for role in roles if role not in ("the prefill engines", "the decode engines")]
        roles.insert(min(2, len(roles)), "every engine")
    roles += [f"the engines of a {backend} pool" for backend, files in ENGINE_BACKEND_SCRIPTS.items() if file in files]
    return ", ".join(roles)


def _motor_file_rows() -> list[tuple[str, str]]:
    """One row per set of roles: the files they run, in motor-config's order."""
    grouped: dict[str, list[str]] = {}
    for key, _ in MOTOR_FILES:
        grouped.setdefault(_runners(key), []).append(f"`{key}`")
    return [(f"Motor's {', '.join(files)} (`motor_deployer_dir`)",
             f"{runners} (`{PREFIX}motor-scripts`)" if runners else "nothing (no pod of ours runs or reads them)")
            for runners, files in grouped.items()]


def restarts_page() -> str:
    rows = [row for row in RESTARTS.values()] + _motor_file_rows()
    inputs = [(f"`{PREFIX}{name}`", text) for name, text in INPUTS.items()]
    body = ("Names and labels never change between runs, and every pod template carries `checksum/<input>` "
            "annotations, one per input its processes read at start and cannot reload, so a change restarts exactly "
            "the pods that read it.\n\n" + table(("change", "restarts"), rows)
            + "\n" + table(("annotation", "digest of; carried by"), inputs))
    return page("What a change restarts",
                "kvpool/internal/restarts.py, kvpool/internal/checksums.py and kvpool/internal/motor_config.py",
                "venv/bin/python -m tools.reference", body)
