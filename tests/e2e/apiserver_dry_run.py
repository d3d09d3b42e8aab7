"""The real API server's verdict on our manifests, set beside the offline one (kvpool/cli/apiserver/checks.py).

Each object goes to kube-apiserver as the Kubernetes provider v4 applies it: a server-side apply (PATCH with
`application/apply-patch+yaml`) under the provider's field manager, here with `dryRun=All` so nothing is stored.
An InferServiceSet's open-schema kind is stored as given, so its role workloads and Services also go as the
objects its controller creates (kvpool/policies/rules/service_set.py), and their fields are read back at their place in
the set. A NodePort is allocated against the cluster's state, which a dry run does not change: the Services of
one preview that ask for NodePorts are created for real, in order, so a later one meets the allocation of an
earlier one, and deleted after their preview.

The server answers in stages, each hiding the later ones: the apply's structure (decoding, list keys), then
validation (every problem at once), then the NodePort allocator. A verdict agrees with the offline one when
both accept, or both refuse and every field the server names is one the offline checks name (or contains it),
and every offline problem of the stage the server stopped at is named by the server; offline problems of a later
stage are masked (counted, not compared), of an earlier one a disagreement.
"""

from __future__ import annotations

import hashlib
import json
import re
import urllib.error
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from kvpool.cli.apiserver.checks import CLUSTER_SCOPED
from kvpool.cli.apiserver.names import dns1123_label
from kvpool.cli.engine.property_values import format_path
from kvpool.policies.rules.service_set import service_set_objects
from tests.e2e.realengine import Cluster
from tests.e2e.views import api_path

# pulumi-kubernetes v4.25.0 (provider/pkg/provider/provider.go, fieldManagerName): "pulumi-kubernetes-" and a
# random suffix per resource, unless the pulumi.com/patchFieldManager annotation names one.
FIELD_MANAGER = "pulumi-kubernetes-i21dryrn"
APPLY = "application/apply-patch+yaml"

Path_ = tuple[Any, ...]
STAGES = ("structure", "validation", "allocation", "accepted")


def offline_stage(reason: str) -> str:
    """The server stage an offline reason belongs to (the reasons kvpool/cli/apiserver/checks.py writes)."""
    if "cannot convert" in reason or "server-side apply refuses" in reason:
        return "structure"
    if "provided port" in reason:
        return "allocation"
    return "validation"


@dataclass
class Unit:
    """One request: an object as sent, and where its fields sit in the object of the preview (`at`: a role's
    spec in an InferServiceSet; () for the object itself)."""

    label: str
    body: dict[str, Any]
    at: Path_ = ()
    node_ports: bool = False
    stage: str = "accepted"
    fields: list[Path_] = field(default_factory=list)
    message: str = ""

    def in_preview(self, path: Path_) -> Path_:
        if not self.at:
            return path
        if path[:1] == ("spec",):
            return (*self.at, *path[1:])
        if path[:2] == ("metadata", "name"):
            return (*self.at[:-1], "name")
        return (*self.at, *path)


@dataclass
class Comparison:
    label: str
    agrees: bool
    refused: bool  # by the server
    offline: list[tuple[str, str, str]]  # (stage, JSONPath, reason)
    server: list[tuple[str, str]]  # (stage, JSONPath)
    masked: int
    message: str

    def describe(self) -> str:
        return (f"{self.label}: offline {self.offline or 'accepts'}; server {self.server or 'accepts'}"
                f"{' (' + self.message[:300] + ')' if self.message else ''}")


def namespace_for(namespace: str) -> str:
    """The test's own namespace standing in for `namespace` (valid names only: an invalid one is sent as it is)."""
    return f"dr-{hashlib.sha1(namespace.encode()).hexdigest()[:12]}" if dns1123_label(namespace) is None else namespace


def units_of(label: str, body: dict[str, Any]) -> list[Unit]:
    units = [Unit(label, _relocated(body), node_ports=_has_node_ports(body))]
    namespace = (body.get("metadata") or {}).get("namespace")
    for where, embedded in service_set_objects(body):
        embedded = json.loads(json.dumps(embedded))
        if isinstance(namespace, str):
            embedded["metadata"]["namespace"] = namespace
        units.append(Unit(label, _relocated(embedded), at=where, node_ports=_has_node_ports(embedded)))
    return units


