"""What a real Kubernetes API server refuses beyond the OpenAPI schema, as pure functions over manifest dicts.

The strict schema check (kvpool/cli/views/manifests.py) proves shapes and types; the API server then runs its own Go
validation, decodes numbers into int32/int64, allocates NodePorts, and (the Kubernetes provider applies
server-side) merges associative lists by their keys. Each check mirrors one of those rules and names its origin;
none is stricter than the server. The settings model (kvpool/settings/service.py) refuses the values that cause these
at the field the user wrote; these checks are the safety net for whatever reaches a manifest anyway.

This module checks whole manifests (`check_manifests`): integer decoding, Services and NodePorts, ConfigMap and
Secret data, and each kind's dispatch; kvpool/cli/apiserver/names.py holds the checks of names, labels, annotations and
keys, kvpool/cli/apiserver/workloads.py those of workloads and their pods.

Origins cited:
- apimachinery: k8s.io/apimachinery/pkg/util/validation (IsQualifiedName, IsValidLabelValue,
  IsDNS1123Label/Subdomain, IsDNS1035Label, IsConfigMapKey, IsEnvVarName, IsValidPortName, IsValidPortNum) and
  pkg/api/validation (ValidateObjectMeta, ValidateAnnotations), pkg/apis/meta/v1/validation (ValidateLabels).
- core: k8s.io/kubernetes/pkg/apis/core/validation/validation.go (function named at each check).
- apps: k8s.io/kubernetes/pkg/apis/apps/validation (ValidateDeploymentSpec, ...: selector matches template).
- decode: the API server converts the applied object into its Go types (apimachinery runtime.DefaultUnstructured-
  Converter): integers keep their low bits in an int32 field, floats go through int64, fractions are refused.
- allocator: pkg/registry/core/service/portallocator (a NodePort is allocated once per cluster, range
  30000-32767 by default).
- ssa: server-side apply (the Kubernetes provider v4's default) refuses an applied list with two entries of the
  same x-kubernetes-list-map-keys (sigs.k8s.io/structured-merge-diff: "duplicate entries for key").

Version: Kubernetes 1.30 rules (RelaxedEnvironmentVariableValidation is off there: env names follow IsEnvVarName).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kvpool.cli.apiserver.names import (
    Path_,
    Problem,
    check_labels,
    check_object_meta,
    config_map_key,
    dns1123_label,
    port_name,
    show,
)
from kvpool.cli.apiserver.openapi import bundled_definitions, schema_folder
from kvpool.cli.apiserver.workloads import (
    check_claim_spec,
    check_pod_spec,
    check_workload_spec,
)
from kvpool.policies.rules.service_set import service_set_objects

INT64 = (-(2**63), 2**63 - 1)
NODE_PORT_RANGE = (30000, 32767)  # kube-apiserver --service-node-port-range default
MAX_CONFIG_SIZE = 1024 * 1024  # core: ValidateConfigMap / ValidateSecret (MaxSecretSize), data + binaryData

WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


# --- decode: integer fields fit their Go type ---------------------------------------------------------------


@dataclass
class Decoded:
    """The object as the API server holds it after converting the applied object into its Go types (`body`), the
    conversion's refusals (`problems`) and the numbers it changed, by path: (written, stored)."""

    body: Any
    problems: list[Problem] = field(default_factory=list)
    changed: dict[Path_, tuple[Any, int]] = field(default_factory=dict)


def decode_integers(body: dict[str, Any], kubernetes_version: str) -> Decoded:
    """decode: a whole number goes into an int32 or int64 field as Go converts it: an integer keeps its low bits
    (2147483648 becomes -2147483648 in an int32); a float64 (written with a point or an exponent, or an integer
    beyond int64) goes through int64 first, where one beyond int64 becomes int64's lowest value (amd64's conversion),
    which is 0 in an int32. Validation then sees the stored value. A fraction is refused while converting, and the
    server's message names no field ("cannot convert float64 to int32")."""
    bundled = bundled_definitions(schema_folder(f"{kubernetes_version}.0"))
    root = bundled.definition_of(str(body.get("apiVersion", "")), str(body.get("kind", "")))
    decoded = Decoded(body)
    if root is not None:
        definitions = bundled.reached_from(frozenset({root}))
        decoded.body = _decode(body, {"$ref": f"#/$defs/{root}"}, (), definitions, decoded)
    return decoded


