"""The fleet as `python -m kvpool fleet` prints it: a table of the stacks, one line per pool, the problems; and the
same facts as JSON. The picture is kvpool/cli/fleet/graph.py."""

from __future__ import annotations

from typing import Any

from kvpool.cli.fleet.model import (
    CONSUMER,
    OWNER,
    EngineGroup,
    Fleet,
    FleetStack,
    PoolReadiness,
    Problem,
    stack_name,
)
from kvpool.cli.views.sizing import table as sizing_table

COLUMNS = ("STACK", "CLUSTER", "ROLE", "NAMESPACE", "BACKEND", "READS", "ALLOWED CONSUMERS", "KEY", "PREFILL", "DECODE",
           "POOL MEMORY")


def size(count: int | None) -> str:
    """Bytes as the largest binary unit that divides them: 8GiB, 512MiB; `?` when unknown."""
    if count is None:
        return "?"
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count and count % factor == 0:
            return f"{count // factor}{unit}"
    return f"{count}B"


def _engines(group: EngineGroup) -> str:
    """`2x1 pod, 1GiB each`: instances x pods per instance, and the pool memory each pod holds."""
    pods = f"{group.instances}x{group.pods_per_instance} pod{'s' if group.pods_per_instance != 1 else ''}"
    return f"{pods}, {size(group.pool_bytes_per_pod)} each"


def _row(stack: FleetStack) -> tuple[str, ...]:
    prefill, decode = stack.engines
    return (
        stack.name, stack.cluster, stack.role, stack.namespace, stack.backend or "-",
        stack_name(stack.target) if stack.target else "-",
        ",".join(stack.allowed_consumers) or "-", stack.compatibility_key,
        _engines(prefill), _engines(decode), size(stack.pool_bytes),
    )


