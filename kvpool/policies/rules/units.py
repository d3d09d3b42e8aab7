"""Sizes and versions as the rules, the settings model and the components read them (pure, no Pulumi).

The one home of size parsing: kvpool/internal/units.py re-exports it, and the policy pack ships it with itself."""

from __future__ import annotations

import re
from decimal import Decimal

# Kubernetes resource quantities as deploy.py accepts them for storage sizes and /dev/shm: a number with a
# binary or decimal suffix. Bare numbers are refused (deploy.py's storage validation does the same).
K8S_QUANTITY = re.compile(r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)$")
_K8S_FACTORS = {
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
    "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
}


DECIMAL = re.compile(r"[0-9]+")
MOONCAKE_SIZE = re.compile(r"^[0-9]+(\.[0-9]+)?\s*(GB|MB|KB|B)$", re.IGNORECASE)
_MOONCAKE_FACTORS = {"GB": 2**30, "MB": 2**20, "KB": 2**10, "B": 1}


def is_decimal(text: str) -> bool:
    """ASCII digits only: str.isdigit() also takes "²" and "٣", which int() then refuses or reads as digits."""
    return DECIMAL.fullmatch(text) is not None


def k8s_quantity_bytes(quantity: str) -> int:
    match = K8S_QUANTITY.fullmatch(quantity)
    if not match:
        raise ValueError(f"{quantity!r} is not a size with a unit such as 4Gi or 512Mi")
    return int(Decimal(quantity[: match.start(2)]) * _K8S_FACTORS[match.group(2)])  # exact: no float overflow


def mooncake_size_bytes(size: str | int) -> int:
    if isinstance(size, int) and size >= 0 or isinstance(size, str) and is_decimal(size):  # bytes, also as env text
        return int(size)
    if not isinstance(size, str):
        raise ValueError(f"{size!r} is not a size such as 1GB, 512MB or a number of bytes")
    match = MOONCAKE_SIZE.fullmatch(size)
    if not match:
        raise ValueError(f"{size!r} is not a size such as 1GB, 512MB or a number of bytes")
    return int(Decimal(size[: match.start(2)]) * _MOONCAKE_FACTORS[match.group(2).upper()])


def parse_version(text: str) -> tuple[int, int, int, str, int] | None:
    """'v0.17.0rc2' -> (0, 17, 0, 'rc', 2); a final release sorts after its release candidates."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:rc(\d+))?(?:\.post\d+)?", text)
    if not match:
        return None
    major, minor, patch, rc = match.groups()
    return (int(major), int(minor), int(patch), "rc" if rc else "~", int(rc or 0))
