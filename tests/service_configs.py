"""Plain service configurations the settings tests start from: one change per test on top of these."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config

IMAGE = "registry.local/mindie-motor-vllm:3.0.0"


def engine(role: str, connectors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """An engine section: a MultiConnector of `connectors`, or without them the P/D transfer connector alone (Motor's
    engine server starts no prefill or decode engine without a kv_transfer_config)."""
    config: dict[str, Any] = {"model": "/mnt/weight/qwen3_8B", "served_model_name": "qwen3-8B", "max-model-len": 2048}
    if connectors is None:
        config["kv_transfer_config"] = {"kv_connector": "MooncakeConnectorV1", "kv_role": role, "kv_port": "30001"}
    else:
        config["kv_transfer_config"] = {
            "kv_connector": "MultiConnector",
            "kv_role": role,
            "kv_connector_extra_config": {"connectors": connectors},
        }
    return {"engine_type": "vllm", "engine_config": config}


def pool_connectors(role: str, backend: str | None, kv_port: str) -> list[dict[str, Any]]:
    store_extra = {} if backend is None else {"backend": backend}
    return [
        {"kv_connector": "MooncakeConnectorV1", "kv_role": role, "kv_port": kv_port},
        {"kv_connector": "AscendStoreConnector", "kv_role": role, "kv_connector_extra_config": store_extra},
    ]


def plain_pd() -> dict[str, Any]:
    """Smallest valid service: 1P1D on A2, no KV pool."""
    return {
        "motor_deploy_config": {
            "p_pod_npu_num": 2,
            "d_pod_npu_num": 2,
            "image_name": IMAGE,
            "hardware_type": "800I_A2",
        },
        "motor_engine_prefill_config": engine("kv_producer"),
        "motor_engine_decode_config": engine("kv_consumer"),
    }


def memcache_pool(hardware_type: str = "800I_A2") -> dict[str, Any]:
    """Seed 000's memcache pair: MooncakeConnectorV1 kv_port 30001/30002 + AscendStoreConnector."""
    service = plain_pd()
    service["motor_deploy_config"]["hardware_type"] = hardware_type
    service["motor_engine_prefill_config"] = engine("kv_producer", pool_connectors("kv_producer", "memcache", "30001"))
    service["motor_engine_decode_config"] = engine("kv_consumer", pool_connectors("kv_consumer", "memcache", "30002"))
    service["kv_cache_store_config"] = {"backend": "memcache"}
    return service


def mooncake_pool() -> dict[str, Any]:
    service = memcache_pool()
    for side, role in (("prefill", "kv_producer"), ("decode", "kv_consumer")):
        connectors = pool_connectors(role, "mooncake", "30001")
        service[f"motor_engine_{side}_config"] = engine(role, connectors)
    service["kv_cache_store_config"] = {
        "backend": "mooncake",
        "eviction_high_watermark_ratio": 0.7,
        "eviction_ratio": 0.2,
    }
    timeouts = {"ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000"}
    service["env"] = {"motor_engine_prefill_env": dict(timeouts), "motor_engine_decode_env": dict(timeouts)}
    return service


def as_motor_files(service: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The same service as a deploy.py user_config.json + env.json pair."""
    user = copy.deepcopy({key: value for key, value in service.items() if key not in ("env", "create_namespace")})
    user["version"] = "v2.0"
    env = {"version": "2.0.0", **copy.deepcopy(service.get("env", {}))}
    return user, env


# Each Motor role's logging_config.host_log_dir moved off the default, as deploy.py users set them.
HOST_LOG_DIRS = {
    "motor_controller_config": "/data/logs/controller",
    "motor_coordinator_config": "/data/logs/coordinator",
    "motor_nodemanger_config": "/data/logs/engines",  # deploy.py: every engine pod takes the node manager's
}


def with_host_log_dirs(service: dict[str, Any], folders: dict[str, Any] = HOST_LOG_DIRS) -> dict[str, Any]:
    """The service with these sections' logging_config.host_log_dir set (None: an explicit null), each folder
    declared as a log root (motor_deploy_config.host_path_roots.logs), as a user moving them declares them."""
    service = copy.deepcopy(service)
    for section, folder in folders.items():
        service.setdefault(section, {}).setdefault("logging_config", {})["host_log_dir"] = folder
    declared = [folder for folder in folders.values() if folder is not None]
    if declared:
        service["motor_deploy_config"].setdefault("host_path_roots", {}).setdefault("logs", []).extend(declared)
    return service


def problems_of(service: dict[str, Any], stack: str = "svc") -> list[str]:
    """The problems the settings loader refuses `service` (a stack's config values) with; fails if it loads."""
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, stack)
    return caught.value.problems
