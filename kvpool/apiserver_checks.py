"""What a real Kubernetes API server refuses beyond the OpenAPI schema, as pure functions over manifest dicts.

The strict schema check (kvpool/manifests.py) proves shapes and types; the API server then runs its own Go
validation, decodes numbers into int32/int64, allocates NodePorts, and (the Kubernetes provider applies
server-side) merges associative lists by their keys. Each check below mirrors one of those rules and names its
origin; none is stricter than the server. The settings model (components/settings.py) refuses the values that
cause these at the field the user wrote; this module is the safety net for whatever reaches a manifest anyway.

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
import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

Path_ = tuple[Any, ...]
Problem = tuple[Path_, str]

INT32 = (-(2**31), 2**31 - 1)
INT64 = (-(2**63), 2**63 - 1)
NODE_PORT_RANGE = (30000, 32767)  # kube-apiserver --service-node-port-range default
TOTAL_ANNOTATION_SIZE = 256 * 1024  # apimachinery ValidateAnnotations: TotalAnnotationSizeLimitB
MAX_CONFIG_SIZE = 1024 * 1024  # core: ValidateConfigMap / ValidateSecret (MaxSecretSize), data + binaryData

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
_PORT_NAME = re.compile(r"^[-a-z0-9]+$")
_QUANTITY = re.compile(
    r"^(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Decimal("1e-9"), "u": Decimal("1e-6"), "m": Decimal("1e-3"), "": Decimal(1), "k": Decimal(10**3),
            "M": Decimal(10**6), "G": Decimal(10**9), "T": Decimal(10**12), "P": Decimal(10**15), "E": Decimal(10**18)}
# core: IsStandardContainerResourceName / isNativeResource: these may be overcommitted; any other (extended)
# resource, e.g. huawei.com/Ascend910, must have requests equal to limits (validateResourceRequirements).
_OVERCOMMITTABLE = {"cpu", "memory", "ephemeral-storage"}

WORKLOAD_KINDS = {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}


# --- apimachinery: names, labels, annotations -------------------------------------------------------------


def dns1123_label(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _DNS1123_LABEL.match(value):
        return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must " \
               "start and end with an alphanumeric character"
    return None


def dns1123_subdomain(value: str) -> str | None:
    if len(value) > 253:
        return f"must be no more than 253 characters (is {len(value)})"
    if not _DNS1123_SUBDOMAIN.match(value):
        return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and " \
               "must start and end with an alphanumeric character"
    return None


def dns1035_label(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _DNS1035_LABEL.match(value):
        return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an " \
               "alphabetic character, and end with an alphanumeric character"
    return None


def qualified_name(value: str) -> str | None:
    """apimachinery IsQualifiedName: [prefix/]name, prefix a DNS-1123 subdomain, name <= 63 characters."""
    prefix, slash, name = value.rpartition("/")
    if slash and value.count("/") > 1:
        return "a qualified name must consist of an optional DNS subdomain prefix and '/' and a name"
    if slash:
        if not prefix:
            return "prefix part must be non-empty"
        problem = dns1123_subdomain(prefix)
        if problem:
            return f"prefix part {problem}"
    if not name:
        return "name part must be non-empty"
    if len(name) > 63:
        return f"name part must be no more than 63 characters (is {len(name)})"
    if not _QUALIFIED_NAME.match(name):
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
               "an alphanumeric character"
    return None


def label_value(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _LABEL_VALUE.match(value):
        return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " \
               "and must start and end with an alphanumeric character"
    return None


def check_labels(labels: Any, path: Path_) -> list[Problem]:
    """apimachinery ValidateLabels (metadata.labels, a pod's nodeSelector, a selector's matchLabels)."""
    problems: list[Problem] = []
    for key, value in (labels or {}).items():
        problem = qualified_name(str(key))
        if problem:
            problems.append(((*path, key), f"label key {_show(key)}: {problem}"))
        problem = label_value(value) if isinstance(value, str) else "must be a string"
        if problem:
            problems.append(((*path, key), f"label value {_show(value)}: {problem}"))
    return problems


def check_annotations(annotations: Any, path: Path_) -> list[Problem]:
    """apimachinery ValidateAnnotations: keys are qualified names (checked lower-cased), total size <= 256 KiB."""
    problems: list[Problem] = []
    total = 0
    for key, value in (annotations or {}).items():
        problem = qualified_name(str(key).lower())
        if problem:
            problems.append(((*path, key), f"annotation key {_show(key)}: {problem}"))
        total += len(str(key)) + len(str(value))
    if total > TOTAL_ANNOTATION_SIZE:
        problems.append((path, f"annotations total {total} bytes, must have at most {TOTAL_ANNOTATION_SIZE} bytes"))
    return problems


# Names per kind (the REST strategy's NameFunc): core ValidateNamespaceName (DNS label), ValidateServiceName
# (DNS-1035 label), rbac ValidateRBACName (path segment); everything else here is a DNS-1123 subdomain.
def _path_segment(value: str) -> str | None:
    if value in (".", ".."):
        return f"may not be {value!r}"
    if "/" in value or "%" in value:
        return "may not contain '/' or '%'"
    return None


_NAME_RULES = {
    "Namespace": dns1123_label,
    "Service": dns1035_label,
    "Role": _path_segment, "ClusterRole": _path_segment, "RoleBinding": _path_segment,
    "ClusterRoleBinding": _path_segment,
}


def check_object_meta(body: dict[str, Any], namespaced: bool = True) -> list[Problem]:
    """apimachinery ValidateObjectMeta: name, namespace, labels, annotations."""
    meta = body.get("metadata") or {}
    problems: list[Problem] = []
    name = meta.get("name")
    if isinstance(name, str):
        problem = _NAME_RULES.get(str(body.get("kind")), dns1123_subdomain)(name)
        if problem:
            problems.append((("metadata", "name"), f"{_show(name)}: {problem}"))
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespaced:
        problem = dns1123_label(namespace)
        if problem:
            problems.append((("metadata", "namespace"), f"{_show(namespace)}: {problem}"))
    problems += check_labels(meta.get("labels"), ("metadata", "labels"))
    problems += check_annotations(meta.get("annotations"), ("metadata", "annotations"))
    return problems


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


# --- core: pods -------------------------------------------------------------------------------------------


def parse_quantity(text: Any) -> Decimal | None:
    """resource.ParseQuantity's value, or None when it is no quantity."""
    match = _QUANTITY.match(str(text))
    if not match:
        return None
    try:
        number = Decimal(match["number"])
    except InvalidOperation:
        return None
    suffix = match["suffix"] or ""
    if suffix in _BINARY:
        return number * _BINARY[suffix]
    if suffix[:1] in ("e", "E"):
        return number.scaleb(int(suffix[1:]))
    return number * _DECIMAL[suffix]


