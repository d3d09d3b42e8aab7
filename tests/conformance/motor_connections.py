"""Every connection Motor's code opens between the pods of a service, as data: the table of docs/conformance.md is rendered from
CONNECTIONS (conformance_table) and tests/conformance/test_network_policies.py evaluates the rendered NetworkPolicies
against each row. `ports` reads, from the effective user_config.json, the ports a row opens in that service (none:
the row does not apply there)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from kvpool.policies import rules

CONTROLLER, COORDINATOR = "mindie-motor-controller", "mindie-motor-coordinator"
ENGINES, CONDUCTOR = ("prefill", "decode"), "kv-conductor"
STORE, STORE_ETCD = "mindie-motor-kv-store", "mindie-motor-kv-store-etcd"  # the store's `app` labels
MOTOR_COMPONENTS = (CONTROLLER, COORDINATOR, *ENGINES, CONDUCTOR)
# Motor's defaults where user_config.json does not move them: api_config ports (1026) and the engines' endpoint
# base port (motor/config/node_manager.py EndpointConfig.base_port, 10000).
MOTOR_API_PORT, ENGINE_MGMT_PORT, ETCD_CLIENT_PORT = 1026, 10000, 2379


def _store(user_config: Mapping[str, Any]) -> Mapping[str, Any]:
    return user_config.get("kv_cache_store_config") or {}


def _backend(*backends: str) -> Callable[[Mapping[str, Any]], bool]:
    return lambda user_config: _store(user_config).get("backend") in backends


@dataclass(frozen=True)
class Connection:
    sources: tuple[str, ...]  # app.kubernetes.io/component of the connecting pods
    destination: str  # a component, or a store `app` label
    port_text: str  # docs/conformance.md's words for the port
    motor: str  # where Motor's code opens it (njuyuan/PyMotor@8919e55)
    ports: Callable[[Mapping[str, Any]], list[int]]

    @property
    def to_store(self) -> bool:
        return self.destination in (STORE, STORE_ETCD)


def _conductor_port(user_config: Mapping[str, Any]) -> list[int]:
    conductor = user_config.get("kv_conductor_config")
    return [conductor.get("http_server_port", 13333)] if conductor else []


def _event_ports(user_config: Mapping[str, Any]) -> list[int]:
    if not user_config.get("kv_conductor_config"):
        return []
    return [port for ports in rules.kv_event_ports(user_config).values() for port in ports]


CONNECTIONS = (
    Connection((COORDINATOR,), STORE, "`kv_cache_store_config.metrics_port`",
               "coordinator/metrics/metrics_collector.py:534-569 (`http://$KVS_MASTER_SERVICE:<port>/metrics`)",
               lambda u: [_store(u)["metrics_port"]] if _backend("mooncake", "memcache")(u) else []),
    Connection((COORDINATOR,), CONDUCTOR, "`kv_conductor_config.http_server_port`",
               "coordinator/api_client/conductor_api_client.py:98-101, 178 (register, query)", _conductor_port),
    Connection((COORDINATOR,), "prefill", "endpoint mgmt port (10000 + rank)",
               "coordinator/metrics/metrics_collector.py:869 (engine metrics; requests go to the endpoints too)",
               lambda u: [ENGINE_MGMT_PORT]),
    Connection((COORDINATOR,), "decode", "endpoint mgmt port (10000 + rank)",
               "coordinator/metrics/metrics_collector.py:869", lambda u: [ENGINE_MGMT_PORT]),
    Connection((COORDINATOR,), CONTROLLER, "`controller_api_port` (1026)",
               "coordinator/api_client/controller_api_client.py:68", lambda u: [MOTOR_API_PORT]),
    Connection((CONTROLLER,), COORDINATOR, "`coordinator_api_mgmt_port` (1026)",
               "controller/api_client/coordinator_api_client.py:227", lambda u: [MOTOR_API_PORT]),
    Connection(ENGINES, CONTROLLER, "`controller_api_port` (1026)",
               "node_manager/api_client/controller_api_client.py:197 (the node manager registers)",
               lambda u: [MOTOR_API_PORT]),
    Connection((CONTROLLER,), "prefill", "`node_manager_port` (1026)",
               "controller/api_client/node_manager_api_client.py:58", lambda u: [MOTOR_API_PORT]),
    Connection((CONTROLLER,), "decode", "`node_manager_port` (1026)",
               "controller/api_client/node_manager_api_client.py:58", lambda u: [MOTOR_API_PORT]),
    Connection(ENGINES, STORE, "Mooncake master `kv_cache_store_config.port`",
               "examples/deployer/startup/roles/kv_store_backends/mooncake/mooncake_config.py:102 (master_server_address)",
               lambda u: [_store(u)["port"]] if _backend("mooncake")(u) else []),
    Connection(ENGINES, STORE, "MemCache meta service `port` and `config_store_port`",
               "node_manager/core/services/local_service.py:216-217 (meta_service_url, config_store_url)",
               lambda u: [_store(u)["port"], _store(u)["config_store_port"]] if _backend("memcache")(u) else []),
    Connection(ENGINES, STORE_ETCD, "etcd client port 2379 (Mooncake HA: the client finds the leader there)",
               "mooncake_config.py:102, which our engine function points back at `etcd://…`",
               lambda u: [ETCD_CLIENT_PORT] if _backend("mooncake")(u) else []),
    Connection((CONDUCTOR,), STORE, "Mooncake master `kv_cache_store_config.port` (with `kvevent_instance`)",
               "examples/deployer/startup/roles/kv_store_backends/mooncake/mooncake_config.py:140",
               lambda u: [_store(u)["port"]] if (u.get("kv_conductor_config") or {}).get("kvevent_instance") else []),
    Connection((CONDUCTOR,), "prefill", "each DP rank's `kv-events-config` endpoint and replay ports",
               "coordinator/api_client/conductor_api_client.py:67-95 (registers them for the conductor)", _event_ports),
)


def conformance_table() -> str:
    lines = ["| from | to | port | Motor's code (njuyuan/PyMotor@8919e55, under `motor/` unless named) |",
             "| --- | --- | --- | --- |"]
    for row in CONNECTIONS:
        lines.append(f"| {', '.join(row.sources)} | {row.destination} | {row.port_text} | {row.motor} |")
    return "\n".join(lines) + "\n"
