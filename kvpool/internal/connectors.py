"""kv_transfer_config: what user_config.json carries for the store connectors, and what each engine then runs.

Motor's engine server derives the kv_transfer_config it hands vLLM from user_config.json at start
(motor/engine_server/core/vllm/vllm_config.py VLLMConfig._process_kv_transfer_config): kv_role by role on the top
level, on connectors[0] and on connectors[1] (kv_both for a UCM store), engine_id from the instance id, the P/D
parallel sizes in connectors[0]'s (or a single connector's) kv_connector_extra_config, and the store connector's
lookup_rpc_port (AscendStoreConnector) or mooncake_rpc_port (MooncakeConnectorStoreV1) from the instance id, written
into a kv_connector_extra_config that must already exist. engine_kv_transfer_config() does the same on the rendered
file, so the preview shows what each engine runs; tests/conformance/test_engine_server_config.py holds it to Motor's
own code on every example stack and every connector layout the settings admit.

The instance id is not known before the engines start: Motor's controller numbers instances in the order their node
managers register (motor/controller/core/instance_assembler.py, ins_id_cnt), so the preview shows INSTANCE_ID there.
"""

from __future__ import annotations

import copy
from typing import Any, Mapping

from kvpool.policies import rules

INSTANCE_ID = "<instance_id>"
# Motor's store connectors (vllm_config.py _process_store_connector) and the key each takes the instance id in.
STORE_PORT_KEYS = {rules.STORE_CONNECTOR: "lookup_rpc_port", "MooncakeConnectorStoreV1": "mooncake_rpc_port"}
# Motor's names of the parallel sizes it writes, and the engine_config keys it reads each from
# (motor/config/resolver.py VLLMConfigResolver, after normalize_keys turns `-` into `_`).
PARALLEL_SIZE_KEYS = {"dp_size": "data_parallel_size", "tp_size": "tensor_parallel_size",
                      "pp_size": "pipeline_parallel_size"}


def with_store_connector_config(kv_transfer_config: dict[str, Any], store_backend: str | None) -> None:
    """Fill in, in place, what user_config.json must carry for the store connectors: Motor's engine server writes
    the instance id into a store connector's kv_connector_extra_config and fails when there is none, and
    AscendStoreConnector reads its pool's backend from there (Motor's examples write both), which Motor never sets."""
    for _, connector in rules.connectors_of(kv_transfer_config):
        name = connector.get("kv_connector")
        if name not in STORE_PORT_KEYS:
            continue
        extra = connector.setdefault("kv_connector_extra_config", {})
        if name == rules.STORE_CONNECTOR and store_backend is not None:
            extra.setdefault("backend", store_backend)


def parallel_sizes(engine_config: Mapping[str, Any]) -> dict[str, int]:
    """dp/tp/pp of one side as Motor's resolver reads them from user_config.json's engine_config."""
    normalized = {key.replace("-", "_"): value for key, value in engine_config.items()}
    return {size: normalized.get(key) or 1 for size, key in PARALLEL_SIZE_KEYS.items()}


def engine_kv_transfer_config(user_config: Mapping[str, Any], side: str) -> dict[str, Any] | None:
    """What an engine of `side` hands vLLM as --kv-transfer-config, from the rendered user_config.json (INSTANCE_ID
    where Motor writes the instance id); None when the side has no kv_transfer_config."""
    sections = {name: user_config[rules.engine_section(name)]["engine_config"] for name in rules.SIDES}
    if sections[side].get("kv_transfer_config") is None:
        return None
    config = copy.deepcopy(sections[side]["kv_transfer_config"])
    role = rules.ROLE_BY_SIDE[side]
    sizes = {name: parallel_sizes(section) for name, section in sections.items()}
    config["kv_role"] = role
    config["engine_id"] = INSTANCE_ID
    if config["kv_connector"] != rules.MULTI_CONNECTOR:
        config.setdefault("kv_connector_extra_config", {}).update(sizes)
        return config
    transfer, store = config["kv_connector_extra_config"]["connectors"][:2]
    transfer["kv_role"] = role
    transfer.setdefault("kv_connector_extra_config", {}).update(sizes)
    store["kv_role"] = "kv_both" if store["kv_connector"] == rules.UCM_CONNECTOR else role
    if store["kv_connector"] in STORE_PORT_KEYS:
        # An IPC socket name component, not a TCP port (vllm-ascend get_zmq_rpc_path_lookup).
        store["kv_connector_extra_config"][STORE_PORT_KEYS[store["kv_connector"]]] = INSTANCE_ID
    return config
