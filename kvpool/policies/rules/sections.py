"""The shape of a service's configuration as the rules read it: the sides, the sections of user_config.json and
env.json, the connectors of a kv_transfer_config, and the `Finding` every rule returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

SIDES = ("prefill", "decode")
ROLE_BY_SIDE = {"prefill": "kv_producer", "decode": "kv_consumer"}
STORE_CONNECTOR = "AscendStoreConnector"
UCM_CONNECTOR = "UCMConnector"
MULTI_CONNECTOR = "MultiConnector"
HYBRID_CONNECTOR = "MooncakeHybridConnector"
# Motor's P/D dispatch whitelist by profile (motor/common/resources/dispatch.py, motor-deployer.md §1.8): prefill
# hands each request off to decode, or both sides start it together (trigger).
HANDOFF_CONNECTORS = ("MooncakeConnectorV1", HYBRID_CONNECTOR, "NixlConnector")
TRIGGER_CONNECTORS = ("MooncakeLayerwiseConnector",)
DISPATCH_CONNECTORS = ("MooncakeConnectorV1", HYBRID_CONNECTOR, "MooncakeLayerwiseConnector", "NixlConnector")
DEFAULT_DSHM_SIZE = "4Gi"  # deploy.py's /dev/shm for engines


@dataclass(frozen=True)
class Finding:
    """One broken rule: the dotted path of the field to edit and what to write there."""

    path: str
    message: str
    # A value of `path` that satisfies the rule, when one follows from the configuration (`kvpool import` offers it
    # as `--set path=example`); the message says it too.
    example: Any = None

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def engine_section(side: str) -> str:
    return f"motor_engine_{side}_config"


def engine_env_section(side: str) -> str:
    return f"motor_engine_{side}_env"


def kv_transfer_path(side: str) -> str:
    return f"{engine_section(side)}.engine_config.kv_transfer_config"


def connectors_of(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, Mapping[str, Any]]]:
    """(path suffix, connector) for every connector of one side: the MultiConnector's list, or the single one.
    Data of the wrong shape holds no connectors here; the settings model names the field."""
    if not kv_transfer_config or not isinstance(kv_transfer_config, Mapping):
        return []
    if kv_transfer_config.get("kv_connector") == MULTI_CONNECTOR:
        extra = kv_transfer_config.get("kv_connector_extra_config") or {}
        listed = extra.get("connectors") if isinstance(extra, Mapping) else None
        listed = listed if isinstance(listed, Sequence) and not isinstance(listed, str) else []
        return [
            (f".kv_connector_extra_config.connectors[{index}]", connector)
            for index, connector in enumerate(listed)
            if isinstance(connector, Mapping)
        ]
    return [("", kv_transfer_config)]


def store_connector_backends(kv_transfer_config: Mapping[str, Any] | None) -> list[tuple[str, str | None]]:
    """(path, backend or None when omitted) of every AscendStoreConnector of one side."""
    found = []
    for suffix, connector in connectors_of(kv_transfer_config):
        if connector.get("kv_connector") == STORE_CONNECTOR:
            extra = connector.get("kv_connector_extra_config") or {}
            found.append((f"{suffix}.kv_connector_extra_config.backend", extra.get("backend")))
    return found


def kv_transfer_configs(user_config: Mapping[str, Any]) -> dict[str, Mapping[str, Any] | None]:
    """Each side's kv_transfer_config from a user_config.json."""
    return {
        side: ((user_config.get(engine_section(side)) or {}).get("engine_config") or {}).get("kv_transfer_config")
        for side in SIDES
    }


def uses_pool(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> bool:
    """Whether any engine reads and writes the shared pool (an AscendStoreConnector), not just the P/D transfer."""
    return any(store_connector_backends(kv_transfer_configs.get(side)) for side in SIDES)


def engine_envs(env: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """What each side's engines run with: motor_common_env under the side's own section (env.json's layering)."""
    common = env.get("motor_common_env") or {}
    return {side: {**common, **(env.get(engine_env_section(side)) or {})} for side in SIDES}


def transfer_connector(kv_transfer_config: Mapping[str, Any] | None) -> tuple[str, Mapping[str, Any]] | None:
    """(path suffix, connector) of the P/D transfer connector: connectors[0], or the single connector."""
    entries = connectors_of(kv_transfer_config)
    return entries[0] if entries else None
