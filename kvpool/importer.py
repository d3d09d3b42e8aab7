"""Convert a deploy.py configuration (user_config.json + env.json) into a motor-kvpool stack file.

Every conversion is said in a note and written as a comment at the top of the stack file; nothing is
dropped without a note, and the result is validated exactly as `pulumi up` would validate it.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from components.errors import KvpoolError, SettingsError
from components.input_files import check_stack_name, load_json
from policies import rules
from components.settings import LOCAL_ORGANIZATION, PROJECT, USER_CONFIG_VERSION, ServiceSettings
from components.store_settings import MooncakeStoreConfig
from components.settings_loader import USER_CONFIG_SECTIONS, load_from_motor_files

# deploy.py of the kv_cache_pool generation drove only Mooncake (Ascend/MindIE-PyMotor master).
_MOONCAKE_ONLY_KEYS = set(MooncakeStoreConfig.model_fields) - {"backend", "port", "target_stack"}
_ROLES_NOT_DEPLOYED = ("motor_mf_store_env", "motor_engine_union_env", "motor_engine_encode_env")
_PLACEHOLDER_FIELDS = ("motor_deploy_config.image_name", "motor_deploy_config.weight_mount_path")


class ConversionError(KvpoolError):
    """The source files cannot be read or converted."""


@dataclass
class Conversion:
    user_config: dict[str, Any]
    env: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def read_json(path: Path) -> dict[str, Any]:
    data = load_json(path)
    if not isinstance(data, dict):
        raise ConversionError(f"{path}: the top level must be a JSON object")
    return data


def convert(
    user_config: Mapping[str, Any], env_config: Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> Conversion:
    """The deploy.py pair with older names converted and `overrides` (dotted path -> value) applied.

    Motor's examples leave placeholders such as "<请按实际情况填写镜像名称>" in image_name and
    weight_mount_path; `overrides` fills them at import time, and `notes` says each change."""
    user = copy.deepcopy(dict(user_config))
    env = copy.deepcopy(dict(env_config))
    notes: list[str] = []
    version = user.pop("version", USER_CONFIG_VERSION)
    if version != USER_CONFIG_VERSION:
        raise ConversionError(f"version: {version!r} is not supported; motor-kvpool reads user_config {USER_CONFIG_VERSION}")
    env.pop("version", None)
    if "motor_engine_union_config" in user:
        raise ConversionError(
            "motor_engine_union_config: this is a PD-hybrid (union) service; motor-kvpool deploys disaggregated "
            "prefill and decode with a KV pool, so there is nothing to import. Keep it on deploy.py, or rewrite it "
            "as motor_engine_prefill_config + motor_engine_decode_config."
        )
    deploy = user.get("motor_deploy_config")
    if isinstance(deploy, dict):
        _convert_deploy(deploy, notes)
    _convert_store(user, notes)
    _declare_hybrid_attention(user, notes)
    _convert_env(env, notes)
    for path, value in (overrides or {}).items():
        _set_path(user, path, value, notes)
    return Conversion(user, env, notes)


def _set_path(user: dict[str, Any], path: str, value: Any, notes: list[str]) -> None:
    *parents, key = path.split(".")
    holder = user
    for parent in parents:
        child = holder.setdefault(parent, {})
        if not isinstance(child, dict):
            raise ConversionError(f"--set {path}: {parent} is not a section")
        holder = child
    previous = holder.get(key, "<absent>")
    holder[key] = value
    notes.append(f"{path} set to {value!r} (--set; the file had {previous!r})")


def _convert_deploy(deploy: dict[str, Any], notes: list[str]) -> None:
    if "deploy_mode" not in deploy:
        deploy["deploy_mode"] = "infer_service_set"
        notes.append("motor_deploy_config.deploy_mode was absent: written as infer_service_set, deploy.py's default")
    if "env_path" in deploy:
        notes.append(f"motor_deploy_config.env_path ({deploy.pop('env_path')}) dropped: env.json is imported under `env`")


def _convert_store(user: dict[str, Any], notes: list[str]) -> None:
    if "kv_cache_pool_config" in user and "kv_cache_store_config" not in user:
        store = user.pop("kv_cache_pool_config")
        user["kv_cache_store_config"] = store
        notes.append("kv_cache_pool_config renamed to kv_cache_store_config (its current name)")
        if isinstance(store, dict) and "backend" not in store and set(store) & _MOONCAKE_ONLY_KEYS:
            store["backend"] = "mooncake"
            notes.append(
                "kv_cache_store_config.backend set to mooncake: kv_cache_pool_config comes from the Mooncake-only "
                "generation of deploy.py, and its keys are Mooncake's"
            )
    store = user.get("kv_cache_store_config")
    if isinstance(store, dict) and "alloc_in_same_node" in store and "prefer_alloc_in_same_node" not in store:
        # The name of Motor's older deployment guide; vllm-ascend's mooncake.json reads prefer_alloc_in_same_node.
        store["prefer_alloc_in_same_node"] = store.pop("alloc_in_same_node")
        notes.append(
            "kv_cache_store_config.alloc_in_same_node renamed to prefer_alloc_in_same_node, the key vllm-ascend's "
            "Mooncake client reads (Motor's older deployment guide used the short name)"
        )
    if not isinstance(store, dict) or "target_job_id" not in store:
        return
    target = store.pop("target_job_id")
    deploy = user.get("motor_deploy_config")
    own = deploy.get("job_id") if isinstance(deploy, dict) else None
    if target == own:
        notes.append(f"kv_cache_store_config.target_job_id {target!r} is this service itself: dropped (deploy.py ignores it)")
        return
    store["target_stack"] = f"{LOCAL_ORGANIZATION}/{PROJECT}/{target}"
    notes.append(
        f"kv_cache_store_config.target_job_id {target!r} became target_stack {store['target_stack']!r}, assuming the "
        f"service that owns the store is the stack named after its job_id; edit it if that stack has another name "
        f"or lives in another organization"
    )


def _declare_hybrid_attention(user: dict[str, Any], notes: list[str]) -> None:
    """Motor's examples transfer with MooncakeHybridConnector exactly for hybrid-attention models (seed FAQ 7).
    Declaring it keeps the policy on guard if the connector is ever changed back."""
    sections = [user.get(rules.engine_section(side)) for side in rules.SIDES]
    uses_hybrid = any(
        connector.get("kv_connector") == rules.HYBRID_CONNECTOR
        for section in sections
        if isinstance(section, dict) and isinstance(section.get("engine_config"), dict)
        for _, connector in rules.connectors_of(section["engine_config"].get("kv_transfer_config"))
    )
    if not uses_hybrid:
        return
    for section in sections:
        if isinstance(section, dict):
            section["hybrid_attention"] = True
    notes.append(
        "hybrid_attention: true declared for both engines: they transfer with MooncakeHybridConnector, Motor's "
        "connector for hybrid-attention models (seed FAQ 7)"
    )


def _convert_env(env: dict[str, Any], notes: list[str]) -> None:
    if "motor_kv_cache_pool_env" in env and "motor_kv_cache_store_env" not in env:
        env["motor_kv_cache_store_env"] = env.pop("motor_kv_cache_pool_env")
        notes.append("env motor_kv_cache_pool_env renamed to motor_kv_cache_store_env (its current name)")
    for section in _ROLES_NOT_DEPLOYED:
        if section in env and env[section] == {}:
            del env[section]
            notes.append(f"env {section} dropped: it was empty and motor-kvpool deploys no reader for it")


def validate(conversion: Conversion, stack: str, source: str) -> ServiceSettings:
    try:
        return load_from_motor_files(conversion.user_config, conversion.env, stack, source)
    except SettingsError as error:
        placeholders = [p.split(":")[0] for p in error.problems if p.startswith(_PLACEHOLDER_FIELDS)]
        if placeholders:
            hint = " ".join(f"--set {path}=VALUE" for path in placeholders)
            raise SettingsError([*error.problems, f"fill them while importing: {hint}"], source) from None
        raise


def stack_file_text(conversion: Conversion, source: str) -> str:
    """The stack file: the converted sections under motor-kvpool:*, the notes as a comment header."""
    config: dict[str, Any] = {
        f"{PROJECT}:{section}": conversion.user_config[section]
        for section in USER_CONFIG_SECTIONS
        if section in conversion.user_config
    }
    if conversion.env:
        config[f"{PROJECT}:env"] = conversion.env
    header = [f"# Imported from {source} by `python -m kvpool import`."]
    header += [f"# - {note}" for note in conversion.notes]
    body = yaml.safe_dump({"config": config}, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)
    return "\n".join(header) + "\n" + body


def import_pair(
    user_config_path: Path,
    env_path: Path,
    stack: str,
    stacks_dir: Path,
    overrides: Mapping[str, Any] | None = None,
    force: bool = False,
) -> tuple[Path, Conversion]:
    check_stack_name(stack)
    source = f"{user_config_path} + {env_path}"
    conversion = convert(read_json(user_config_path), read_json(env_path), overrides)
    validate(conversion, stack, str(user_config_path))
    target = stacks_dir / f"Pulumi.{stack}.yaml"
    if target.exists() and not force:
        raise ConversionError(f"{target} exists; pass --force to overwrite it")
    try:
        stacks_dir.mkdir(parents=True, exist_ok=True)
        target.write_text(stack_file_text(conversion, source), encoding="utf-8")
    except OSError as error:
        raise ConversionError(f"--stacks-dir {stacks_dir}: cannot write {target.name}: {error.strerror or error}") from None
    return target, conversion
