"""The connectors of each side: kv_role by side, the P/D transfer connector Motor dispatches with, hybrid
attention, and layerwise transfer with a pool."""

from __future__ import annotations

from typing import Any, Mapping

from .sections import (
    DISPATCH_CONNECTORS,
    HYBRID_CONNECTOR,
    MULTI_CONNECTOR,
    ROLE_BY_SIDE,
    SIDES,
    STORE_CONNECTOR,
    UCM_CONNECTOR,
    Finding,
    connectors_of,
    kv_transfer_path,
    store_connector_backends,
    transfer_connector,
)
from .units import parse_version

LAYERWISE_PATCH_FIXED_IN = (0, 17, 0, "rc", 2)


def check_kv_role_by_side(side: str, kv_transfer_config: Mapping[str, Any] | None) -> list[Finding]:
    """Prefill produces KV, decode consumes it (seed 000, FAQ 1); UCMConnector is always kv_both."""
    if not kv_transfer_config:
        return []
    expected = ROLE_BY_SIDE[side]
    base = kv_transfer_path(side)
    findings = []
    role = kv_transfer_config.get("kv_role")
    if role is not None and role != expected:
        findings.append(Finding(f"{base}.kv_role", _role_message(side, role, expected)))
    if kv_transfer_config.get("kv_connector") != MULTI_CONNECTOR:
        return findings
    for suffix, connector in connectors_of(kv_transfer_config):
        role = connector.get("kv_role")
        wanted = "kv_both" if connector.get("kv_connector") == UCM_CONNECTOR else expected
        if role is not None and role != wanted:
            findings.append(Finding(f"{base}{suffix}.kv_role", _role_message(side, role, wanted)))
    return findings


def _role_message(side: str, role: str, wanted: str) -> str:
    reason = "UCMConnector always runs as kv_both" if wanted == "kv_both" else f"the {side} side is {wanted}"
    return (
        f"is {role!r} but {reason} (seed FAQ 1: a wrong kv_role stops KV transfer between P and D). "
        f"Write {wanted!r} or leave kv_role out and it is filled in."
    )


def check_hybrid_attention_connector(
    kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], hybrid_attention: Mapping[str, bool]
) -> list[Finding]:
    """Hybrid-attention models need MooncakeHybridConnector for P/D transfer (seed 000, FAQ 7: otherwise decode
    crashes and restarts during inference)."""
    findings = []
    for side in SIDES:
        transfer = transfer_connector(kv_transfer_configs.get(side))
        if not hybrid_attention.get(side) or transfer is None:
            continue
        suffix, connector = transfer
        if connector.get("kv_connector") != HYBRID_CONNECTOR:
            findings.append(Finding(
                kv_transfer_path(side) + suffix + ".kv_connector",
                f"is {connector.get('kv_connector')!r} but the model uses hybrid attention; write "
                f"{HYBRID_CONNECTOR!r} (seed FAQ 7: decode crashes and restarts otherwise).",
            ))
    return findings