def _check_path_no_backsteps(value: Any, path: Path_) -> list[Problem]:
    """core validatePathNoBacksteps (hostPath.path): no '..' element."""
    if isinstance(value, str) and ".." in value.replace("\\", "/").split("/"):
        return [(path, f"{_show(value)}: must not contain '..'")]
    return []


def check_pod_template(template: dict[str, Any], path: Path_, claim_volumes: tuple[str, ...] = ()) -> list[Problem]:
    """A pod template: its metadata (core ValidatePodTemplateSpec) and its spec (core ValidatePodSpec).
    `claim_volumes`: a StatefulSet's volumeClaimTemplates names, which its pods get as volumes."""
    meta = template.get("metadata") or {}
    problems = check_labels(meta.get("labels"), (*path, "metadata", "labels"))
    problems += check_annotations(meta.get("annotations"), (*path, "metadata", "annotations"))
    return problems + check_pod_spec(template.get("spec") or {}, (*path, "spec"), claim_volumes)


def check_pod_spec(spec: dict[str, Any], path: Path_, claim_volumes: tuple[str, ...] = ()) -> list[Problem]:
    problems: list[Problem] = []
    problems += check_labels(spec.get("nodeSelector"), (*path, "nodeSelector"))  # core ValidatePodSpec
    volumes: set[str] = set()
    for index, volume in enumerate(spec.get("volumes") or []):
        where = (*path, "volumes", index)
        name = volume.get("name")
        if name in volumes:  # core ValidateVolumes
            problems.append(((*where, "name"), f"Duplicate value: {_show(name)}"))
        volumes.add(name)
        if isinstance(volume.get("hostPath"), dict):  # core validateHostPathVolumeSource
            problems += _check_path_no_backsteps(volume["hostPath"].get("path"), (*where, "hostPath", "path"))
    host_network = bool(spec.get("hostNetwork"))
    host_ports: set[tuple[Any, Any, Any]] = set()
    names: set[str] = set()
    for group in ("initContainers", "containers"):
        for index, container in enumerate(spec.get(group) or []):
            where = (*path, group, index)
            name = container.get("name")
            if name in names:  # core validateContainers / validateInitContainers
                problems.append(((*where, "name"), f"Duplicate value: {_show(name)}"))
            names.add(name)
            problems += _check_container(container, where, volumes | set(claim_volumes), host_network, host_ports)
    return problems


