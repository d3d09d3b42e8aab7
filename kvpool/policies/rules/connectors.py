"""The connectors of each side: kv_role by side, the P/D transfer connector Motor dispatches with, hybrid
attention, and layerwise transfer with a pool."""

from __future__ import annotations

from typing import Any, Mapping

from .backends import backend_facts
from .sections import (
    DISPATCH_CONNECTORS,
    HANDOFF_CONNECTORS,
    HYBRID_CONNECTOR,
    MULTI_CONNECTOR,
    ROLE_BY_SIDE,
    SIDES,
    STORE_CONNECTOR,
    TRIGGER_CONNECTORS,
    UCM_CONNECTOR,
    Finding,
    connectors_of,
    engine_section,
    kv_transfer_configs,
    kv_transfer_path,
    store_connector_backends,
    transfer_connector,
)
from .model_kv import read_model_config
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


# vLLM's switch that keeps its hybrid KV cache manager on: Motor's DeepSeek-V4 examples set it, as a model that mixes
# attention types needs (Motor writes the key as `--no-disable-hybrid-kv-cache-manager`).
HYBRID_KV_MANAGER_KEYS = ("no_disable_hybrid_kv_cache_manager", "no-disable-hybrid-kv-cache-manager")


def hybrid_attention_reason(user_config: Mapping[str, Any], declared: Mapping[str, bool]) -> str | None:
    """Why the model mixes attention types, or None when nothing says so: hybrid_attention declared on a side, vLLM's
    hybrid KV cache manager kept on, or the model's config.json (where the preview reads it) listing compressed
    attention layers (compress_ratios, DeepSeek-V4) or more than one of layer_types. One model runs on both sides,
    so what one side says holds for both."""
    for side in SIDES:
        if declared.get(side):
            return f"{engine_section(side)}.hybrid_attention is true"
    engine_configs = {side: ((user_config.get(engine_section(side)) or {}).get("engine_config") or {}) for side in SIDES}
    for side, engine_config in engine_configs.items():
        for key in HYBRID_KV_MANAGER_KEYS:
            if engine_config.get(key) is True or str(engine_config.get(key)).lower() == "true":
                return f"{engine_section(side)}.engine_config.{key} keeps vLLM's hybrid KV cache manager on"
    for engine_config in engine_configs.values():
        model = engine_config.get("model")
        config = read_model_config(model)
        if config is None:
            continue
        if config.get("compress_ratios") is not None:
            return f"{model}/config.json lists compress_ratios, compressed attention layers"
        layer_types = config.get("layer_types")
        if isinstance(layer_types, list) and len({str(kind) for kind in layer_types}) > 1:
            kinds = ", ".join(sorted({str(kind) for kind in layer_types}))
            return f"{model}/config.json mixes layer_types {kinds}"
    return None


def check_hybrid_attention_connector(user_config: Mapping[str, Any], declared: Mapping[str, bool]) -> list[Finding]:
    """Hybrid-attention models need MooncakeHybridConnector for P/D transfer on both sides (seed 000, FAQ 7:
    otherwise decode crashes and restarts during inference); hybrid_attention_reason says when the model is one."""
    reason = hybrid_attention_reason(user_config, declared)
    if reason is None:
        return []
    kv = kv_transfer_configs(user_config)
    findings = []
    for side in SIDES:
        transfer = transfer_connector(kv.get(side))
        if transfer is None:
            continue
        suffix, connector = transfer
        if connector.get("kv_connector") != HYBRID_CONNECTOR:
            findings.append(Finding(
                kv_transfer_path(side) + suffix + ".kv_connector",
                f"is {connector.get('kv_connector')!r} but the model uses hybrid attention ({reason}); write "
                f"{HYBRID_CONNECTOR!r} on both sides (seed FAQ 7: decode crashes and restarts otherwise).",
                example=HYBRID_CONNECTOR,
            ))
    return findings


# Motor's explicit dispatch_profile values, as its node manager parses them, and the plan each side then advertises
# (motor/common/resources/dispatch.py): a prefill and a decode are paired only when their plans are one.
DISPATCH_PROFILES = {
    "handoff": "handoff", "prefill_handoff_decode": "handoff",
    "trigger": "trigger", "bootstrap": "trigger", "concurrent_engine_sync": "trigger",
}
DISPATCH_MODULE = "motor/common/resources/dispatch.py"


def _explicit_profile(section: Mapping[str, Any]) -> tuple[str, str, Any] | None:
    """(side's section name, field, value) of the dispatch_profile Motor reads for a side: the section's, else its
    engine_config's (node_manager.py: `explicit_profile or engine_config.get(...)`); None when neither is set."""
    engine_config = section.get("engine_config")
    engine_config = engine_config if isinstance(engine_config, Mapping) else {}
    for where, value in (("dispatch_profile", section.get("dispatch_profile")),
                         ("engine_config.dispatch_profile", engine_config.get("dispatch_profile"))):
        if value:
            return where, str(value).strip().lower(), value
    return None


