"""Size and name formats shared by the settings model and the components (pure, no Pulumi)."""

from __future__ import annotations

import re

# Kubernetes resource quantities as deploy.py accepts them for storage sizes and /dev/shm: a number with a
# binary or decimal suffix. Bare numbers are refused (deploy.py's storage validation does the same).
K8S_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$")
_K8S_FACTORS = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}

# Mooncake sizes as vllm-ascend parses them in mooncake.json: "1GB", "512MB", "64KB", "10B" (binary multiples).
MOONCAKE_SIZE = re.compile(r"^[0-9]+(\.[0-9]+)?\s*(GB|MB|KB|B)$", re.IGNORECASE)
_MOONCAKE_FACTORS = {"GB": 2**30, "MB": 2**20, "KB": 2**10, "B": 1}

# RFC 1123 label: what a namespace (job_id) must be.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 63


def k8s_quantity_bytes(quantity: str) -> int:
    match = K8S_QUANTITY.match(quantity)
    if not match:
        raise ValueError(f"{quantity!r} is not a size with a unit such as 4Gi or 512Mi")
    return int(float(quantity[: match.start(2)]) * _K8S_FACTORS[match.group(2)])


def mooncake_size_bytes(size: str | int) -> int:
    if isinstance(size, int):
        return size
    match = MOONCAKE_SIZE.match(size)
    if not match:
        raise ValueError(f"{size!r} is not a size such as 1GB, 512MB or a number of bytes")
    return int(float(size[: match.start(2)]) * _MOONCAKE_FACTORS[match.group(2).upper()])


def is_dns_label(name: str) -> bool:
    return len(name) <= MAX_NAME_LENGTH and bool(DNS_LABEL.match(name))
