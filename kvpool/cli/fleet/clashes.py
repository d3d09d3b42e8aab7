"""What a cluster allocates once, checked across the stacks that deploy to it (the top-level `cluster` setting).

The API server refuses, or one stack silently takes over from another, when two stacks of one cluster ask for:
- one NodePort (the allocator hands each out once: `provided port is already allocated`);
- one namespace: every stack writes ConfigMap motor-config, its Deployments, Services and RBAC there under the
  same names, and both create the Namespace unless create_namespace is false;
- one (namespace, kind, name) or one cluster-scoped (kind, name) elsewhere (kube-system's Roles, ClusterRoles);
- one host port (a hostPort, or any port of a hostNetwork pod) on nodes both stacks' pods can land on; and a host
  port that another stack asks for as a NodePort (kube-proxy takes that port's traffic on every node).

Host ports are checked conservatively: two pods can share a node unless their nodeSelectors name one label key
with different values; affinity, taints and tolerations are not read, so a clash is reported where those alone
would keep the pods apart.

A stack's footprint comes from what its preview renders (`footprint_from_objects`) or, where no rendered objects
are at hand, from its settings (`footprint_from_settings`): its NodePorts are the *_node_port settings and its
namespace is motor_deploy_config.job_id exactly as the rendered Services and objects have them, so both give the
same NodePort and namespace problems; only host ports and objects outside the stack's namespace need the objects.
`kvpool preview` uses the settings of the other stacks (no program run per stack); `kvpool fleet` the previews.

Each problem names both stacks, the field to change in the second (the first keeps what it has), the clashing
value and a free one: the lowest NodePort in the range that no stack of the cluster uses, a namespace named after
the stack, the next host port up that no stack of the cluster binds or asks for as a NodePort. An object outside
both namespaces has no such value: every name motor-kvpool gives one follows from the namespace, so that clash is
a bug of ours, said as one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kvpool.cli.apiserver.checks import NODE_PORT_RANGE
from kvpool.cli.views.manifests import object_label, pod_specs
from kvpool.policies import rules
from kvpool.settings.service import ServiceSettings

NODE_PORT = "node-port"
SHARED_NAMESPACE = "shared-namespace"
OBJECT = "object"
HOST_PORT = "host-port"
CLASH_KINDS = (NODE_PORT, SHARED_NAMESPACE, OBJECT, HOST_PORT)

JOB_ID = "motor_deploy_config.job_id"


@dataclass(frozen=True)
class HostPort:
    port: int
    field: str  # the setting it comes from, or the object and container that binds it
    node_selector: Mapping[str, str]


@dataclass(frozen=True)
class Footprint:
    """What one stack takes of its cluster."""

    reference: str
    cluster: str
    namespace: str
    creates_namespace: bool
    node_ports: Mapping[int, str]  # NodePort -> the setting that asks for it
    objects: frozenset[tuple[str | None, str, str]] = frozenset()  # (namespace or None, kind, name)
    host_ports: tuple[HostPort, ...] = ()
    from_objects: bool = False  # False: from the settings (no host ports, no objects outside the namespace)


@dataclass(frozen=True)
class Clash:
    kind: str
    first: str  # the stack that keeps its value (sorts first)
    second: str  # the stack whose field should change
    field: str
    value: Any
    free: Any
    message: str


def _name(reference: str) -> str:
    return reference.rsplit("/", 1)[-1]


def node_port_fields(settings: ServiceSettings) -> dict[int, str]:
    deploy = settings.motor_deploy_config
    ports = {getattr(deploy, key): f"motor_deploy_config.{key}" for key in rules.NODE_PORT_KEYS}
    return {port: key for port, key in ports.items() if port is not None}


def _setting_host_ports(settings: ServiceSettings) -> dict[int, str]:
    """Host ports whose value is a setting: the worker port of a store whose workers run on the host network
    (Yuanrong)."""
    store = settings.kv_cache_store_config
    if store is not None and rules.BACKENDS[store.backend].node_workers and not store.target_stack:
        return {store.port: "kv_cache_store_config.port"}
    return {}


def footprint_from_settings(reference: str, settings: ServiceSettings) -> Footprint:
    return Footprint(reference, settings.cluster, settings.namespace, settings.create_namespace,
                     node_port_fields(settings))


def footprint_from_objects(reference: str, settings: ServiceSettings, objects: Iterable[Mapping[str, Any]]) -> Footprint:
    """`objects`: the manifests a preview of the stack rendered."""
    named = _setting_host_ports(settings)
    node_ports, taken, host_ports = {}, set(), []
    fields = node_port_fields(settings)
    for body in objects:
        metadata = body.get("metadata") or {}
        namespace, kind, name = metadata.get("namespace"), body["kind"], metadata["name"]
        taken.add((namespace, kind, name))
        label = object_label(kind, namespace, name)
        if kind == "Service":
            for index, port in enumerate(body.get("spec", {}).get("ports") or []):
                if port.get("nodePort"):
                    node_ports[port["nodePort"]] = fields.get(port["nodePort"], f"{label} spec.ports[{index}].nodePort")
        for pod in pod_specs(body.get("spec")):
            for container in pod["containers"]:
                for port in container.get("ports") or []:
                    bound = port.get("hostPort") or (port.get("containerPort") if pod.get("hostNetwork") else None)
                    if bound:
                        where = named.get(bound, f"{label} container {container.get('name')} port {port.get('name')}")
                        host_ports.append(HostPort(bound, where, dict(pod.get("nodeSelector") or {})))
    return Footprint(reference, settings.cluster, settings.namespace, (None, "Namespace", settings.namespace) in taken,
                     node_ports, frozenset(taken), tuple(host_ports), from_objects=True)


def _may_share_a_node(first: Mapping[str, str], second: Mapping[str, str]) -> bool:
    return all(second.get(key, value) == value for key, value in first.items())


@dataclass
class _Free:
    """Free values of one cluster; each one suggested is taken, so that two clashes never get the same."""

    node_ports: set[int]
    host_ports: set[int]
    namespaces: set[str]
    suggested: dict[tuple[str, str], Any] = field(default_factory=dict)

    def node_port(self) -> int:
        port = next(p for p in range(NODE_PORT_RANGE[0], NODE_PORT_RANGE[1] + 1)
                    if p not in self.node_ports and p not in self.host_ports)
        self.node_ports.add(port)
        return port

    def host_port(self, above: int) -> int:
        port = next(p for p in range(above + 1, 65536) if p not in self.host_ports and p not in self.node_ports
                    and p not in rules.NODE_RESERVED_PORTS)
        self.host_ports.add(port)
        return port

    def namespace(self, stack: str) -> str:
        candidates = (stack, *(f"{stack}-{n}" for n in range(2, 1000)))
        name = next(c for c in candidates if c not in self.namespaces)
        self.namespaces.add(name)
        return name


def clashes(footprints: Sequence[Footprint], changing: str | None = None) -> list[Clash]:
    """Every clash between two stacks of one cluster, ordered by cluster, then by the pair's references. The field
    to change is the second stack's of a pair, or `changing`'s when it is one of the two (the stack a preview is
    about)."""
    found = []
    by_cluster: dict[str, list[Footprint]] = {}
    for footprint in sorted(footprints, key=lambda f: f.reference):
        by_cluster.setdefault(footprint.cluster, []).append(footprint)
    for cluster, stacks in sorted(by_cluster.items()):
        free = _Free({p for s in stacks for p in s.node_ports}, {h.port for s in stacks for h in s.host_ports},
                     {s.namespace for s in stacks})
        for index, first in enumerate(stacks):
            for second in stacks[index + 1:]:
                found += _pair(cluster, *((second, first) if first.reference == changing else (first, second)), free)
    return found


def _pair(cluster: str, first: Footprint, second: Footprint, free: _Free) -> list[Clash]:
    a, b = first.reference, second.reference
    found = []
    for port in sorted(set(first.node_ports) & set(second.node_ports)):
        field_ = second.node_ports[port]
        suggestion = free.node_port()
        found.append(Clash(NODE_PORT, a, b, field_, port, suggestion, (
            f"{field_}: {b} asks for NodePort {port}, which {a} holds ({first.node_ports[port]}) in cluster "
            f"{cluster!r}; the API server allocates a NodePort once per cluster and refuses the second Service "
            f"(`provided port is already allocated`). Write {suggestion} (the lowest NodePort no stack of the "
            f"cluster uses), or leave it unset for a ClusterIP Service."
        )))
    if first.namespace == second.namespace:
        suggestion = free.namespace(_name(b))
        both = " both create the Namespace and" if first.creates_namespace and second.creates_namespace else ""
        found.append(Clash(SHARED_NAMESPACE, a, b, JOB_ID, first.namespace, suggestion, (
            f"{JOB_ID}: {a} and {b} both deploy into namespace {first.namespace!r} of cluster {cluster!r}:{both} "
            f"their objects have the same names (ConfigMap motor-config, the controller, the coordinator, their "
            f"Services), so the second `pulumi up` is refused or takes them over. Set {JOB_ID}: {suggestion} in "
            f"{_name(b)}, or let it read the other's KV pool with kv_cache_store_config.target_stack."
        )))
    else:  # one namespace covers every object in it and every name derived from it: said once, above
        for namespace, kind, name in sorted(first.objects & second.objects, key=lambda o: (o[0] or "", o[1], o[2])):
            label = object_label(kind, namespace, name)
            found.append(Clash(OBJECT, a, b, "cluster", label, None, (
                f"{label}: {a} and {b} both render it in cluster {cluster!r} though their namespaces differ "
                f"({first.namespace!r}, {second.namespace!r}); the second `pulumi up` is refused or takes it over. "
                "motor-kvpool names every object outside a stack's namespace after that namespace, so this is its "
                f"bug: report it; until it is fixed, deploy {_name(b)} to another cluster (top-level setting cluster)."
            )))
    found += _host_port_clashes(cluster, first, second, free)
    return found


def _host_port_clashes(cluster: str, first: Footprint, second: Footprint, free: _Free) -> list[Clash]:
    a, b = first.reference, second.reference
    found, said = [], set()
    for mine in second.host_ports:
        theirs = next((h for h in first.host_ports if h.port == mine.port
                       and _may_share_a_node(h.node_selector, mine.node_selector)), None)
        if theirs is not None and (mine.field, mine.port) not in said:
            said.add((mine.field, mine.port))
            suggestion = free.host_port(mine.port)
            found.append(Clash(HOST_PORT, a, b, mine.field, mine.port, suggestion, (
                f"{mine.field}: {b} binds port {mine.port} on its nodes, which {a} binds too ({theirs.field}) in "
                f"cluster {cluster!r}, and their nodeSelectors do not keep them apart (affinity and taints are not "
                f"read: checked conservatively); the second pod cannot start on a shared node. Write {suggestion}, "
                f"or give one of them a nodeSelector the other's nodes do not carry."
            )))
    for host, holder, other, port_holder in ((second, b, first, a), (first, a, second, b)):
        for mine in host.host_ports:
            if mine.port in other.node_ports and (mine.field, mine.port) not in said:
                said.add((mine.field, mine.port))
                suggestion = free.host_port(mine.port)
                found.append(Clash(HOST_PORT, port_holder, holder, mine.field, mine.port, suggestion, (
                    f"{mine.field}: {holder} binds port {mine.port} on its nodes, which {port_holder} asks for as "
                    f"NodePort ({other.node_ports[mine.port]}) in cluster {cluster!r}: kube-proxy takes that port's "
                    f"traffic on every node, so the host-network pod never receives it. Write {suggestion}."
                )))
    return found
