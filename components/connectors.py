"""kv_transfer_config as each engine instance runs it, built from the settings and the store endpoint.

What Motor's engine_server does at start (motor/engine_server/core/vllm/vllm_config.py, motor-deployer.md §1.8),
done at deploy time so that it is visible in the preview and in the diff: kv_role by side, engine_id and the
store connector's lookup_rpc_port from the instance id, the P/D parallel sizes on connectors[0], and the
AscendStoreConnector backend from kv_cache_store_config when omitted.
"""

from __future__ import annotations

import copy
from typing import Any

from components.engine_settings import EngineSection
from components.settings import ServiceSettings
from policies import rules

STORE_CONNECTORS = {rules.STORE_CONNECTOR: "lookup_rpc_port", "MooncakeConnectorStoreV1": "mooncake_rpc_port"}


def instance_id(settings: ServiceSettings, side: str, index: int) -> int:
    """Motor numbers instances across roles: prefill 0..p-1, then decode. Adding a decode instance therefore
    changes no existing instance."""
    return index if side == "prefill" else settings.motor_deploy_config.p_instances_num + index


def parallel_sizes(section: EngineSection) -> dict[str, int]:
    config = section.engine_config
    return {
        "dp_size": config.data_parallel_size or 1,
        "tp_size": config.tensor_parallel_size or 1,
        "pp_size": config.pipeline_parallel_size or 1,
    }


def side_kv_transfer_config(settings: ServiceSettings, side: str) -> dict[str, Any] | None:
    """The side's kv_transfer_config with everything that does not depend on the instance filled in."""
    section: EngineSection = getattr(settings, rules.engine_section(side))
    if section.engine_config.kv_transfer_config is None:
        return None
    config = section.engine_config.kv_transfer_config.model_dump(mode="json", exclude_none=True)
    role = rules.ROLE_BY_SIDE[side]
    config["kv_role"] = role
    store = settings.kv_cache_store_config
    entries = rules.connectors_of(config)
    for position, (_, connector) in enumerate(entries):
        name = connector["kv_connector"]
        connector["kv_role"] = "kv_both" if name == rules.UCM_CONNECTOR else role
        extra = connector.setdefault("kv_connector_extra_config", {})
        if position == 0 and name not in STORE_CONNECTORS and name != rules.UCM_CONNECTOR:
            extra["prefill"] = parallel_sizes(settings.motor_engine_prefill_config)
            extra["decode"] = parallel_sizes(settings.motor_engine_decode_config)
        if name == rules.STORE_CONNECTOR and store is not None:
            extra.setdefault("backend", store.backend)
    return config


def instance_kv_transfer_config(settings: ServiceSettings, side: str, index: int) -> dict[str, Any] | None:
    config = copy.deepcopy(side_kv_transfer_config(settings, side))
    if config is None:
        return None
    instance = str(instance_id(settings, side, index))
    config["engine_id"] = instance
    for _, connector in rules.connectors_of(config):
        port_key = STORE_CONNECTORS.get(connector["kv_connector"])
        if port_key:
            # An IPC socket name component, not a TCP port (vllm-ascend get_zmq_rpc_path_lookup).
            connector["kv_connector_extra_config"][port_key] = instance
    return config