def dispatch_plan(section: Mapping[str, Any] | None) -> str | None:
    """The P/D plan Motor's node manager advertises for one motor_engine_<side>_config ("handoff" or "trigger"), or
    None when it advertises none: its dispatch_profile, else the class of its transfer connector (a
    MultiConnector's connectors[0]). A profile Motor refuses to parse is None here; check_dispatch_connector names
    it."""
    section = section if isinstance(section, Mapping) else {}
    explicit = _explicit_profile(section)
    if explicit is not None and explicit[1] not in ("", "unknown"):  # Motor reads these two as "not set"
        return DISPATCH_PROFILES.get(explicit[1])
    transfer = transfer_connector(_kv_transfer_config(section))
    if transfer is None or not isinstance(transfer[1].get("kv_connector"), str):
        return None
    connector = transfer[1]["kv_connector"].strip().lower()
    if connector in {name.lower() for name in HANDOFF_CONNECTORS}:
        return "handoff"
    if connector in {name.lower() for name in TRIGGER_CONNECTORS}:
        return "trigger"
    return None


def _kv_transfer_config(section: Mapping[str, Any]) -> Mapping[str, Any] | None:
    engine_config = section.get("engine_config")
    kv = engine_config.get("kv_transfer_config") if isinstance(engine_config, Mapping) else None
    return kv if isinstance(kv, Mapping) else None


def check_dispatch_connector(user_config: Mapping[str, Any]) -> list[Finding]:
    """Each side advertises a P/D plan Motor can dispatch with, and both the same one: connectors[0] in Motor's
    whitelist or dispatch_profile set (motor-deployer.md §1.8: unknown connectors fail closed), and a handoff
    side never paired with a trigger side (Motor then pairs no prefill with any decode)."""
    sections = {side: user_config.get(engine_section(side)) for side in SIDES}
    sections = {side: section if isinstance(section, Mapping) else {} for side, section in sections.items()}
    findings = []
    for side, section in sections.items():
        explicit = _explicit_profile(section)
        if explicit is not None and explicit[1] not in ("", "unknown", *DISPATCH_PROFILES):
            findings.append(Finding(
                f"{engine_section(side)}.{explicit[0]}",
                f"is {explicit[2]!r}; Motor's node manager refuses it at start ({DISPATCH_MODULE}): write one of "
                f"{', '.join(DISPATCH_PROFILES)}.",
            ))
            continue
        transfer = transfer_connector(_kv_transfer_config(section))
        if transfer is None or dispatch_plan(section) is not None:
            continue
        suffix, connector = transfer
        findings.append(Finding(
            kv_transfer_path(side) + suffix + ".kv_connector",
            f"{connector.get('kv_connector')!r} is not in Motor's P/D dispatch whitelist "
            f"({', '.join(DISPATCH_CONNECTORS)}), so Motor refuses to dispatch; use one of them, or set "
            f"{engine_section('prefill')}.dispatch_profile and {engine_section('decode')}.dispatch_profile "
            f"(handoff or trigger) alike.",
        ))
    plans = {side: dispatch_plan(section) for side, section in sections.items()}
    # Without a dispatch_profile, differing plans are differing connectors: check_transfer_connectors_match's.
    explicit = any(_explicit_profile(section) for section in sections.values())
    if explicit and None not in plans.values() and plans["prefill"] != plans["decode"]:
        findings.append(Finding(
            f"{engine_section('decode')}.dispatch_profile",
            f"decode dispatches as {plans['decode']!r} ({_plan_source(sections['decode'])}) but prefill as "
            f"{plans['prefill']!r} ({_plan_source(sections['prefill'])}); Motor pairs a prefill with a decode only "
            f"when both advertise one plan ({DISPATCH_MODULE}), so no request would find a pair: give both sides "
            f"the same transfer connector, or the same dispatch_profile.",
        ))
    return findings


def _plan_source(section: Mapping[str, Any]) -> str:
    explicit = _explicit_profile(section)
    if explicit is not None and explicit[1] not in ("", "unknown"):
        return f"its {explicit[0]} is {explicit[2]!r}"
    transfer = transfer_connector(_kv_transfer_config(section))
    return f"its transfer connector is {transfer[1].get('kv_connector')!r}" if transfer else "no transfer connector"


# The transfer options both sides of one P/D transfer must agree on: vLLM-ascend's Mooncake connectors read them on
# each side, and a prefill that sends layer by layer to a decode that waits for whole requests transfers nothing.
TRANSFER_OPTIONS = ("use_layerwise", "send_type")