def check_dispatch_connector(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """connectors[0] must be a connector Motor knows how to dispatch P/D with, unless dispatch_profile is set,
    and then identically on both sides (motor-deployer.md §1.8: unknown connectors fail closed)."""
    profiles = {side: (kv_transfer_configs.get(side) or {}).get("dispatch_profile") for side in SIDES}
    findings = []
    if profiles["prefill"] != profiles["decode"]:
        findings.append(Finding(
            kv_transfer_path("decode") + ".dispatch_profile",
            f"is {profiles['decode']!r} but prefill has {profiles['prefill']!r}; Motor needs the same "
            f"dispatch_profile on both sides.",
        ))
    for side in SIDES:
        transfer = transfer_connector(kv_transfer_configs.get(side))
        if transfer is None or profiles[side] is not None:
            continue
        suffix, connector = transfer
        if connector.get("kv_connector") not in DISPATCH_CONNECTORS:
            findings.append(Finding(
                kv_transfer_path(side) + suffix + ".kv_connector",
                f"{connector.get('kv_connector')!r} is not in Motor's P/D dispatch whitelist "
                f"({', '.join(DISPATCH_CONNECTORS)}), so Motor refuses to dispatch; use one of them, or set "
                f"dispatch_profile (handoff or trigger) on both sides.",
            ))
    return findings


# What Motor's engine server accepts as a MultiConnector's connectors[1] (vllm_config.py _process_store_connector).
ENGINE_SERVER_STORE_CONNECTORS = (STORE_CONNECTOR, "MooncakeConnectorStoreV1", UCM_CONNECTOR)
ENGINE_SERVER = "motor/engine_server/core/vllm/vllm_config.py"


def check_engine_server_layout(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """The layouts Motor's engine server refuses at start, before vLLM runs: a prefill or decode engine without a
    kv_transfer_config, and a MultiConnector whose connectors[1] is not a store connector."""
    findings = []
    for side in SIDES:
        config = kv_transfer_configs.get(side)
        if not config:
            findings.append(Finding(
                kv_transfer_path(side),
                f"is missing: Motor's engine server refuses to start a {side} engine without one ({ENGINE_SERVER}: "
                f"'kv_transfer_config is None in engine_config'); add the P/D transfer connector, e.g. "
                f"{{kv_connector: MooncakeConnectorV1, kv_port: '30001'}}.",
            ))
            continue
        entries = connectors_of(config) if config.get("kv_connector") == MULTI_CONNECTOR else []
        if len(entries) < 2:
            continue
        suffix, store = entries[1]
        if store.get("kv_connector") not in ENGINE_SERVER_STORE_CONNECTORS:
            findings.append(Finding(
                kv_transfer_path(side) + suffix + ".kv_connector",
                f"is {store.get('kv_connector')!r}, but connectors[1] is the store connector: Motor's engine server "
                f"takes only {', '.join(ENGINE_SERVER_STORE_CONNECTORS)} there and fails at start with "
                f"\"{store.get('kv_connector')} is not supported\" ({ENGINE_SERVER}); put the store connector second, "
                f"or use connectors[0] alone as the kv_transfer_config.",
            ))
    return findings


def check_layerwise_pool_backend(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], store_backend: str) -> list[Finding]:
    """use_layerwise on AscendStoreConnector is MemCache-only (vllm-ascend layerwise_kv_pool.md)."""
    findings = []
    for side in SIDES:
        for suffix, connector in connectors_of(kv_transfer_configs.get(side)):
            extra = connector.get("kv_connector_extra_config") or {}
            if connector.get("kv_connector") == STORE_CONNECTOR and extra.get("use_layerwise") and store_backend != "memcache":
                findings.append(Finding(
                    kv_transfer_path(side) + suffix + ".kv_connector_extra_config.use_layerwise",
                    f"the layerwise KV pool works only with backend 'memcache' (vllm-ascend layerwise_kv_pool), "
                    f"not {store_backend!r}; remove use_layerwise here or switch the store to memcache.",
                ))
    return findings


def check_layerwise_pool_patch(
    vllm_ascend_version: str | None, kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]
) -> list[Finding]:
    """vllm-ascend before v0.17.0rc2 needs Motor's vllm_multi_connector.patch for layerwise transfer plus a pool
    (seed 001: otherwise inference is wrong)."""
    if not vllm_ascend_version:
        return []
    version = parse_version(vllm_ascend_version)
    if version is None:
        return [Finding("vllm_ascend_version", f"{vllm_ascend_version!r} is not a version such as v0.17.0rc2.")]
    if version >= LAYERWISE_PATCH_FIXED_IN:
        return []
    findings = []
    for side in SIDES:
        config = kv_transfer_configs.get(side) or {}
        transfer = transfer_connector(config)
        layerwise = transfer is not None and transfer[1].get("kv_connector") == "MooncakeLayerwiseConnector"
        if layerwise and store_connector_backends(config):
            findings.append(Finding(
                kv_transfer_path(side),
                f"layerwise transfer with a KV pool on vllm-ascend {vllm_ascend_version} (before v0.17.0rc2) "
                f"needs Motor's vllm_multi_connector.patch (seed 001); apply it in the image or upgrade.",
            ))
    return findings
