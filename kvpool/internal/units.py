"""Name, port and number formats shared by the settings, the components and the offline tooling (pure, no Pulumi):
RFC 1123 names, the highest port, and protobuf's floats turned back into whole numbers.

Size parsing has one home, kvpool/policies/rules/units.py (the policy pack ships it on its own); the Mooncake size parser and
the quantity pattern the project reads through this module are re-exported here."""

from __future__ import annotations

import re
from typing import Any

from kvpool.policies.rules import K8S_QUANTITY, mooncake_size_bytes

__all__ = ["DNS_LABEL", "DNS_SUBDOMAIN", "K8S_QUANTITY", "integral_floats_to_ints", "is_dns_label", "mooncake_size_bytes"]

# RFC 1123 label (a namespace, a Service name), written once: every label check of the project is built on it.
_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS_LABEL = re.compile(f"^{_LABEL}$")
# RFC 1123 subdomain (most object names, the cluster's domain): labels joined by dots, as a pattern string.
DNS_SUBDOMAIN = rf"^{_LABEL}(\.{_LABEL})*$"
MAX_NAME_LENGTH = 63
MAX_PORT = 65535


def is_dns_label(name: str) -> bool:
    return len(name) <= MAX_NAME_LENGTH and bool(DNS_LABEL.fullmatch(name))


def integral_floats_to_ints(document: Any) -> Any:
    """Protobuf carries every number as a float (stack outputs, resource inputs): 2.0 becomes 2 again, 1.5 stays."""
    if isinstance(document, float) and document.is_integer():
        return int(document)
    if isinstance(document, dict):
        return {key: integral_floats_to_ints(item) for key, item in document.items()}
    if isinstance(document, list):
        return [integral_floats_to_ints(item) for item in document]
    return document