def check_transfer_connectors_match(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]) -> list[Finding]:
    """Prefill and decode run the two ends of one KV transfer: the same connector class (connectors[0] of a
    MultiConnector, or the single one) with the same transfer options."""
    transfers = {side: transfer_connector(kv_transfer_configs.get(side)) for side in SIDES}
    if None in transfers.values():
        return []
    (p_suffix, prefill), (d_suffix, decode) = transfers["prefill"], transfers["decode"]
    p_path, d_path = kv_transfer_path("prefill") + p_suffix, kv_transfer_path("decode") + d_suffix
    if prefill.get("kv_connector") != decode.get("kv_connector"):
        return [Finding(
            f"{d_path}.kv_connector",
            f"is {decode.get('kv_connector')!r} but prefill's transfer connector ({p_path}.kv_connector) is "
            f"{prefill.get('kv_connector')!r}: the two sides of one P/D transfer run the same connector, or decode "
            f"never receives prefill's KV cache; write {prefill.get('kv_connector')!r} on both sides (or change both).",
            example=prefill.get("kv_connector"),
        )]
    findings = []
    p_extra = prefill.get("kv_connector_extra_config") or {}
    d_extra = decode.get("kv_connector_extra_config") or {}
    for option in TRANSFER_OPTIONS:
        if p_extra.get(option) != d_extra.get(option):
            findings.append(Finding(
                f"{d_path}.kv_connector_extra_config.{option}",
                f"is {_written(d_extra, option)} but prefill's ({p_path}.kv_connector_extra_config.{option}) is "
                f"{_written(p_extra, option)}: both ends of one {prefill.get('kv_connector')} transfer need the same "
                f"{option}; write the same value on both sides.",
            ))
    return findings


def _written(extra: Mapping[str, Any], option: str) -> str:
    return repr(extra[option]) if option in extra else "not set"


def check_pool_readers(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], deploys_store: bool) -> list[Finding]:
    """What the plan says about who uses the pool (warnings, not refusals): seed 000 has prefill and decode both load
    the store connector, so a side without it takes nothing from, or puts nothing into, the pool; and a store this
    stack deploys that none of its engines loads serves only the stacks that name it as their target_stack."""
    loads = {side: bool(store_connector_backends(kv_transfer_configs.get(side))) for side in SIDES}
    if loads["prefill"] and not loads["decode"]:
        return [Finding(
            kv_transfer_path("decode"),
            f"loads no {STORE_CONNECTOR} while prefill does, so decode will read nothing from the KV pool: every block "
            f"it needs comes over prefill's transfer (seed 000: P and D both load the store connector); add "
            f"{STORE_CONNECTOR} as connectors[1] of a MultiConnector on decode too.",
        )]
    if loads["decode"] and not loads["prefill"]:
        return [Finding(
            kv_transfer_path("prefill"),
            f"loads no {STORE_CONNECTOR} while decode does, so nothing is written to the KV pool and decode will read "
            f"nothing from it (seed 000: P and D both load the store connector); add {STORE_CONNECTOR} as "
            f"connectors[1] of a MultiConnector on prefill too.",
        )]
    if deploys_store and not any(loads.values()):
        return [Finding(
            "kv_cache_store_config",
            f"this stack deploys a KV store that none of its engines loads (no {STORE_CONNECTOR} on prefill or "
            f"decode): it serves only the stacks whose target_stack names this one. Motor's UCM sample has one for "
            f"its deployer's sake alone (seed FAQ 6); leave kv_cache_store_config out if no stack uses the store.",
        )]
    return []


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


def _layerwise(store_backend: str) -> bool:
    facts = backend_facts(store_backend)
    return facts is not None and facts.layerwise


def check_layerwise_pool_backend(kv_transfer_configs: Mapping[str, Mapping[str, Any] | None], store_backend: str) -> list[Finding]:
    """use_layerwise on AscendStoreConnector is MemCache-only (vllm-ascend layerwise_kv_pool.md)."""
    findings = []
    for side in SIDES:
        for suffix, connector in connectors_of(kv_transfer_configs.get(side)):
            extra = connector.get("kv_connector_extra_config") or {}
            if connector.get("kv_connector") == STORE_CONNECTOR and extra.get("use_layerwise") and not _layerwise(store_backend):
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
    (seed 001: otherwise inference is wrong); without vllm_ascend_version the preview cannot tell, and says so."""
    layerwise_sides = []
    for side in SIDES:
        config = kv_transfer_configs.get(side) or {}
        transfer = transfer_connector(config)
        if transfer is not None and transfer[1].get("kv_connector") == "MooncakeLayerwiseConnector" and \
                store_connector_backends(config):
            layerwise_sides.append(side)
    if not vllm_ascend_version:
        return [Finding(
            "vllm_ascend_version",
            f"is not set, and {' and '.join(layerwise_sides)} transfer{'s' if len(layerwise_sides) == 1 else ''} "
            f"layer by layer with a KV pool: vllm-ascend before v0.17.0rc2 needs Motor's vllm_multi_connector.patch "
            f"for that (seed 001: otherwise inference is wrong); set vllm_ascend_version to the image's vllm-ascend "
            f"(e.g. v0.17.0rc2) so the preview can tell.",
        )] if layerwise_sides else []
    version = parse_version(vllm_ascend_version)
    if version is None:
        return [Finding("vllm_ascend_version", f"{vllm_ascend_version!r} is not a version such as v0.17.0rc2.")]
    if version >= LAYERWISE_PATCH_FIXED_IN:
        return []
    return [Finding(
        kv_transfer_path(side),
        f"layerwise transfer with a KV pool on vllm-ascend {vllm_ascend_version} (before v0.17.0rc2) "
        f"needs Motor's vllm_multi_connector.patch (seed 001); apply it in the image or upgrade.",
    ) for side in layerwise_sides]