def table(fleet: Fleet) -> list[str]:
    rows = [COLUMNS, *(_row(stack) for stack in fleet.stacks)]
    widths = [max(len(row[i]) for row in rows) for i in range(len(COLUMNS))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def pool_lines(fleet: Fleet) -> list[str]:
    lines = []
    for owner in (stack for stack in fleet.stacks if stack.role == OWNER):
        consumers = fleet.consumers_of(owner.reference)
        readers = [owner, *(c for c in consumers if fleet.is_healthy(c))]
        pods = sum(group.pods for reader in readers for group in reader.engines)
        held = f"{size(fleet.pool_bytes(owner))} in {pods} engine pods"
        if not any(reader.uses_pool for reader in readers):
            held = "holds nothing: no engine uses a store connector"
        elif owner.node_worker_mib is not None:
            held = f"each node's datasystem worker offers {size(owner.node_worker_mib * 2**20)} ({pods} engine pods)"
        shut_out = [c.name for c in consumers if not fleet.is_healthy(c)]
        lines.append(
            f"  {owner.name} ({owner.backend}, namespace {owner.namespace}): {held}; consumers: "
            f"{', '.join(c.name for c in consumers) or 'none'}"
            + (f" ({', '.join(shut_out)} not counted: see problems)" if shut_out else "")
        )
    return ["Pools:", *lines]


def _readiness(fleet: Fleet, pool: PoolReadiness) -> str:
    """`service-a (context lab): Service service-a/mindie-motor-kvs-master 1 ready, 0 not ready; Deployment
    mindie-motor-kv-store 1/1 available: ready`, and, where it is not, the consumers left without a store."""
    name = stack_name(pool.owner)
    if pool.context is None or pool.unread:
        return f"  {name}: not checked: {pool.unread}"
    read = [f"Service {pool.namespace}/{pool.service} "
            + ("not found" if pool.ready is None else f"{pool.ready} ready, {pool.not_ready} not ready")]
    if pool.workload is not None:
        counted = "ready" if pool.workload.startswith("DaemonSet") else "available"
        read.append(f"{pool.workload} " + ("not found" if pool.available is None else
                                           f"{pool.available}/{pool.desired} {counted}"))
    if not pool.serves:
        consumers = [c.name for c in fleet.consumers_of(pool.owner)]
        verdict = "NOT READY: " + (f"{', '.join(consumers)} would find no store" if consumers else "no consumer reads it")
    elif pool.available is not None and pool.available < pool.desired:
        verdict = "degraded"
    else:
        verdict = "ready"
    return f"  {name} (context {pool.context}): {'; '.join(read)}: {verdict}"


def readiness_lines(fleet: Fleet) -> list[str]:
    """Each owner's store as read from its cluster (kvpool/cli/fleet/pools.py), or one line saying it was not."""
    if not any(stack.role == OWNER for stack in fleet.stacks):
        return []
    if fleet.readiness is None:
        return ["Pool readiness: not checked; add --kubeconfig FILE to read each owner's store from its cluster"]
    return ["Pool readiness (each owner's store in its cluster, read through --kubeconfig):",
            *(_readiness(fleet, pool) for pool in fleet.readiness)]


def sizing_lines(fleet: Fleet) -> list[str]:
    """Each pool sized for the writers of its owner and of the consumers counted in it."""
    rows = [stack.sizing for stack in fleet.stacks if stack.sizing and stack.role != CONSUMER]
    return ["Sizing (docs/sizing.md; the owner's and its counted consumers' writers):", *sizing_table(rows)]


def problem_lines(problems: list[Problem] | tuple[Problem, ...]) -> list[str]:
    if not problems:
        return ["Problems: none"]
    lines = [f"Problems: {len(problems)}"]
    for problem in problems:
        lines.append(f"  [{problem.kind}] {stack_name(problem.consumer)} -> {stack_name(problem.owner)}: "
                     f"{problem.message}")
    return lines


def settings_only_lines(fleet: Fleet) -> list[str]:
    """The stacks whose clashes were checked on their settings (NodePorts, namespace) because the source rendered
    none of their objects: said, so that no reader takes their host ports and objects as checked."""
    unrendered = [stack for stack in fleet.stacks if stack.unrendered]
    if not unrendered:
        return []
    return ["Clashes checked on the settings only (NodePorts, namespace; not host ports or objects outside the "
            "namespace), for want of rendered objects:",
            *(f"  {stack.name}: {stack.unrendered}" for stack in unrendered)]


def capacity_lines(fleet: Fleet) -> list[str]:
    """Each cluster whose nodes were read: enough for its stacks' engine pods, or the warnings; nothing when no
    node was read."""
    if not fleet.nodes:
        return []
    lines = ["", "Capacity (each cluster's engine pods on its Ready nodes, read through --kubeconfig):"]
    for cluster in fleet.nodes:
        if cluster.context is None:
            lines.append(f"  {cluster.cluster}: not checked: the kubeconfig has no context {cluster.cluster!r} (the "
                         "stacks' top-level setting `cluster` names the context to read)")
            continue
        warnings = [warning for warning in fleet.capacity if warning.cluster == cluster.cluster]
        lines.append(f"  {cluster.cluster} (context {cluster.context}, {len(cluster.nodes)} Ready nodes): "
                     + (f"{len(warnings)} warning{'s' if len(warnings) != 1 else ''}" if warnings else "enough"))
        lines += [f"    warning: {warning.message}" for warning in warnings]
    return lines


def report(fleet: Fleet) -> list[str]:
    return [*table(fleet), "", *pool_lines(fleet), *readiness_lines(fleet), "", *sizing_lines(fleet), "",
            *problem_lines(fleet.problems), *settings_only_lines(fleet), *capacity_lines(fleet)]


def _stack_json(fleet: Fleet, stack: FleetStack) -> dict[str, Any]:
    document: dict[str, Any] = {
        # What each stack's clashes were checked on is the source's, not the stack's: the text report says it.
        "stack": stack.reference, "cluster": stack.cluster, "role": stack.role, "namespace": stack.namespace,
        "backend": stack.backend,
        "compatibility_key": stack.compatibility_key,
        "engines": [
            {"role": group.role, "instances": group.instances, "pods_per_instance": group.pods_per_instance,
             "pool_bytes_per_pod": group.pool_bytes_per_pod}
            for group in stack.engines
        ],
        "pool_bytes": stack.pool_bytes,
    }
    if stack.role == CONSUMER:
        document["target_stack"] = stack.target
    if stack.role == OWNER:
        document["allowed_consumers"] = list(stack.allowed_consumers)
        document["consumers"] = [c.reference for c in fleet.consumers_of(stack.reference)]
        document["pool_size_bytes"] = fleet.pool_bytes(stack)
        if stack.node_worker_mib is not None:
            document["node_worker_mib"] = stack.node_worker_mib
    return document


def as_json(fleet: Fleet) -> dict[str, Any]:
    document: dict[str, Any] = {
        "stacks": [_stack_json(fleet, stack) for stack in fleet.stacks],
        "problems": [
            {"kind": p.kind, "owner": p.owner, "consumer": p.consumer, "message": p.message}
            for p in fleet.problems
        ],
    }
    if fleet.readiness is not None:  # only when read, as the capacity
        document["pool_readiness"] = [
            {"owner": p.owner, "cluster": p.cluster, "context": p.context, "namespace": p.namespace or None,
             "service": p.service or None, "ready": p.ready, "not_ready": p.not_ready, "workload": p.workload,
             "available": p.available, "desired": p.desired, "serves": p.serves, "unread": p.unread,
             "consumers": [c.reference for c in fleet.consumers_of(p.owner)]}
            for p in fleet.readiness
        ]
    if fleet.nodes:  # only when read: without --kubeconfig both sources give the same document
        document["capacity"] = [
            {"cluster": cluster.cluster, "context": cluster.context, "ready_nodes": len(cluster.nodes), "warnings": [
                {"stacks": list(w.stacks), "node_selector": dict(w.node_selector), "resource": w.resource,
                 "pods": w.pods, "npus": w.npus, "nodes": w.nodes, "allocatable": w.allocatable, "pending": w.pending,
                 "message": w.message}
                for w in fleet.capacity if w.cluster == cluster.cluster
            ]}
            for cluster in fleet.nodes
        ]
    return document
