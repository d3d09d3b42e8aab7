"""docs/policies.md: the policy pack's policies, from its catalog (kvpool/policies/catalog.py), in the pack's order."""

from __future__ import annotations

import importlib
from typing import Any

from tools.reference.markdown import page, table


def catalog() -> Any:
    return importlib.import_module("kvpool.policies.catalog")


def _configuration(policy: Any) -> str:
    """` Configurable: maxHighWatermark (default 0.6), ...` from the policy's config schema."""
    schema = policy.config_schema
    if schema is None:
        return ""
    options = [f"`{name}` (default `{spec['default']}`)" for name, spec in schema.properties.items()]
    return " Configurable: " + ", ".join(options) + "."


def policies_page() -> str:
    rows = [
        (f"`{policy.name}`", f"{policy.enforcement_level.value} ({policy.severity.value})",
         policy.description + _configuration(policy), policy.remediation_steps or "")
        for policy in catalog().POLICIES
    ]
    body = ("Level as the pack sets it (mandatory stops `pulumi preview` and `pulumi up`; advisory warns), with the "
            "severity the Pulumi CLI shows. `--policy-config FILE` changes a level or a configurable threshold "
            "(README, \"Policy pack\").\n\n" + table(("policy", "level (severity)", "what it checks", "fix"), rows))
    return page("Policy reference", "the policy pack's catalog (kvpool/policies/catalog.py)",
                "venv/bin/python -m tools.reference", body)
