"""The value types of settings fields (counts, ports, quantities, paths, names, labels, images, environment
variables) and the two kinds of section, Closed and Open, that every settings module builds on."""

from __future__ import annotations

import re
from typing import Annotated, Any, Callable, Union

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
)

from kvpool.internal.units import DNS_LABEL, DNS_SUBDOMAIN, K8S_QUANTITY, MAX_NAME_LENGTH, MAX_PORT
from kvpool.policies import rules

# Numbers and booleans are taken as written: `true` is no count or port, "8080" no port, "yes" no boolean
# (pydantic's lax mode would coerce each). Motor's own files write ports of kv_transfer_config as strings: KvTransferConfig
# keeps taking those.
INT32_MAX = 2**31 - 1  # the Go type of replicas and ports in the Kubernetes API
INT64_MAX = 2**63 - 1  # the C++ type mooncake_master parses its lease and TTL flags into
# Upper bounds of sizes: anything larger is a unit typo (10^12 MiB of /dev/shm), not a configuration.
_PLAIN_KEY = re.compile(r"^[\w.-]+$")


def key_path(path: str, key: Any) -> str:
    """`path` and one key below it as every message prints a field: `path.key`, or `path['key']` (ASCII-escaped)
    for a key a dotted path cannot show."""
    if _PLAIN_KEY.fullmatch(str(key)):
        return f"{path}.{key}" if path else str(key)
    return f"{path}[{str(key)!a}]"


MAX_NODE_MEMORY = 16 * 2**40
"""16 TiB: memory one node gives one pod or pool (/dev/shm, a container's limit, a pool segment, shared memory)."""
MAX_VOLUME = 2**50
"""1 PiB: one volume (a PVC, an etcd member's data)."""


def _within_int32(value: int) -> int:
    if value > INT32_MAX:
        raise ValueError(f"{value} does not fit a Kubernetes replica count (int32, at most {INT32_MAX})")
    return value


def no_bool(value: Any) -> Any:
    """A number field's BeforeValidator: refuses a boolean with a message that says to write a number."""
    if isinstance(value, bool):
        raise ValueError(f"{str(value).lower()} is a boolean; write a number")
    return value


Count = Annotated[StrictInt, AfterValidator(_within_int32)]
PortNumber = Annotated[StrictInt, Field(ge=1, le=MAX_PORT)]
NodePort = Annotated[StrictInt, Field(ge=30000, le=32767)]
K8sQuantity = Annotated[str, Field(pattern=K8S_QUANTITY.pattern)]


def _at_most(size_bytes: Callable[[Any], int], limit: int, what: str) -> Any:
    """A validator refusing a size above `limit` bytes; `size_bytes` raises ValueError naming the accepted forms."""
    def check(size: int | str) -> int | str:
        if size_bytes(size) > limit:
            raise ValueError(f"{size!r} is more than {what}; check the unit")
        return size
    return AfterValidator(check)


NodeMemory = Annotated[K8sQuantity, _at_most(rules.k8s_quantity_bytes, MAX_NODE_MEMORY, "one node's memory (16Ti)")]
VolumeSize = Annotated[K8sQuantity, _at_most(rules.k8s_quantity_bytes, MAX_VOLUME, "one volume holds (1Pi)")]


# One type, so that a bad size is one problem with its path, not one per union member.
MooncakeSize = Annotated[
    Union[StrictInt, StrictStr], _at_most(rules.mooncake_size_bytes, MAX_NODE_MEMORY, "one node's memory (16384GB)")
]
# No control character at all, tab and newline included: a path is one line.
AbsolutePath = Annotated[str, Field(pattern=r"^/[^\x00-\x1f\x7f-\x9f]*$")]


def _no_backsteps(path: str) -> str:
    if problem := rules.host_path_backsteps(path):
        raise ValueError(problem)
    return path


HostPath = Annotated[AbsolutePath, AfterValidator(_no_backsteps)]
NonEmpty = Annotated[str, Field(min_length=1)]
# The name a user gives the cluster a stack deploys to (settings.cluster): a kubeconfig context's characters, one
# line, so that it prints as it was written in the fleet's table and in every clash.
CLUSTER_NAME = r"[A-Za-z0-9][-A-Za-z0-9_.:@/]*"
MAX_CLUSTER_NAME = 253
ClusterName = Annotated[str, Field(min_length=1, max_length=MAX_CLUSTER_NAME, pattern=f"^{CLUSTER_NAME}$")]
# A Kubernetes label value: at most 63 characters, alphanumeric at both ends, `-`, `_`, `.` inside.
LabelValue = Annotated[str, Field(max_length=63, pattern=r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")]
# A namespace name (RFC 1123 label).
DnsLabel = Annotated[str, Field(pattern=DNS_LABEL.pattern, max_length=MAX_NAME_LENGTH)]
# A StorageClass or PVC name (Kubernetes ValidateClassName / NameIsDNSSubdomain).
ObjectName = Annotated[str, Field(min_length=1, max_length=253, pattern=DNS_SUBDOMAIN)]


def _qualified_name(key: str) -> str:
    """A label or annotation key (apimachinery IsQualifiedName): [DNS subdomain prefix/]name, name <= 63
    characters, alphanumeric at both ends with '-', '_', '.' inside."""
    prefix, slash, name = key.rpartition("/")
    if slash and (key.count("/") > 1 or not prefix or len(prefix) > 253 or not re.fullmatch(DNS_SUBDOMAIN, prefix)):
        raise ValueError(f"{key!r} is not a label or annotation key: its prefix before '/' must be a DNS subdomain "
                         "such as example.com")
    if not (len(name) <= 63 and re.fullmatch(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$", name)):
        raise ValueError(f"{key!r} is not a label or annotation key: the name (after any prefix/) must be 1-63 "
                         "letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
    return key


def _label_value(value: str) -> str:
    if len(value) > 63 or not re.fullmatch(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$", value):
        raise ValueError(f"{value!r} is not a label value: at most 63 letters, digits, '-', '_' or '.', starting and "
                         "ending with a letter or digit (or empty)")
    return value


QualifiedName = Annotated[str, AfterValidator(_qualified_name)]
# Docker image reference: [registry[:port]/]path[:tag][@digest]; refuses Motor's "<fill in the image>" placeholder.
IMAGE_REFERENCE = (
    r"^[a-z0-9]+(?:[._-]+[a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-]+[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$"
)
STACK_REFERENCE = r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]
EnvValue = Union[StrictStr, StrictBool, StrictInt, StrictFloat]
Labels = dict[QualifiedName, Annotated[StrictStr, AfterValidator(_label_value)]]
Annotations = dict[QualifiedName, StrictStr]


class Closed(BaseModel):
    """A section whose every key motor-kvpool knows: anything else is a typo or an unsupported option."""

    # defer_build: a section's validator is built when the section is validated on its own, not at import; the
    # service's own validator already holds every section's, so most sections never need their own.
    model_config = ConfigDict(extra="forbid", defer_build=True)


class Open(BaseModel):
    """A section that passes keys it does not model through untouched (vLLM engine arguments)."""

    model_config = ConfigDict(extra="allow", defer_build=True)  # as Closed's
