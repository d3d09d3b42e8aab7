"""The engine pods the stacks of one cluster ask for, against the Ready nodes that can take them: a warning, not a
problem (nodes come and go; the stacks are not wrong, the cluster is short).

Each engine pod requests `npus_per_pod` of its hardware's NPU resource and selects its nodes by the hardware's labels
plus its side's node_selector (DeployConfig.engine_side, as EnginePool renders it); engine pods have no
anti-affinity, so several share a node when its NPUs allow. The pods of every stack of a cluster are placed on the
Ready nodes that carry their labels, first fit, the most constrained selectors first and the largest pods first, and
every pod that fits nowhere is one the scheduler would leave Pending. Taints, tolerations and what other workloads
already hold are not read: the nodes' allocatable NPUs are what the check offers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from kvpool.policies import rules
from kvpool.settings.service import ServiceSettings


@dataclass(frozen=True)
class Node:
    name: str
    labels: Mapping[str, str]
    allocatable: Mapping[str, int]  # the whole-numbered quantities (NPUs), by resource name


@dataclass(frozen=True)
class ClusterNodes:
    cluster: str
    context: str | None  # the kubeconfig's context it was read in; None: the kubeconfig has none for this cluster
    nodes: tuple[Node, ...] = ()


@dataclass(frozen=True)
class EnginePods:
    """One side of one stack: `pods` pods of `npus_per_pod` NPUs each."""

    stack: str  # the stack's name as the report shows it
    side: str
    pods: int
    npus_per_pod: int
    resource: str
    node_selector: tuple[tuple[str, str], ...]  # sorted


@dataclass(frozen=True)
class CapacityWarning:
    cluster: str
    stacks: tuple[str, ...]
    node_selector: tuple[tuple[str, str], ...]
    resource: str
    pods: int  # engine pods the stacks ask for on nodes with these labels
    npus: int
    nodes: int  # Ready nodes with these labels
    allocatable: int  # their allocatable `resource`, together
    pending: int  # pods that fit on none of them
    message: str


def engine_pods(stack: str, settings: ServiceSettings) -> list[EnginePods]:
    deploy = settings.motor_deploy_config
    found = []
    for side in rules.SIDES:
        pods = deploy.engine_side(side)
        found.append(EnginePods(stack, side, pods.pods, pods.npus_per_pod, pods.npu_resource,
                                tuple(sorted(pods.node_selector.items()))))
    return found


def ready_nodes(node_list: Mapping) -> list[Node]:
    """The Ready nodes of a NodeList as `GET /api/v1/nodes` returns it; a cordoned node takes no new pod either."""
    nodes = []
    for item in node_list.get("items") or []:
        status = item.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
        if ready and not (item.get("spec") or {}).get("unschedulable"):
            nodes.append(Node(item["metadata"]["name"], dict(item["metadata"].get("labels") or {}),
                              {name: int(value) for name, value in (status.get("allocatable") or {}).items()
                               if str(value).isdigit()}))  # NPUs count whole ("8"); memory and milli-CPUs are not read
    return sorted(nodes, key=lambda node: node.name)


def _labels(selector: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"{key}={value}" for key, value in selector)


def _carries(node: Node, selector: Iterable[tuple[str, str]]) -> bool:
    return all(node.labels.get(key) == value for key, value in selector)


def capacity_warnings(cluster: str, demands: Sequence[EnginePods], nodes: Sequence[Node]) -> list[CapacityWarning]:
    """`demands`: the engine pods of every stack of `cluster`; `nodes`: its Ready nodes."""
    free = {(node.name, resource): count for node in nodes for resource, count in node.allocatable.items()}
    groups: dict[tuple[tuple[tuple[str, str], ...], str], list[EnginePods]] = {}
    for demand in demands:
        if demand.pods:
            groups.setdefault((demand.node_selector, demand.resource), []).append(demand)
    warnings = []
    for (selector, resource), group in sorted(groups.items(), key=lambda item: (-len(item[0][0]), item[0])):
        fitting = [node for node in nodes if _carries(node, selector)]
        pending = 0
        for npus in sorted((d.npus_per_pod for d in group for _ in range(d.pods)), reverse=True):
            node = next((n for n in fitting if free.get((n.name, resource), 0) >= npus), None)
            if node is None:
                pending += 1
            else:
                free[node.name, resource] -= npus
        if pending:
            warnings.append(_warning(cluster, selector, resource, group, fitting, pending))
    return warnings


def _warning(cluster: str, selector: tuple[tuple[str, str], ...], resource: str, group: Sequence[EnginePods],
             fitting: Sequence[Node], pending: int) -> CapacityWarning:
    stacks = tuple(sorted({demand.stack for demand in group}))
    pods = sum(demand.pods for demand in group)
    npus = sum(demand.pods * demand.npus_per_pod for demand in group)
    allocatable = sum(node.allocatable.get(resource, 0) for node in fitting)
    return CapacityWarning(cluster, stacks, selector, resource, pods, npus, len(fitting), allocatable, pending, (
        f"cluster {cluster!r}: {', '.join(stacks)} ask for {pods} engine pods ({npus} {resource}) on nodes labelled "
        f"{_labels(selector)}; the cluster has {len(fitting)} Ready such nodes with {allocatable} {resource} "
        f"allocatable, so {pending} of the pods would stay Pending. Add nodes with these labels, or lower "
        f"p_instances_num/d_instances_num (or the pods' NPUs) of one of these stacks."
    ))
