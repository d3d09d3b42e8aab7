"""Size and name formats shared by the settings model and the components (pure, no Pulumi).

Size parsing lives in policies/rules.py, which the policy pack ships on its own; it is re-exported here."""

from __future__ import annotations

import re

from policies.rules import K8S_QUANTITY, MOONCAKE_SIZE, k8s_quantity_bytes, mooncake_size_bytes

__all__ = ["K8S_QUANTITY", "MOONCAKE_SIZE", "k8s_quantity_bytes", "mooncake_size_bytes", "is_dns_label"]

# RFC 1123 label: what a namespace (job_id) must be.
DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
MAX_NAME_LENGTH = 63


def is_dns_label(name: str) -> bool:
    return len(name) <= MAX_NAME_LENGTH and bool(DNS_LABEL.match(name))
