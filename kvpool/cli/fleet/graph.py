"""The fleet as a picture: Graphviz (Debian's `graphviz` package, `dot`) through the `graphviz` Python binding.

A box per owner (its pool: backend, namespace, size, allowed consumers), an ellipse per consumer, a plain ellipse
per stack without a pool, a dashed box for a referenced stack that does not exist; an edge from each consumer to
the store it reads, red and labelled with the problem's kinds when the pair has problems; a red dashed edge
between two owners of one namespace. Node ids are the stacks' names, so the SVG's <title>s name every stack and
every edge (`service-b->service-a`).
"""

from __future__ import annotations

from pathlib import Path

import graphviz

from kvpool.cli.fleet.clashes import SHARED_NAMESPACE
from kvpool.cli.fleet.model import (
    CONSUMER,
    NO_POOL,
    OWNER,
    Fleet,
    FleetStack,
    stack_name,
)
from kvpool.cli.fleet.report import size
from kvpool.internal.written_files import write_file
from kvpool.errors import KvpoolError

FORMATS = ("svg", "png")
PROBLEM_COLOUR = "#c0392b"


class PictureError(KvpoolError):
    """The picture cannot be drawn: a file name without .svg or .png, or no Graphviz installed."""


def _label(fleet: Fleet, stack: FleetStack) -> str:
    prefill, decode = stack.engines
    lines = [stack.name, f"namespace {stack.namespace}"]
    if stack.role == OWNER and not stack.uses_pool:
        lines.append(f"{stack.backend} store holds nothing: no store connector")
    elif stack.node_worker_mib is not None:
        lines.append(f"{stack.backend} pool {size(stack.node_worker_mib * 2**20)} per node worker")
    elif stack.role == OWNER:
        lines.append(f"{stack.backend} pool {size(fleet.pool_bytes(stack))}")
    if stack.role == OWNER:
        lines.append(f"allows: {', '.join(stack.allowed_consumers) or 'no other namespace'}")
    lines.append(f"key {stack.compatibility_key}")
    pods = ", ".join(f"{group.pods} {group.role} pod{'s' if group.pods != 1 else ''}" for group in (prefill, decode))
    lines.append(f"{pods}: {size(stack.pool_bytes)} of pool memory")
    return "\n".join(lines)


def graph(fleet: Fleet) -> graphviz.Digraph:
    dot = graphviz.Digraph("fleet", graph_attr={"rankdir": "LR", "fontname": "Helvetica"},
                           node_attr={"fontname": "Helvetica", "fontsize": "10"},
                           edge_attr={"fontname": "Helvetica", "fontsize": "9"})
    names = {stack.reference for stack in fleet.stacks}
    for stack in fleet.stacks:
        shape = {OWNER: "box", CONSUMER: "ellipse", NO_POOL: "ellipse"}[stack.role]
        style = "rounded,bold" if stack.role == OWNER else "solid"
        dot.node(stack.name, _label(fleet, stack), shape=shape, style=style)
    for missing in sorted({s.target for s in fleet.stacks if s.target and s.target not in names}):
        dot.node(stack_name(missing), f"{stack_name(missing)}\n(no such stack)", shape="box", style="dashed",
                 color=PROBLEM_COLOUR)
    for consumer in (stack for stack in fleet.stacks if stack.target):
        kinds = sorted({p.kind for p in fleet.problems
                        if p.consumer == consumer.reference and p.owner == consumer.target})
        colour = PROBLEM_COLOUR if kinds else "black"
        dot.edge(consumer.name, stack_name(consumer.target), label=", ".join(kinds) or "reads", color=colour,
                 fontcolor=colour)
    for problem in (p for p in fleet.problems if p.kind == SHARED_NAMESPACE):
        dot.edge(stack_name(problem.consumer), stack_name(problem.owner), label="one namespace", dir="none",
                 style="dashed", color=PROBLEM_COLOUR, fontcolor=PROBLEM_COLOUR)
    return dot


def render(fleet: Fleet, path: Path) -> Path:
    """Write the picture to `path`, in the format its suffix names (.svg or .png)."""
    file_format = path.suffix.lstrip(".")
    if file_format not in FORMATS:
        raise PictureError(f"{path}: name the picture's file .svg or .png")
    try:
        picture = graph(fleet).pipe(format=file_format)
    except graphviz.ExecutableNotFound:
        raise PictureError("Graphviz's `dot` is not on PATH: install Debian's package (apt-get install graphviz)") from None
    write_file(path, picture, path.parent)
    return path