def _decode(value: Any, schema: dict[str, Any], path: Path_, definitions: dict[str, Any], decoded: Decoded) -> Any:
    ref = schema.get("$ref")
    if ref:
        schema = definitions.get(ref.rsplit("/", 1)[-1], {})
    if isinstance(value, dict):
        properties = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {key: _decode(child, properties.get(key) or (extra if isinstance(extra, dict) else {}), (*path, key),
                             definitions, decoded) for key, child in value.items()}
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
        return [_decode(child, items, (*path, index), definitions, decoded) for index, child in enumerate(value)]
    go_type = schema.get("format", "")
    bits = {"int32": 32, "int64": 64}.get(go_type)
    if bits is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    lowest = -(2 ** (bits - 1))
    if isinstance(value, int) and INT64[0] <= value <= INT64[1]:
        stored = (value - lowest) % 2**bits + lowest
    elif value != int(value):
        decoded.problems.append((path, f"{value!r} is not a whole number: the API server cannot convert float64 to "
                                       f"{go_type}"))
        return value
    else:  # through int64, as amd64 converts a float: one beyond int64 is int64's lowest, 0 in an int32
        whole = int(value) if INT64[0] <= int(value) <= INT64[1] else INT64[0]
        stored = (whole - lowest) % 2**bits + lowest
    if stored != value:
        decoded.changed[path] = (value, stored)
    return stored


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
        number = port.get("port")
        if isinstance(number, int) and not 1 <= number <= 65535:
            problems.append(((*where, "port"), f"{number}: must be between 1 and 65535, inclusive"))
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
    its spec, spec); returns (object label, path, reason) for every Service after the first holding a port. The
    allocator stops at a Service's first port it cannot allocate, so each Service has at most one problem."""
    owner: dict[tuple[Any, Any], str] = {}
    problems = []
    for label, path, spec in services:
        claimed: dict[tuple[Any, Any], str] = {}
        for index, port in enumerate(spec.get("ports") or []):
            node_port = port.get("nodePort")
            if not isinstance(node_port, int) or not node_port:
                continue
            where = (*path, "ports", index, "nodePort")
            key = (port.get("protocol") or "TCP", node_port)
            holder = owner.get(key, label)
            if not NODE_PORT_RANGE[0] <= node_port <= NODE_PORT_RANGE[1]:
                reason = (f"{node_port}: provided port is not in the valid range. The range of valid ports is "
                          f"{NODE_PORT_RANGE[0]}-{NODE_PORT_RANGE[1]}")
            elif holder != label:
                reason = f"{node_port}: provided port is already allocated (to {holder})"
            else:
                claimed[key] = label
                continue
            problems.append((label, where, reason))
            break  # the allocator stops here and releases what this Service had taken
        else:
            owner.update(claimed)
    return problems


# --- core: ConfigMaps and Secrets -----------------------------------------------------------------------


def check_data(body: dict[str, Any]) -> list[Problem]:
    """core ValidateConfigMap / ValidateSecret: keys are config keys, in data or binaryData not both, and the content
    is at most 1 MiB. A key in both is named under data (the data loop finds it). A Secret's stringData is merged
    into its data before validation (core/v1 conversion), so its keys are named under data."""
    problems: list[Problem] = []
    data = dict(body.get("data") or {})
    if body.get("kind") == "Secret":
        data.update({key: str(value) for key, value in (body.get("stringData") or {}).items()})
    binary = body.get("binaryData") or {}
    for key in data:
        problem = config_map_key(str(key))
        if problem:
            problems.append((("data", key), f"{show(key)}: {problem}"))
        if key in binary:
            problems.append((("data", key), "duplicate of key present in binaryData"))
    for key in binary:
        problem = config_map_key(str(key))
        if problem:
            problems.append((("binaryData", key), f"{show(key)}: {problem}"))
    size = sum(len(str(value).encode("utf-8")) for value in data.values())
    size += sum(len(str(value)) * 3 // 4 for value in binary.values())
    if size > MAX_CONFIG_SIZE:
        problems.append(((), f"Too long: must have at most {MAX_CONFIG_SIZE} bytes (has {size})"))
    return problems


# --- one object -------------------------------------------------------------------------------------------


CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume", "StorageClass"}


def check_object(body: dict[str, Any], kubernetes_version: str) -> tuple[list[Problem], dict[str, Any]]:
    """Every rule above that applies to this object's kind, run on the object as decoded (paths from its root), and
    the decoded object. A problem at a number the decoding changed says what was written."""
    kind = body.get("kind")
    decoded = decode_integers(body, kubernetes_version)
    stored = decoded.body
    problems = check_object_meta(body, namespaced=kind not in CLUSTER_SCOPED)
    spec = stored.get("spec") if isinstance(stored.get("spec"), dict) else {}
    if kind in WORKLOAD_KINDS:
        problems += check_workload_spec(spec, ("spec",))
    elif kind == "Pod":
        problems += check_pod_spec(spec, ("spec",))
    elif kind == "Service":
        problems += check_service_spec(spec, ("spec",))
    elif kind in ("ConfigMap", "Secret"):
        problems += check_data(stored)
    elif kind == "PersistentVolumeClaim":
        problems += check_claim_spec(spec, ("spec",))
    elif kind == "NetworkPolicy":
        problems += check_labels((spec.get("podSelector") or {}).get("matchLabels"), ("spec", "podSelector", "matchLabels"))
    problems = [(path, _as_written(reason, decoded.changed.get(path))) for path, reason in problems]
    return decoded.problems + problems, stored


def _as_written(reason: str, change: tuple[Any, int] | None) -> str:
    if change is None:
        return reason
    return f"{change[0]!r} becomes {change[1]} in the API server's Go integer type; {reason}"


def check_manifests(objects: list[tuple[str, dict[str, Any]]], kubernetes_version: str) -> list[tuple[str, Path_, str]]:
    """Every object (label, body) of one preview: (label, field path, reason) per problem, cross-object NodePort
    allocation included. An InferServiceSet's embedded workloads and Services are checked at their place in it."""
    problems: list[tuple[str, Path_, str]] = []
    services: list[tuple[str, Path_, dict[str, Any]]] = []
    for label, body in objects:
        found, stored = check_object(body, kubernetes_version)
        problems += [(label, path, reason) for path, reason in found]
        if body.get("kind") == "Service":
            services.append((label, ("spec",), stored.get("spec") or {}))
        for where, embedded in service_set_objects(body):
            found, stored = check_object(embedded, kubernetes_version)
            for path, reason in found:
                if path[:1] == ("spec",):
                    path = (*where, *path[1:])
                elif path[:2] == ("metadata", "name"):
                    path = (*where[:-1], "name")
                problems.append((label, path, reason))
            if embedded["kind"] == "Service":
                services.append((label, where, stored.get("spec") or {}))
    return problems + check_node_ports(services)
