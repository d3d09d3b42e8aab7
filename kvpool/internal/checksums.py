"""Pod-template annotations `checksum/<input>`: a digest of each input a pod's processes read at start and cannot
reload, so that a change of that input rolls exactly the pods that read it (and nothing else does).

What reloads and what does not (Motor 8919e55): the controller and coordinator re-read user_config.json through
ConfigWatcher, and Motor's scripts re-sync it into every pod every 10 s, so their config sections and the instance
counts roll nothing. vLLM's arguments, the engine's env, the store client files and Motor's scripts are read once
at start: those are the inputs below.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

PREFIX = "checksum/"
# checksum/<name> -> what it digests, and the pods that carry it (docs/restarts.md; tests/test_restarts.py finds
# exactly these names on the example stacks' pods).
INPUTS = {
    "engine-config": "an engine's own side of user_config.json: its engine section (vLLM's arguments), the store keys "
                     "its node manager reads, the node manager's section and TLS; the engines",
    "motor-env": "what the role's set_*_env function exports (env.json's section after motor_common_env); every Motor "
                 "pod",
    "motor-scripts": "the Motor files the role runs (motor_config.ROLE_SCRIPTS); every Motor pod, when "
                     "motor_deployer_dir is set",
    "kv-client": "the store client files the engines mount (mooncake.json, mmc-local.conf); the engines of a pool",
    "secret-env": "a sha256 of secret_env's values; every Motor pod that loads the Secret",
    "kv-conductor-config": "the conductor's configuration Motor's mooncake_config.py writes from the section; the KV "
                           "conductor",
    "store-config": "the files a store server reads from its ConfigMap at start; the store",
}
# kv_cache_store_config keys Motor's node manager reads at start (motor/config/node_manager.py,
# _parse_kv_cache_store_config); the engines' client files are a checksum of their own, and the rest (eviction,
# lease) belongs to the store's server alone.
NODE_MANAGER_STORE_KEYS = ("backend", "service", "local_service_mode", "dram_size", "port", "config_store_port",
                           "local_config_path")


def digest(value: Any) -> str:
    """sha256 of the value's canonical JSON (sorted keys), as a hex string."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def engine_config_inputs(user_config: Mapping[str, Any], side: str) -> dict[str, Any]:
    """What an engine of `side` reads from user_config.json at start (`user_config`: the effective one,
    ServiceSettings.user_config()): its side's engine section (vLLM's arguments), the store keys of its node manager,
    the node manager's section and TLS. Not the other side's section, the instance counts or the control plane's
    sections."""
    deploy = user_config.get("motor_deploy_config", {})
    store = user_config.get("kv_cache_store_config") or {}
    return {
        "engine": user_config.get(f"motor_engine_{side}_config"),
        "kv_cache_store_config": {key: store[key] for key in NODE_MANAGER_STORE_KEYS if key in store},
        "motor_nodemanger_config": user_config.get("motor_nodemanger_config"),
        "tls_config": deploy.get("tls_config"),
    }


def annotations(inputs: Mapping[str, Any]) -> dict[str, str]:
    """`checksum/<name>` for each named input that exists (None: the pod does not read it)."""
    return {f"{PREFIX}{name}": digest(value) for name, value in sorted(inputs.items()) if value is not None}
