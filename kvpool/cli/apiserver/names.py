"""The API server's checks of names, labels, annotations and keys (apimachinery), as pure functions.

Part of the manifest checks of kvpool/cli/apiserver/checks.py (origins cited there); the other check modules build on
these, and share `Problem` (field path, reason) and `show` (how a reason quotes a value).
"""

from __future__ import annotations

import re
from typing import Any

from kvpool.internal.units import DNS_LABEL, DNS_SUBDOMAIN

Path_ = tuple[Any, ...]
Problem = tuple[Path_, str]

TOTAL_ANNOTATION_SIZE = 256 * 1024  # apimachinery ValidateAnnotations: TotalAnnotationSizeLimitB

_DNS1123_LABEL = DNS_LABEL
_DNS1123_SUBDOMAIN = re.compile(DNS_SUBDOMAIN)
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_CONFIG_MAP_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_PORT_NAME = re.compile(r"^[-a-z0-9]+$")


def dns1123_label(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _DNS1123_LABEL.fullmatch(value):
        return "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must " \
               "start and end with an alphanumeric character"
    return None


def dns1123_subdomain(value: str) -> str | None:
    if len(value) > 253:
        return f"must be no more than 253 characters (is {len(value)})"
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        return "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and " \
               "must start and end with an alphanumeric character"
    return None


def dns1035_label(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _DNS1035_LABEL.fullmatch(value):
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
    if not _QUALIFIED_NAME.fullmatch(name):
        return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " \
               "an alphanumeric character"
    return None


def label_value(value: str) -> str | None:
    if len(value) > 63:
        return f"must be no more than 63 characters (is {len(value)})"
    if not _LABEL_VALUE.fullmatch(value):
        return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', " \
               "and must start and end with an alphanumeric character"
    return None


def check_labels(labels: Any, path: Path_) -> list[Problem]:
    """apimachinery ValidateLabels (metadata.labels, a pod's nodeSelector, a selector's matchLabels)."""
    problems: list[Problem] = []
    for key, value in (labels or {}).items():
        problem = qualified_name(str(key))
        if problem:
            problems.append(((*path, key), f"label key {show(key)}: {problem}"))
        problem = label_value(value) if isinstance(value, str) else "must be a string"
        if problem:
            problems.append(((*path, key), f"label value {show(value)}: {problem}"))
    return problems


def check_annotations(annotations: Any, path: Path_) -> list[Problem]:
    """apimachinery ValidateAnnotations: keys are qualified names (checked lower-cased), total size <= 256 KiB."""
    problems: list[Problem] = []
    total = 0
    for key, value in (annotations or {}).items():
        problem = qualified_name(str(key).lower())
        if problem:
            problems.append(((*path, key), f"annotation key {show(key)}: {problem}"))
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
            problems.append((("metadata", "name"), f"{show(name)}: {problem}"))
    namespace = meta.get("namespace")
    if isinstance(namespace, str) and namespaced:
        problem = dns1123_label(namespace)
        if problem:
            problems.append((("metadata", "namespace"), f"{show(namespace)}: {problem}"))
    problems += check_labels(meta.get("labels"), ("metadata", "labels"))
    problems += check_annotations(meta.get("annotations"), ("metadata", "annotations"))
    return problems



def port_name(name: str) -> str | None:
    """apimachinery IsValidPortName (IANA_SVC_NAME)."""
    if len(name) > 15:
        return "must be no more than 15 characters"
    if not _PORT_NAME.fullmatch(name):
        return "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)"
    if not re.search("[a-z]", name):
        return "must contain at least one letter (a-z)"
    if "--" in name:
        return "must not contain consecutive hyphens"
    if name.startswith("-") or name.endswith("-"):
        return "must not begin or end with a hyphen"
    return None


def config_map_key(key: str) -> str | None:
    """apimachinery IsConfigMapKey (also Secret keys)."""
    if len(key) > 253:
        return "must be no more than 253 characters"
    if not _CONFIG_MAP_KEY.fullmatch(key):
        return "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
    if key in (".", ".."):
        return f"must not be {key!r}"
    if key.startswith(".."):
        return "must not start with '..'"
    return None


def show(value: Any) -> str:
    """A value as a reason quotes it: its repr, cut at 80 characters."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}...'"