def _check_container(container: dict[str, Any], path: Path_, volumes: set[str], host_network: bool,
                     host_ports: set[tuple[Any, Any, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    env_names: set[str] = set()
    for index, entry in enumerate(container.get("env") or []):
        name = entry.get("name")
        if isinstance(name, str) and not _ENV_VAR_NAME.match(name):  # core ValidateEnv: IsEnvVarName
            problems.append(((*path, "env", index, "name"), f"{_show(name)}: a valid environment variable name must "
                             "consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"))
        if name in env_names:  # ssa: env is a map keyed by name
            problems.append(((*path, "env", index, "name"), f"duplicate entries for key [name={_show(name)}]: "
                             "server-side apply refuses two env entries of one name"))
        env_names.add(name)
    port_names: set[str] = set()
    port_keys: set[tuple[Any, Any]] = set()
    for index, port in enumerate(container.get("ports") or []):
        where = (*path, "ports", index)
        name = port.get("name")
        if name:  # core validateContainerPorts
            problem = port_name(str(name))
            if problem:
                problems.append(((*where, "name"), f"{_show(name)}: {problem}"))
            elif name in port_names:
                problems.append(((*where, "name"), f"Duplicate value: {_show(name)}"))
            port_names.add(name)
        number, protocol = port.get("containerPort"), port.get("protocol") or "TCP"
        if isinstance(number, int) and not 1 <= number <= 65535:
            problems.append(((*where, "containerPort"), f"{number}: must be between 1 and 65535, inclusive"))
        if (number, protocol) in port_keys:  # ssa: ports is a map keyed by (containerPort, protocol)
            problems.append(((*where, "containerPort"), f"duplicate entries for key [containerPort={number},"
                             f"protocol={protocol}]: server-side apply refuses two ports of one number"))
        port_keys.add((number, protocol))
        # core: a host-network pod's hostPort defaults to its containerPort (SetDefaults_PodSpec) and must equal it;
        # AccumulateUniqueHostPorts refuses one host port twice in a pod.
        host_port = port.get("hostPort") or (number if host_network else None)
        if host_network and port.get("hostPort") not in (None, number):
            problems.append(((*where, "hostPort"), "must match `containerPort` when `hostNetwork` is true"))
        if host_port:
            key = (host_port, protocol, port.get("hostIP") or "")
            if key in host_ports:
                problems.append(((*where, "hostPort"), f"Duplicate value: \"{host_port}/{protocol}\""))
            host_ports.add(key)
    mount_paths: set[str] = set()
    for index, mount in enumerate(container.get("volumeMounts") or []):
        where = (*path, "volumeMounts", index)
        if mount.get("name") not in volumes:  # core ValidateVolumeMounts
            problems.append(((*where, "name"), f"Not found: {_show(mount.get('name'))}"))
        mount_path = mount.get("mountPath")
        if mount_path in mount_paths:
            problems.append(((*where, "mountPath"), f"{_show(mount_path)}: must be unique"))
        mount_paths.add(mount_path)
    problems += check_resources(container.get("resources") or {}, (*path, "resources"))
    return problems


def port_name(name: str) -> str | None:
    """apimachinery IsValidPortName (IANA_SVC_NAME)."""
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _PORT_NAME.match(name):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not re.search("[a-z]", name):
        return "must contain at least one letter (a-z)"
    if "--" in name:
        return "must not contain consecutive hyphens"
    if name.startswith("-") or name.endswith("-"):
        return "must not begin or end with a hyphen"
    return None


def check_resources(resources: dict[str, Any], path: Path_) -> list[Problem]:
    """core ValidateResourceRequirements: a request is at most its limit; extended resources (NPUs) are whole
    numbers with request == limit, and need a limit."""
    problems: list[Problem] = []
    limits, requests = resources.get("limits") or {}, resources.get("requests") or {}
    for group, amounts in (("limits", limits), ("requests", requests)):
        for name, amount in amounts.items():
            value = parse_quantity(amount)
            if value is None:
                continue  # the schema check reports a malformed quantity
            if value < 0:
                problems.append(((*path, group, name), f"{_show(amount)}: must be greater than or equal to 0"))
            if name not in _OVERCOMMITTABLE and "/" in name and value != value.to_integral_value():
                problems.append(((*path, group, name), f"{_show(amount)}: must be an integer"))
    for name, amount in requests.items():
        request, limit = parse_quantity(amount), parse_quantity(limits.get(name)) if name in limits else None
        if request is None:
            continue
        overcommittable = name in _OVERCOMMITTABLE or "/" not in name
        if limit is not None and overcommittable and request > limit:
            problems.append(((*path, "requests", name), f"{_show(amount)}: must be less than or equal to {name} "
                             f"limit of {limits[name]}"))
        elif limit is not None and not overcommittable and request != limit:
            problems.append(((*path, "requests", name), f"{_show(amount)}: must be equal to {name} limit of "
                             f"{limits[name]}"))
        elif name not in limits and not overcommittable:
            problems.append(((*path, "limits"), f"Limit must be set for non overcommitable resources ({name})"))
    return problems


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
                problems.append(((*where, "name"), f"{_show(name)}: {problem}"))
            elif name in names:
                problems.append(((*where, "name"), f"Duplicate value: {_show(name)}"))
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
            problems.append(((*where, "targetPort"), f"{_show(target)}: {port_name(target)}"))
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


# --- core: ConfigMaps, Secrets, PVCs ---------------------------------------------------------------------


def config_map_key(key: str) -> str | None:
    """apimachinery IsConfigMapKey (also Secret keys)."""
    if len(key) > 253:
        return "must be no more than 253 characters"
    if not _CONFIG_MAP_KEY.match(key):
        return "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
    if key in (".", ".."):
        return f"must not be {key!r}"
    if key.startswith(".."):
        return "must not start with '..'"
    return None


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
                problems.append(((field, key), f"{_show(key)}: {problem}"))
            if key in seen and {seen[key], field} == {"data", "binaryData"}:
                problems.append(((field, key), f"duplicate of key present in {seen[key]}"))
            seen.setdefault(key, field)
            size += len(str(value).encode("utf-8")) if field != "binaryData" else len(str(value)) * 3 // 4
    if size > MAX_CONFIG_SIZE:
        problems.append(((), f"Too long: must have at most {MAX_CONFIG_SIZE} bytes (has {size})"))
    return problems


def check_claim_spec(spec: dict[str, Any], path: Path_) -> list[Problem]:
    """core ValidatePersistentVolumeClaimSpec: storageClassName is a DNS-1123 subdomain (ValidateClassName)."""
    name = spec.get("storageClassName")
    if isinstance(name, str) and name:
        problem = dns1123_subdomain(name)
        if problem:
            return [((*path, "storageClassName"), f"{_show(name)}: {problem}")]
    return []


# --- one object -------------------------------------------------------------------------------------------


def check_workload_spec(spec: dict[str, Any], path: Path_) -> list[Problem]:
    """apps ValidateDeploymentSpec & co.: the selector's labels are valid and select the template's labels; the
    template is a valid pod template; a StatefulSet's claim templates are valid claims."""
    problems: list[Problem] = []
    selector = (spec.get("selector") or {}).get("matchLabels") or {}
    problems += check_labels(selector, (*path, "selector", "matchLabels"))
    template = spec.get("template") or {}
    labels = (template.get("metadata") or {}).get("labels") or {}
    if selector and any(labels.get(key) != value for key, value in selector.items()):
        problems.append(((*path, "template", "metadata", "labels"), "`selector` does not match template `labels`"))
    claims = spec.get("volumeClaimTemplates") or []
    names = tuple(str((claim.get("metadata") or {}).get("name")) for claim in claims)
    problems += check_pod_template(template, (*path, "template"), names)
    for index, claim in enumerate(claims):
        problems += check_claim_spec(claim.get("spec") or {}, (*path, "volumeClaimTemplates", index, "spec"))
    return problems


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


def embedded_objects(body: dict[str, Any]) -> list[tuple[Path_, dict[str, Any]]]:
    """The workloads and Services an InferServiceSet's roles describe (its controller creates them, and the API
    server validates them then): (path in the set, object with that role's name)."""
    if body.get("kind") != "InferServiceSet":
        return []
    embedded = []
    for index, role in enumerate(((body.get("spec") or {}).get("template") or {}).get("roles") or []):
        where = ("spec", "template", "roles", index)
        workload = role.get("workload") or {}
        embedded.append(((*where, "spec"), {
            "apiVersion": workload.get("apiVersion", "apps/v1"), "kind": workload.get("kind", "Deployment"),
            "metadata": {"name": role.get("name", "")}, "spec": role.get("spec") or {},
        }))
        for number, service in enumerate(role.get("services") or []):
            embedded.append(((*where, "services", number, "spec"), {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": service.get("name", "")},
                "spec": service.get("spec") or {},
            }))
    return embedded


def check_manifests(objects: list[tuple[str, dict[str, Any]]], kubernetes_version: str) -> list[tuple[str, Path_, str]]:
    """Every object (label, body) of one preview: (label, field path, reason) per problem, cross-object NodePort
    allocation included. An InferServiceSet's embedded workloads and Services are checked at their place in it."""
    problems: list[tuple[str, Path_, str]] = []
    services: list[tuple[str, Path_, dict[str, Any]]] = []
    for label, body in objects:
        problems += [(label, path, reason) for path, reason in check_object(body, kubernetes_version)]
        if body.get("kind") == "Service":
            services.append((label, ("spec",), body.get("spec") or {}))
        for where, embedded in embedded_objects(body):
            for path, reason in check_object(embedded, kubernetes_version):
                if path[:1] == ("spec",):
                    path = (*where, *path[1:])
                elif path[:2] == ("metadata", "name"):
                    path = (*where[:-1], "name")
                problems.append((label, path, reason))
            if embedded["kind"] == "Service":
                services.append((label, where, embedded["spec"]))
    return problems + check_node_ports(services)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}...'"
