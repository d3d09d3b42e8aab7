"""What a real Kubernetes API server refuses beyond the OpenAPI schema, as pure functions over manifest dicts.

The strict schema check (kvpool/views/manifests.py) proves shapes and types; the API server then runs its own Go
validation, decodes numbers into int32/int64, allocates NodePorts, and (the Kubernetes provider applies
server-side) merges associative lists by their keys. Each check mirrors one of those rules and names its origin;
none is stricter than the server. The settings model (components/settings.py) refuses the values that cause these
at the field the user wrote; these checks are the safety net for whatever reaches a manifest anyway.

This module checks whole manifests (`check_manifests`): integer decoding, Services and NodePorts, ConfigMap and
Secret data, and each kind's dispatch; kvpool/apiserver/names.py holds the checks of names, labels, annotations and
keys, kvpool/apiserver/workloads.py those of workloads and their pods.

Origins cited:
- apimachinery: k8s.io/apimachinery/pkg/util/validation (IsQualifiedName, IsValidLabelValue,
  IsDNS1123Label/Subdomain, IsDNS1035Label, IsConfigMapKey, IsEnvVarName, IsValidPortName, IsValidPortNum) and
  pkg/api/validation (ValidateObjectMeta, ValidateAnnotations), pkg/apis/meta/v1/validation (ValidateLabels).
- core: k8s.io/kubernetes/pkg/apis/core/validation/validation.go (function named at each check).
- apps: k8s.io/kubernetes/pkg/apis/apps/validation (ValidateDeploymentSpec, ...: selector matches template).
- decode: the API server decodes JSON numbers into the Go field types (int32 fields: replicas, ports, ...).
- allocator: pkg/registry/core/service/portallocator (a NodePort is allocated once per cluster, range
  30000-32767 by default).
- ssa: server-side apply (the Kubernetes provider v4's default) refuses an applied list with two entries of the
  same x-kubernetes-list-map-keys (sigs.k8s.io/structured-merge-diff: "duplicate entries for key").

Version: Kubernetes 1.30 rules (RelaxedEnvironmentVariableValidation is off there: env names follow IsEnvVarName).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from kvpool.apiserver.names import (
    Path_,
    Problem,
    check_labels,
    check_object_meta,
    config_map_key,
    dns1123_label,
    port_name,
    show,
)
from kvpool.apiserver.workloads import (
    check_claim_spec,
    check_pod_spec,
    check_workload_spec,
)
from policies.rules.service_set import service_set_objects

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
NODE_PORT_RANGE = (30000, 32767)  # kube-apiserver --service-node-port-range default
MAX_CONFIG_SIZE = 1024 * 1024  # core: ValidateConfigMap / ValidateSecret (MaxSecretSize), data + binaryData

WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


# --- decode: integer fields fit their Go type ---------------------------------------------------------------


@lru_cache(maxsize=4)
def _definitions(schema_dir: str) -> dict[str, Any]:
    return json.loads((Path(schema_dir) / "_definitions.json").read_text(encoding="utf-8"))["$defs"]


def _schema_dir(kubernetes_version: str) -> str:
    import kubernetes_validate

    return str(Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{kubernetes_version}.0-local-strict")


def _definition_for(definitions: dict[str, Any], api_version: str, kind: str) -> str | None:
    group, _, version = api_version.rpartition("/")
    for name, definition in definitions.items():
        for gvk in definition.get("x-kubernetes-group-version-kind", []) if isinstance(definition, dict) else []:
            if gvk.get("group", "") == group and gvk.get("version") == version and gvk.get("kind") == kind:
                return name
    return None


def check_integer_ranges(body: dict[str, Any], kubernetes_version: str) -> list[Problem]:
    """decode: every field the schema declares int32 or int64 holds a number in that range; the API server cannot
    decode 1e20 into `replicas` (the JSON schema has the format but does not enforce it)."""
    definitions = _definitions(_schema_dir(kubernetes_version))
    root = _definition_for(definitions, str(body.get("apiVersion", "")), str(body.get("kind", "")))
    if root is None:
        return []
    return list(_walk_integers(body, {"$ref": f"#/$defs/{root}"}, (), definitions, 0))


def _walk_integers(value: Any, schema: dict[str, Any], path: Path_, definitions: dict[str, Any], depth: int
                   ) -> Iterator[Problem]:
    if depth > 64:
        return
    ref = schema.get("$ref")
    if ref:
        schema = definitions.get(ref.rsplit("/", 1)[-1], {})
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        bounds = {"int32": INT32, "int64": INT64}.get(schema.get("format", ""))
        if bounds and not (isinstance(value, int) and bounds[0] <= value <= bounds[1]):
            yield path, f"{value!r} is not an {schema['format']} (the API server cannot decode it)"
        return
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        for key, child in value.items():
            child_schema = properties.get(key) or (extra if isinstance(extra, dict) else None)
            if child_schema:
                yield from _walk_integers(child, child_schema, (*path, key), definitions, depth + 1)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, child in enumerate(value):
            yield from _walk_integers(child, schema["items"], (*path, index), definitions, depth + 1)


# --- core: Services ---------------------------------------------------------------------------------------


def check_service_spec(spec: dict[str, Any], path: Path_) -> list[Problem]:
    """core ValidateService: port names unique (required when more than one), (protocol, port) unique, nodePorts
    unique within the Service and only on NodePort/LoadBalancer Services; targetPort a port number or name."""
    problems: list[Problem] = []
    ports = spec.get("ports") or []
    names: set[str] = set()
    keys: set[tuple[Any, Any]] = set()
    node_ports: set[tuple[Any, Any]] = set()
    node_port_types = ("NodePort", "LoadBalancer")
    for index, port in enumerate(ports):
        where = (*path, "ports", index)
        name = port.get("name")
        if len(ports) > 1 and not name:
            problems.append(((*where, "name"), "Required value"))
        elif name:
            problem = dns1123_label(str(name))
            if problem:
                problems.append(((*where, "name"), f"{show(name)}: {problem}"))
            elif name in names:
                problems.append(((*where, "name"), f"Duplicate value: {show(name)}"))
            names.add(name)
        protocol = port.get("protocol") or "TCP"
        key = (protocol, port.get("port"))
        if key in keys:
            problems.append((where, f"Duplicate value: {{Protocol:{protocol} Port:{port.get('port')}}}"))
        keys.add(key)
        target = port.get("targetPort")
        if isinstance(target, int) and not 1 <= target <= 65535:
            problems.append(((*where, "targetPort"), f"{target}: must be between 1 and 65535, inclusive"))
        elif isinstance(target, str) and port_name(target):
            problems.append(((*where, "targetPort"), f"{show(target)}: {port_name(target)}"))
        node_port = port.get("nodePort")
        if node_port:
            if spec.get("type") not in node_port_types:
                problems.append(((*where, "nodePort"), f"may not be used when `type` is '{spec.get('type', 'ClusterIP')}'"))
            if (protocol, node_port) in node_ports:
                problems.append(((*where, "nodePort"), f"Duplicate value: {node_port}"))
            node_ports.add((protocol, node_port))
    return problems


def check_node_ports(services: list[tuple[str, Path_, dict[str, Any]]]) -> list[tuple[str, Path_, str]]:
    """allocator: each NodePort once in the cluster, inside the default range. `services`: (object label, path of
    its spec, spec); returns (object label, path, reason) for every Service after the first holding a port."""
    owner: dict[tuple[Any, Any], str] = {}
    problems = []
    for label, path, spec in services:
        for index, port in enumerate(spec.get("ports") or []):
            node_port = port.get("nodePort")
            if not isinstance(node_port, int) or not node_port:
                continue
            where = (*path, "ports", index, "nodePort")
            if not NODE_PORT_RANGE[0] <= node_port <= NODE_PORT_RANGE[1]:
                problems.append((label, where, f"{node_port}: provided port is not in the valid range. The range of "
                                 f"valid ports is {NODE_PORT_RANGE[0]}-{NODE_PORT_RANGE[1]}"))
            key = (port.get("protocol") or "TCP", node_port)
            if key in owner and owner[key] != label:
                problems.append((label, where, f"{node_port}: provided port is already allocated (to {owner[key]})"))
            owner.setdefault(key, label)
    return problems


# --- core: ConfigMaps and Secrets -----------------------------------------------------------------------


def check_data(body: dict[str, Any]) -> list[Problem]:
    """core ValidateConfigMap / ValidateSecret: keys are config keys, in data or binaryData (stringData for a
    Secret) not both, and the content is at most 1 MiB."""
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    size = 0
    for field in ("data", "binaryData", "stringData"):
        for key, value in (body.get(field) or {}).items():
            problem = config_map_key(str(key))
            if problem:
                problems.append(((field, key), f"{show(key)}: {problem}"))
            if key in seen and {seen[key], field} == {"data", "binaryData"}:
                problems.append(((field, key), f"duplicate of key present in {seen[key]}"))
            seen.setdefault(key, field)
            size += len(str(value).encode("utf-8")) if field != "binaryData" else len(str(value)) * 3 // 4
    if size > MAX_CONFIG_SIZE:
        problems.append(((), f"Too long: must have at most {MAX_CONFIG_SIZE} bytes (has {size})"))
    return problems



# --- one object -------------------------------------------------------------------------------------------


CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}


def check_object(body: dict[str, Any], kubernetes_version: str) -> list[Problem]:
    """Every rule above that applies to this object's kind; paths are from the object's root."""
    kind = body.get("kind")
    problems = check_object_meta(body, namespaced=kind not in CLUSTER_SCOPED)
    problems += check_integer_ranges(body, kubernetes_version)
    spec = body.get("spec") if isinstance(body.get("spec"), dict) else {}
    if kind in WORKLOAD_KINDS:
        problems += check_workload_spec(spec, ("spec",))
    elif kind == "Pod":
        problems += check_pod_spec(spec, ("spec",))
    elif kind == "Service":
        problems += check_service_spec(spec, ("spec",))
    elif kind in ("ConfigMap", "Secret"):
        problems += check_data(body)
    elif kind == "PersistentVolumeClaim":
        problems += check_claim_spec(spec, ("spec",))
    elif kind == "NetworkPolicy":
        problems += check_labels((spec.get("podSelector") or {}).get("matchLabels"), ("spec", "podSelector", "matchLabels"))
    return problems


def check_manifests(objects: list[tuple[str, dict[str, Any]]], kubernetes_version: str) -> list[tuple[str, Path_, str]]:
    """Every object (label, body) of one preview: (label, field path, reason) per problem, cross-object NodePort
    allocation included. An InferServiceSet's embedded workloads and Services are checked at their place in it."""
    problems: list[tuple[str, Path_, str]] = []
    services: list[tuple[str, Path_, dict[str, Any]]] = []
    for label, body in objects:
        problems += [(label, path, reason) for path, reason in check_object(body, kubernetes_version)]
        if body.get("kind") == "Service":
            services.append((label, ("spec",), body.get("spec") or {}))
        for where, embedded in service_set_objects(body):
            for path, reason in check_object(embedded, kubernetes_version):
                if path[:1] == ("spec",):
                    path = (*where, *path[1:])
                elif path[:2] == ("metadata", "name"):
                    path = (*where[:-1], "name")
                problems.append((label, path, reason))
            if embedded["kind"] == "Service":
                services.append((label, where, embedded["spec"]))
    return problems + check_node_ports(services)

