"""KV-cache affinity scheduling: Motor's KV conductor and the prefill KV-event ports it subscribes to."""

from __future__ import annotations

import re
from typing import Any, Mapping

from .backends import DEFAULT_BACKEND, backend_facts, runs_standalone_store
from .sections import (
    Finding,
    connectors_of,
    engine_section,
    kv_transfer_path,
)
from .units import is_decimal

# Motor 8919e55: the coordinator's scheduler_type kv_cache_affinity queries the conductor named by KV_CONDUCTOR_SERVICE
# (deployed for user_config.json's kv_conductor_config); the coordinator registers each prefill DP rank's
# kv-events-config endpoint with it (motor/coordinator/api_client/conductor_api_client.py), and the conductor
# subscribes to those endpoints; vLLM's publisher binds them, one port per DP rank (port + rank).

KV_CACHE_AFFINITY = "kv_cache_affinity"
KV_EVENTS_CONFIG = "kv-events-config"  # Motor's coordinator reads this spelling only (motor/config/config_utils.py)
MOTOR_DEFAULT_BLOCK_SIZE = 128  # what the coordinator registers and queries with when engine_config has no block-size
_KV_EVENT_ENDPOINT = re.compile(r"^tcp://\*:([0-9]{1,5})$")
_PREFILL_ENGINE = "motor_engine_prefill_config.engine_config"
_PREFIX_CACHING_OFF = {("enable-prefix-caching", False), ("enable_prefix_caching", False),
                       ("no-enable-prefix-caching", True), ("no_enable_prefix_caching", True)}


def _engine_config(user_config: Mapping[str, Any], side: str) -> Mapping[str, Any]:
    section = user_config.get(engine_section(side))
    engine = section.get("engine_config") if isinstance(section, Mapping) else None
    return engine if isinstance(engine, Mapping) else {}


def kv_event_port(endpoint: Any) -> int | None:
    """The base port of a kv-events-config endpoint in the only form Motor's coordinator registers (tcp://*:<port>)."""
    match = _KV_EVENT_ENDPOINT.fullmatch(endpoint) if isinstance(endpoint, str) else None
    return int(match.group(1)) if match and 1 <= int(match.group(1)) <= 65535 else None


def _positive(value: Any, default: int = 1) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


def kv_event_ports(user_config: Mapping[str, Any]) -> dict[str, range]:
    """Field path -> the ports a prefill pod's vLLM publisher binds for it (one per DP rank: port + rank)."""
    engine = _engine_config(user_config, "prefill")
    events = engine.get(KV_EVENTS_CONFIG)
    if not isinstance(events, Mapping):
        return {}
    ranks = _positive(engine.get("data_parallel_size"))
    ports = {}
    for key in ("endpoint", "replay_endpoint"):
        port = kv_event_port(events.get(key))
        if port is not None:
            ports[f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}.{key}"] = range(port, port + ranks)
    return ports


def coordinator_reads_model(user_config: Mapping[str, Any]) -> bool:
    """Motor's coordinator loads the prefill model's tokenizer in every inference worker at start, without error
    handling (motor/coordinator/process/inference_manager.py:105), when it has a conductor (KV_CONDUCTOR_SERVICE, set
    for kv_conductor_config; scheduler/policy/kv_cache_affinity.py:451-469) and a model path, which Motor takes from
    the prefill engine_config only when that carries kv-events-config (motor/config/config_utils.py:237-247)."""
    conductor = user_config.get("kv_conductor_config")
    events = _engine_config(user_config, "prefill").get(KV_EVENTS_CONFIG)
    return isinstance(conductor, Mapping) and isinstance(events, Mapping)


