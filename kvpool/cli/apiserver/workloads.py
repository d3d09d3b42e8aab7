"""The API server's checks of workloads and the pods they template (core pods, apps), as pure functions.

Part of the manifest checks of kvpool/cli/apiserver/checks.py (origins cited there): a pod spec's volumes, containers,
env, ports, mounts and resources; a workload's selector against its template; a claim's storage class.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Any

from kvpool.cli.apiserver.names import (
    Path_,
    Problem,
    check_annotations,
    check_labels,
    dns1123_subdomain,
    port_name,
    show,
)

_ENV_VAR_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
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


# --- core: pods and claims ---------------------------------------------------------------------------------


def parse_quantity(text: Any) -> Decimal | None:
    """resource.ParseQuantity's value, or None when it is no quantity."""
    match = _QUANTITY.fullmatch(str(text))
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
        return [(path, f"{show(value)}: must not contain '..'")]
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
            problems.append(((*where, "name"), f"Duplicate value: {show(name)}"))
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
                problems.append(((*where, "name"), f"Duplicate value: {show(name)}"))
            names.add(name)
            problems += _check_container(container, where, volumes | set(claim_volumes), host_network, host_ports)
    return problems


def _check_container(container: dict[str, Any], path: Path_, volumes: set[str], host_network: bool,
                     host_ports: set[tuple[Any, Any, Any]]) -> list[Problem]:
    problems: list[Problem] = []
    env_names: set[str] = set()
    for index, entry in enumerate(container.get("env") or []):
        name = entry.get("name")
        if isinstance(name, str) and not _ENV_VAR_NAME.fullmatch(name):  # core ValidateEnv: IsEnvVarName
            problems.append(((*path, "env", index, "name"), f"{show(name)}: a valid environment variable name must "
                             "consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit"))
        if name in env_names:  # ssa: env is a map keyed by name
            problems.append(((*path, "env", index, "name"), f"duplicate entries for key [name={show(name)}]: "
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
                problems.append(((*where, "name"), f"{show(name)}: {problem}"))
            elif name in port_names:
                problems.append(((*where, "name"), f"Duplicate value: {show(name)}"))
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
        written_host_port = port.get("hostPort")
        if isinstance(written_host_port, int) and written_host_port and not 1 <= written_host_port <= 65535:
            problems.append(((*where, "hostPort"), f"{written_host_port}: must be between 1 and 65535, inclusive"))
        host_port = written_host_port or (number if host_network else None)
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
            problems.append(((*where, "name"), f"Not found: {show(mount.get('name'))}"))
        mount_path = mount.get("mountPath")
        if mount_path in mount_paths:
            problems.append(((*where, "mountPath"), f"{show(mount_path)}: must be unique"))
        mount_paths.add(mount_path)
    problems += check_resources(container.get("resources") or {}, (*path, "resources"))
    return problems


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
                problems.append(((*path, group, name), f"{show(amount)}: must be greater than or equal to 0"))
            if name not in _OVERCOMMITTABLE and "/" in name and value != value.to_integral_value():
                problems.append(((*path, group, name), f"{show(amount)}: must be an integer"))
    for name, amount in requests.items():
        request, limit = parse_quantity(amount), parse_quantity(limits.get(name)) if name in limits else None
        if request is None:
            continue
        overcommittable = name in _OVERCOMMITTABLE or "/" not in name
        if limit is not None and overcommittable and request > limit:
            problems.append(((*path, "requests", name), f"{show(amount)}: must be less than or equal to {name} "
                             f"limit of {limits[name]}"))
        elif limit is not None and not overcommittable and request != limit:
            problems.append(((*path, "requests", name), f"{show(amount)}: must be equal to {name} limit of "
                             f"{limits[name]}"))
        elif name not in limits and not overcommittable:
            problems.append(((*path, "limits"), f"Limit must be set for non overcommitable resources ({name})"))
    return problems


def check_claim_spec(spec: dict[str, Any], path: Path_) -> list[Problem]:
    """core ValidatePersistentVolumeClaimSpec: storageClassName is a DNS-1123 subdomain (ValidateClassName)."""
    name = spec.get("storageClassName")
    if isinstance(name, str) and name:
        problem = dns1123_subdomain(name)
        if problem:
            return [((*path, "storageClassName"), f"{show(name)}: {problem}")]
    return []


# --- apps: workloads ---------------------------------------------------------------------------------------


def check_workload_spec(spec: dict[str, Any], path: Path_) -> list[Problem]:
    """apps ValidateDeploymentSpec & co.: the selector's labels are valid and select the template's labels; the
    template is a valid pod template; a StatefulSet's claim templates are valid claims."""
    problems: list[Problem] = []
    replicas = spec.get("replicas")
    if isinstance(replicas, int) and replicas < 0:  # apps: ValidateNonnegativeField
        problems.append(((*path, "replicas"), f"{replicas}: must be greater than or equal to 0"))
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
