"""The one type for a port a pod serves, and the one place its Kubernetes entries are spelled: the container's
`ports` entry and the Service's (the Service forwards to the same port number, by the same name)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Port:
    name: str  # the container's and the Service's port name (probes and ServiceMonitors name it)
    port: int  # the container listens on it and the Service serves it
    node_port: int | None = None  # set: the Service is a NodePort Service and serves it on every node here
    also_on_host: bool = False  # the container binds the same port on its node (hostPort), for peers dialling nodes

    def container_port(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "containerPort": self.port}
        if self.also_on_host:
            entry["hostPort"] = self.port
        entry["protocol"] = "TCP"
        return entry

    def service_port(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "port": self.port, "targetPort": self.port, "protocol": "TCP"}
        if self.node_port is not None:
            entry["nodePort"] = self.node_port
        return entry