def check_kv_cache_affinity(user_config: Mapping[str, Any]) -> list[Finding]:
    """kv_cache_affinity has a conductor; a conductor has what it indexes: prefill KV events in the form Motor's
    coordinator registers, prefix caching (vLLM publishes block events from its prefix cache), the block size the
    coordinator reads, and, when it also follows the pool's master, a Mooncake pool."""
    coordinator = user_config.get("motor_coordinator_config")
    scheduler = coordinator.get("scheduler_config") if isinstance(coordinator, Mapping) else None
    scheduler_type = scheduler.get("scheduler_type") if isinstance(scheduler, Mapping) else None
    conductor = user_config.get("kv_conductor_config")
    findings = []
    if scheduler_type == KV_CACHE_AFFINITY and not conductor:
        findings.append(Finding(
            "motor_coordinator_config.scheduler_config.scheduler_type",
            "is kv_cache_affinity but kv_conductor_config is not set: no conductor is deployed, the coordinator gets "
            "no KV_CONDUCTOR_SERVICE and routes by load alone (Motor logs a fallback per request); add "
            "kv_conductor_config (e.g. http_server_port: 13333) or choose another scheduler_type.",
        ))
    if not isinstance(conductor, Mapping) or not conductor:
        return findings
    engine = _engine_config(user_config, "prefill")
    events = engine.get(KV_EVENTS_CONFIG)
    if not isinstance(events, Mapping):
        if "kv_events_config" in engine:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.kv_events_config",
                f"Motor's coordinator reads {KV_EVENTS_CONFIG} (with hyphens) only and would register no prefill "
                f"endpoint with the conductor; write {KV_EVENTS_CONFIG}.",
            ))
        else:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}",
                "is missing: kv_conductor_config deploys the conductor, but the prefill engines publish no KV events "
                "for it to index; add kv-events-config {publisher: zmq, enable_kv_cache_events: true, endpoint: "
                "\"tcp://*:5557\", topic: kv-events}.",
            ))
    else:
        where = f"{_PREFILL_ENGINE}.{KV_EVENTS_CONFIG}"
        if events.get("publisher") != "zmq":
            findings.append(Finding(f"{where}.publisher", f"is {events.get('publisher')!r}; the conductor subscribes "
                                    "with ZeroMQ: write zmq."))
        if events.get("enable_kv_cache_events") is not True:
            findings.append(Finding(f"{where}.enable_kv_cache_events", "must be true, or vLLM publishes nothing for "
                                    "the conductor to index."))
        for key in ("endpoint", "replay_endpoint"):
            value = events.get(key)
            if (key == "endpoint" or value not in (None, "")) and kv_event_port(value) is None:
                findings.append(Finding(
                    f"{where}.{key}",
                    f"is {value!r}; Motor's coordinator registers tcp://<pod IP>:<port + DP rank> by splitting it at "
                    "'*:' (conductor_api_client.py) and registers nothing for any other form: write tcp://*:<port>.",
                ))
    for key, value in engine.items():
        if isinstance(value, bool) and (key, value) in _PREFIX_CACHING_OFF:
            findings.append(Finding(
                f"{_PREFILL_ENGINE}.{key}",
                "turns prefix caching off: vLLM publishes KV block events from its prefix cache only, so the "
                "conductor would index nothing; remove it.",
            ))
    written = engine.get("block_size")
    if "block-size" not in engine and written is not None and written != MOTOR_DEFAULT_BLOCK_SIZE:
        findings.append(Finding(
            f"{_PREFILL_ENGINE}.block_size",
            f"is {written!r}, but Motor's coordinator reads block-size (with a hyphen) only and registers and "
            f"queries the conductor with {MOTOR_DEFAULT_BLOCK_SIZE}-token blocks: every query would miss; write "
            f"block-size: {written!r}.",
        ))
    instance = conductor.get("kvevent_instance")
    if instance:
        store = user_config.get("kv_cache_store_config")
        backend = store.get("backend", DEFAULT_BACKEND) if isinstance(store, Mapping) and store else None
        if backend is None:
            findings.append(Finding(
                "kv_conductor_config.kvevent_instance",
                "follows the pool's Mooncake master, but the service has no kv_cache_store_config: Motor's "
                "mooncake_config.py writes no conductor config without one; add a Mooncake store or remove "
                "kvevent_instance.",
            ))
        elif (facts := backend_facts(backend)) is None or not facts.conductor_events:
            findings.append(Finding(
                "kv_conductor_config.kvevent_instance.mooncake_master",
                f"points the conductor at the pool's master as a Mooncake event source, but kv_cache_store_config."
                f"backend is {backend!r}: Motor's conductor config knows a Mooncake master only and would dial the "
                f"{backend} server's port; remove kvevent_instance (the conductor still indexes the engines' events) "
                f"or use backend: mooncake.",
            ))
    return findings


def _transfer_port_ranges(user_config: Mapping[str, Any]) -> list[tuple[str, range, str]]:
    """Other ports every prefill pod binds that the configuration names: the transfer connectors' kv_port (vllm-ascend's
    Mooncake connectors bind kv_port + DP rank x TP x PP + device index), vLLM's DP RPC and API ports, and a
    standalone Mooncake store's HTTP port."""
    engine = _engine_config(user_config, "prefill")
    devices = (_positive(engine.get("data_parallel_size")) * _positive(engine.get("tensor_parallel_size"))
               * _positive(engine.get("pipeline_parallel_size")))
    found = []
    path = kv_transfer_path("prefill")
    for suffix, connector in connectors_of(engine.get("kv_transfer_config")):
        port = connector.get("kv_port")
        if isinstance(port, str) and is_decimal(port):
            port = int(port)
        if isinstance(port, int) and not isinstance(port, bool):
            found.append((f"{path}{suffix}.kv_port", range(port, port + devices), "the KV transfer ports"))
    for key in ("data_parallel_rpc_port", "data-parallel-rpc-port", "port"):
        value = engine.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            found.append((f"{_PREFILL_ENGINE}.{key}", range(value, value + 1), "a vLLM port"))
    store = user_config.get("kv_cache_store_config")
    if runs_standalone_store(store):
        http = store.get("store_http_port")
        if isinstance(http, int) and not isinstance(http, bool) and http > 0:
            found.append(("kv_cache_store_config.store_http_port", range(http, http + 1),
                          "the standalone Mooncake store's HTTP port"))
    return found


def shared_ports(ports: range, taken: range) -> int | None:
    """The first port two ranges share, by arithmetic: a range may span millions of ports (a DP x TP x PP world of a
    mistyped size), which a set of its ports would hold in memory."""
    first = max(ports.start, taken.start)
    return first if first < min(ports.stop, taken.stop) else None


def _ports_text(ports: range) -> str:
    return str(ports.start) if ports.stop - ports.start == 1 else f"{ports.start}-{ports.stop - 1}"


def check_kv_event_ports(user_config: Mapping[str, Any]) -> list[Finding]:
    """The KV-event ports of a prefill pod (endpoint and replay_endpoint, one per DP rank) collide with no other port
    of the pod: the second process to bind one fails to start."""
    if not user_config.get("kv_conductor_config"):
        return []
    events = list(kv_event_ports(user_config).items())
    findings = []
    for index, (path, ports) in enumerate(events):
        others = [(other, taken, "the other KV-event endpoint") for other, taken in events[:index]]
        others += _transfer_port_ranges(user_config)
        for other, taken, what in others:
            common = shared_ports(ports, taken)
            if common is not None:
                findings.append(Finding(
                    path,
                    f"binds port{'s' if ports.stop - ports.start > 1 else ''} {_ports_text(ports)} (one per DP rank) "
                    f"in every prefill pod, and {other} ({what}) takes {_ports_text(taken)} there too (port "
                    f"{common}): one of them fails to bind; choose ports apart.",
                ))
    return findings
