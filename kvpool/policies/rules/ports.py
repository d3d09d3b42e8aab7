"""Ports that share a network namespace do not collide: those of one Motor role's pod (its api_config ports) and
those a host-network store worker binds on every engine node (the node's own daemons, this service's NodePorts)."""

from __future__ import annotations

from typing import Any, Mapping

from .backends import backend_facts
from .sections import Finding
from .units import is_decimal

# The ports each Motor role's pod binds: deploy.py's defaults, which the role's api_config may move. None: not
# configurable (the controller's observability port).
ROLE_PORTS: dict[str, dict[str, tuple[str | None, int]]] = {
    "motor_controller_config": {"obs": (None, 1027), "api": ("controller_api_port", 1026)},
    "motor_coordinator_config": {
        "infer": ("coordinator_api_infer_port", 1025),
        "mgmt": ("coordinator_api_mgmt_port", 1026),
        "obs": ("coordinator_obs_port", 1027),
    },
}
# What a node's own daemons listen on, so a host-network pod cannot: sshd, DNS, rpcbind (NFS clients), a
# control-plane node's etcd and kube-apiserver, the kubelet (healthz, API, read-only), kube-proxy (metrics, healthz),
# kube-controller-manager, kube-scheduler (Kubernetes "Ports and Protocols").
NODE_RESERVED_PORTS = {
    22: "sshd", 53: "the node's DNS resolver", 111: "rpcbind", 2379: "etcd of the control plane",
    2380: "etcd of the control plane", 6443: "kube-apiserver", 10248: "the kubelet's healthz",
    10249: "kube-proxy's metrics", 10250: "the kubelet's API", 10255: "the kubelet's read-only API",
    10256: "kube-proxy's healthz", 10257: "kube-controller-manager", 10259: "kube-scheduler",
}
# Below it a process needs NET_BIND_SERVICE, which every container of ours drops.
FIRST_UNPRIVILEGED_PORT = 1024
NODE_PORT_KEYS = ("coordinator_infer_node_port", "coordinator_obs_node_port", "controller_observability_node_port")


def _written_port(section: Any, key: str | None, default: int) -> Any:
    if key is None:
        return default
    api_config = (section.get("api_config") if isinstance(section, Mapping) else None) or {}
    return api_config.get(key, default) if isinstance(api_config, Mapping) else api_config


def role_port(section: Any, key: str | None, default: int) -> int | None:
    """A port of a role from its (pass-through) api_config, else deploy.py's default; None when it is no port."""
    value = _written_port(section, key, default)
    if isinstance(value, bool) or not is_decimal(str(value)) or not 1 <= int(value) <= 65535:
        return None
    return int(value)


def check_role_ports(user_config: Mapping[str, Any]) -> list[Finding]:
    """Each port of a Motor role's pod is a port number and its own: the role binds each (infer, management,
    observability) in one pod, and the second bind fails."""
    findings = []
    for section_name, ports in ROLE_PORTS.items():
        section = user_config.get(section_name)
        taken: dict[int, str] = {}
        for name, (key, default) in ports.items():
            path = f"{section_name}.api_config.{key}" if key else f"{section_name} ({name} port)"
            port = role_port(section, key, default)
            if port is None:
                findings.append(Finding(path, f"{_written_port(section, key, default)!r} is not a port number "
                                              f"(1-65535)."))
                continue
            if port in taken:
                findings.append(Finding(
                    path,
                    f"is {port}, which the same pod already binds as {taken[port]}: one of them fails to bind; give "
                    f"each port of the role its own number.",
                ))
            taken.setdefault(port, path if key else f"its {name} port (fixed)")
    return findings


def check_host_network_port(path: str, port: int, deploy: Mapping[str, Any]) -> list[Finding]:
    """A port a host-network pod binds on every node it runs on: not one of the node's own daemons', not below
    FIRST_UNPRIVILEGED_PORT, not a NodePort of this service (kube-proxy takes that port's traffic on every node)."""
    if port in NODE_RESERVED_PORTS:
        return [Finding(path, f"is {port}, where {NODE_RESERVED_PORTS[port]} listens on the node; the host-network "
                              f"pod cannot bind it there: choose another port.")]
    if port < FIRST_UNPRIVILEGED_PORT:
        return [Finding(path, f"is {port}: binding a port below {FIRST_UNPRIVILEGED_PORT} on the node needs "
                              f"NET_BIND_SERVICE, which the pod drops; choose one from {FIRST_UNPRIVILEGED_PORT} up.")]
    for key in NODE_PORT_KEYS:
        if deploy.get(key) == port:
            return [Finding(path, f"is {port}, the NodePort of motor_deploy_config.{key}: kube-proxy takes that "
                                  f"port's traffic on every node, so the host-network pod would never receive it; "
                                  f"choose another port.")]
    return []


def _node_workers(backend: Any) -> bool:
    facts = backend_facts(backend)
    return facts is not None and facts.node_workers


def check_ports(user_config: Mapping[str, Any]) -> list[Finding]:
    """The ports of each Motor role's pod, and a Yuanrong store's worker port, which its host-network workers bind on
    every engine node."""
    findings = check_role_ports(user_config)
    store = user_config.get("kv_cache_store_config") or {}
    if isinstance(store, Mapping) and _node_workers(store.get("backend")) and not store.get("target_stack"):
        port = store.get("port")
        if isinstance(port, int) and not isinstance(port, bool):
            findings += check_host_network_port(
                "kv_cache_store_config.port", port, user_config.get("motor_deploy_config") or {})
    return findings
