"""Which pods a change restarts, said once: docs/restarts.md is written from this catalogue (python -m
tools.reference), and tests/test_restarts.py renders a change of every row and compares each workload's pod template
before and after (a workload rolls when its pod template changes).

The inputs a process reads once at start roll its pods through their `checksum/<input>` annotations
(kvpool/internal/checksums.py); which of Motor's files each role runs is ROLE_SCRIPTS of kvpool/internal/motor_config.py,
whose rows the page derives from it."""

from __future__ import annotations

# row -> (the change, what restarts)
RESTARTS: dict[str, tuple[str, str]] = {
    "nothing": (
        "identical re-run, decode 2→3, controller or coordinator config",
        "nothing (+1 Deployment; Motor's controller and coordinator re-read motor-config)",
    ),
    "engine-config": (
        "a side's `engine_config` (vLLM's arguments, fixed at start)", "that side's engines (`checksum/engine-config`)",
    ),
    "side-env": ("a side's env (`motor_engine_prefill_env`, `motor_engine_decode_env`)", "that side's engines (`checksum/motor-env`)"),
    "common-env": ("`motor_common_env`", "every Motor pod, not the store (`checksum/motor-env`)"),
    "image": ("`image_name`", "every pod"),
    "store-server": ("store eviction, lease", "the store only"),
    "store-ports": ("store ports", "the store and every engine (`checksum/kv-client`, `checksum/engine-config`)"),
    "local-service-mode": (
        "MemCache LocalService mode", "every engine, not the store (its node manager reads it: `checksum/engine-config`)",
    ),
    "secret-env": ("`secret_env`", "every Motor pod that loads it (`checksum/secret-env`, a sha256 of the values)"),
    "node-selectors": ("node selectors", "the pods they select"),
    "nothing-running": ("UCM storage size, Mooncake HA master count", "nothing running"),
}