def _relocated(body: dict[str, Any]) -> dict[str, Any]:
    """The object in the test's namespaces, so the cluster's other objects (stacks up in the session) do not meet it."""
    body = json.loads(json.dumps(body))
    meta = body.setdefault("metadata", {})
    if body.get("kind") == "Namespace" and isinstance(meta.get("name"), str):
        meta["name"] = namespace_for(meta["name"])
    elif body.get("kind") not in CLUSTER_SCOPED and isinstance(meta.get("namespace"), str):
        meta["namespace"] = namespace_for(meta["namespace"])
    return body


def _has_node_ports(body: dict[str, Any]) -> bool:
    return body.get("kind") == "Service" and any(
        isinstance(port, dict) and port.get("nodePort") for port in (body.get("spec") or {}).get("ports") or []
    )


def ensure_namespaces(cluster: Cluster, units: list[Unit]) -> None:
    wanted = {unit.body["metadata"]["namespace"] for unit in units
              if isinstance(unit.body["metadata"].get("namespace"), str) and unit.body["metadata"]["namespace"].startswith("dr-")}
    for name in sorted(wanted):
        if cluster.get(f"/api/v1/namespaces/{name}") is None:
            cluster.request("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def apply(cluster: Cluster, unit: Unit, dry_run: bool = True) -> None:
    """Server-side apply of the unit; records the server's stage and the fields it names."""
    # The provider's preview of a create (pkg/await/await.go, Creation with ServerSideApply): force (patchForce is
    # true in a preview without a live object), fieldValidation=Warn, dryRun=All.
    query = f"fieldManager={FIELD_MANAGER}&force=true&fieldValidation=Warn" + ("&dryRun=All" if dry_run else "")
    try:
        cluster.request("PATCH", f"{object_path(unit.body)}?{query}", unit.body, content_type=APPLY)
    except urllib.error.HTTPError as error:
        text = error.read().decode(errors="replace")
        try:
            status = json.loads(text)
        except json.JSONDecodeError:
            status = {"message": text}
        unit.stage, unit.fields, unit.message = server_verdict(error.code, status, unit.body)
        return
    unit.stage, unit.fields, unit.message = "accepted", [], ""


def object_path(body: dict[str, Any]) -> str:
    """The object's REST path, its name percent-encoded (a name may hold any character; the server refuses it)."""
    collection = api_path({**body, "metadata": {**body["metadata"], "name": "_"}})[: -len("/_")]
    return f"{collection}/{urllib.parse.quote(str(body['metadata']['name']), safe='')}"


def delete(cluster: Cluster, unit: Unit) -> None:
    try:
        cluster.request("DELETE", object_path(unit.body))
    except urllib.error.HTTPError as error:
        if error.code != 404:
            raise


_SMD_PATH = re.compile(r"(?:^|\s|\()((?:\.[A-Za-z0-9_$-]+(?:\[[^\]]*\])*)+): ")
_GO_FIELD = re.compile(r"Go struct field [A-Za-z0-9_]+\.([A-Za-z0-9_.]+) of type")


def server_verdict(code: int, status: dict[str, Any], body: dict[str, Any]) -> tuple[str, list[Path_], str]:
    """(stage, field paths, message) of a refusal, from the Status the server answered with."""
    message = str(status.get("message", ""))
    causes = (status.get("details") or {}).get("causes") or []
    cause_fields = [parse_field(cause["field"]) for cause in causes if cause.get("field")]
    if "provided port" in message:
        return "allocation", cause_fields, message
    if code == 422 and cause_fields:
        return "validation", cause_fields, message
    if code == 404 and "/" in str((body.get("metadata") or {}).get("name")):
        # The router splits a name holding '/' into a subresource: the name cannot be applied (nor validated).
        return "validation", [("metadata", "name")], message
    fields = [smd_path(match, body) for match in _SMD_PATH.findall(message)]
    fields += [tuple(match.split(".")) for match in _GO_FIELD.findall(message)]
    return "structure", fields, message


def parse_field(text: str) -> Path_:
    """A field.Path of the API server's validation (`spec.ports[0].name`, `data[a.b]`) as path steps."""
    steps: list[Any] = []
    for name, bracket in re.findall(r"([^.\[\]]+)|\[([^\]]*)\]", text):
        if name:
            steps.append(name)
        else:
            steps.append(int(bracket) if bracket.isdigit() else bracket)
    return tuple(steps)


def smd_path(text: str, body: dict[str, Any]) -> Path_:
    """A structured-merge-diff path (`.spec.containers[name="c"].env`) as path steps, list keys resolved to the
    index of the entry in `body` they select."""
    steps: list[Any] = []
    holder: Any = body
    for name, selector in re.findall(r"\.([^.\[]+)|\[([^\]]*)\]", text):
        if name:
            steps.append(name)
            holder = holder.get(name) if isinstance(holder, dict) else None
            continue
        keys = dict(re.findall(r'([A-Za-z]+)=("(?:[^"\\]|\\.)*"|[^,]+)', selector))
        wanted = {key: json.loads(value) if value.startswith('"') else _number(value) for key, value in keys.items()}
        index = next((i for i, entry in enumerate(holder or []) if isinstance(entry, dict)
                      and all(entry.get(k) == v for k, v in wanted.items())), None)
        if index is None:
            break
        steps.append(index)
        holder = holder[index]
    return tuple(steps)


def _number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        return text


def names(server: Path_, offline: Path_) -> bool:
    """The server's field is the offline one or contains it (or names a key of it). A decoding error names the
    field without list indices."""
    if any(isinstance(step, int) for step in server):
        return offline[: len(server)] == server or server[: len(offline)] == offline
    plain = tuple(step for step in offline if not isinstance(step, int))
    return plain[: len(server)] == server or server[: len(plain)] == plain


def compare(label: str, units: list[Unit], offline_problems: list[tuple[str, Path_, str]]) -> Comparison:
    """The server's verdict on one object of a preview (its units) beside the offline problems of the preview."""
    offline = [(offline_stage(reason), path, reason) for problem_label, path, reason in offline_problems
               if problem_label == label]
    server = [(unit.stage, unit.in_preview(field_path)) for unit in units for field_path in unit.fields]
    refused = [unit for unit in units if unit.stage != "accepted"]
    agrees = bool(offline) == bool(refused)
    agrees = agrees and all(any(names(path, o_path) for _, o_path, _ in offline) for _, path in server)
    for unit in refused:
        if not unit.fields and not _same_conversion(unit.message, offline):
            agrees = False  # a refusal naming no field and no conversion the offline checks name: read its message
    masked = 0
    for problem in offline:
        stage, path, _ = problem
        unit = _unit_at(units, path)
        order, server_order = STAGES.index(stage), STAGES.index(unit.stage)
        named = any(names(s_path, path) for s_stage, s_path in server if s_stage == stage)
        if order > server_order:
            masked += 1
        elif order < server_order or not (named or _same_conversion(unit.message, [problem])):
            agrees = False
    message = " | ".join(unit.message for unit in refused)
    return Comparison(label, agrees, bool(refused), [(s, format_path(p), r) for s, p, r in offline],
                      [(s, format_path(p)) for s, p in server], masked, message)


_CONVERSION = re.compile(r"cannot convert \w+ to \w+")


def _same_conversion(message: str, offline: list[tuple[str, Path_, str]]) -> bool:
    """The server refused converting the object into its Go type ("cannot convert float64 to int32", naming no
    field), and the offline checks refuse the same conversion at the structure stage."""
    conversion = _CONVERSION.search(message)
    return bool(conversion) and any(stage == "structure" and conversion.group(0) in reason
                                    for stage, _, reason in offline)


def _unit_at(units: list[Unit], path: Path_) -> Unit:
    """The unit whose fields hold `path`: the deepest role of a set containing it, else the object itself."""
    inside = [unit for unit in units if unit.at and (path[: len(unit.at)] == unit.at or (
        path[: len(unit.at) - 1] == unit.at[:-1] and path[len(unit.at) - 1:] == ("name",)))]
    return max(inside, key=lambda unit: len(unit.at)) if inside else units[0]
