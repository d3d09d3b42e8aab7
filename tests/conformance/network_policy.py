"""Kubernetes NetworkPolicy semantics over rendered manifests (networking.k8s.io/v1), for the connection tests:
a connection from pod A to port P of pod B is allowed when B's ingress and A's egress both allow it. A direction is
open when no policy of the pod's namespace selects the pod for it (policyTypes); otherwise some rule of a selecting
policy must match the peer (podSelector within the policy's namespace, namespaceSelector with or without a
podSelector; an empty `from`/`to` matches every peer) and the port (number, name of one of the destination pod's
container ports, endPort ranges; no `ports` matches every port). ipBlock peers match addresses, never a pod here:
pod addresses are not known before the pods run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from kvpool.cli.views.blast_radius import workloads


@dataclass(frozen=True)
class Pod:
    namespace: str
    name: str  # the workload (or service-set role) it comes from
    component: str  # app.kubernetes.io/component, the role
    labels: Mapping[str, str]
    ports: Mapping[str, int] = field(default_factory=dict)  # its containers' named ports
    container_ports: tuple[int, ...] = ()
    host_network: bool = False


def pods(objects: Iterable[Mapping[str, Any]]) -> list[Pod]:
    """One pod per workload (Deployment, StatefulSet, DaemonSet, service-set role), with its template's labels."""
    by_file = {f"{index}": obj for index, obj in enumerate(objects)}
    found = []
    for workload in workloads(by_file).values():
        namespace = by_file[workload.key[0]]["metadata"]["namespace"]
        spec = workload.template.get("spec") or {}
        ports = [p for c in spec.get("containers") or [] for p in c.get("ports") or []]
        found.append(Pod(
            namespace, workload.name, workload.component, dict((workload.template.get("metadata") or {}).get("labels") or {}),
            {p["name"]: p["containerPort"] for p in ports if "name" in p}, tuple(p["containerPort"] for p in ports),
            bool(spec.get("hostNetwork")),
        ))
    return found


def _selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    selector = selector or {}
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
        holds = {"In": labels.get(key) in values, "NotIn": labels.get(key) not in values,
                 "Exists": key in labels, "DoesNotExist": key not in labels}[operator]
        if not holds:
            return False
    return True


def namespace_labels(namespace: str) -> dict[str, str]:
    return {"kubernetes.io/metadata.name": namespace}  # what the API server sets on every namespace


def _peer_matches(peer: Mapping[str, Any], policy_namespace: str, pod: Pod) -> bool:
    if "ipBlock" in peer:
        return False
    if "namespaceSelector" in peer:
        if not _selects(peer["namespaceSelector"], namespace_labels(pod.namespace)):
            return False
    elif pod.namespace != policy_namespace:
        return False
    return _selects(peer.get("podSelector"), pod.labels)


def _port_matches(rule_ports: list[Mapping[str, Any]] | None, port: int, destination: Pod) -> bool:
    if not rule_ports:
        return True
    for entry in rule_ports:
        if entry.get("protocol", "TCP") != "TCP":
            continue
        wanted = entry.get("port")
        if wanted is None:
            return True
        number = destination.ports.get(wanted) if isinstance(wanted, str) else wanted
        if number is not None and number <= port <= entry.get("endPort", number):
            return True
    return False


def _direction_allows(policies: list[Mapping[str, Any]], pod: Pod, peer: Pod, port: int, destination: Pod,
                      kind: str) -> bool:
    key, peers_key = ("ingress", "from") if kind == "Ingress" else ("egress", "to")
    selecting = [p for p in policies if p["metadata"]["namespace"] == pod.namespace
                 and kind in p["spec"].get("policyTypes", ["Ingress"]) and _selects(p["spec"]["podSelector"], pod.labels)]
    if not selecting:
        return True
    for policy in selecting:
        for rule in policy["spec"].get(key) or []:
            peers = rule.get(peers_key)
            if (not peers or any(_peer_matches(p, policy["metadata"]["namespace"], peer) for p in peers)) \
                    and _port_matches(rule.get("ports"), port, destination):
                return True
    return False


def allowed(policies: list[Mapping[str, Any]], source: Pod, destination: Pod, port: int) -> bool:
    """Whether `source` may open a TCP connection to `port` of `destination` under these NetworkPolicies."""
    return (_direction_allows(policies, destination, source, port, destination, "Ingress")
            and _direction_allows(policies, source, destination, port, destination, "Egress"))
