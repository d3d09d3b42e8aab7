"""Convert a deploy.py configuration (user_config.json + env.json) into a motor-kvpool stack file.

Every conversion is said in a note and written as a comment at the top of the stack file; nothing is
dropped without a note, and the result is validated exactly as `pulumi up` would validate it.
"""

from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from kvpool.cli.engine.stack_config import project_name, stack_config_dir
from kvpool.cli.engine.stack_schema import MODELINE, SCHEMA_NAME
from kvpool.cli.engine.stack_yaml import dump_for_the_cli, json_problems
from kvpool.cli.fleet.offline import clashes_with_stack_files
from kvpool.internal.written_files import write_file
from kvpool.errors import KvpoolError, SettingsError
from kvpool.internal.input_files import MAX_DEPTH, check_stack_name, load_json
from kvpool.internal.local_backend import local_stack_reference
from kvpool.policies import rules
from kvpool.settings.deploy import DEPLOY_PY_NODE_PORTS
from kvpool.settings.loader import PULUMI_CONFIG_KEYS, load_from_motor_files
from kvpool.settings.service import PROJECT, USER_CONFIG_VERSION, ServiceSettings
from kvpool.settings.store import pool_config_as_store_config

# deploy.py of the kv_cache_pool generation drove only Mooncake (Ascend/MindIE-PyMotor master).
_ROLES_NOT_DEPLOYED = ("motor_mf_store_env", "motor_engine_union_env", "motor_engine_encode_env")
_PLACEHOLDER_FIELDS = ("motor_deploy_config.image_name", "motor_deploy_config.weight_mount_path")
# The older SchedulerConfig.deploy_mode values (DeployMode, Ascend/MindIE-PyMotor 7d15c04) of a disaggregated service.
_DISAGGREGATED_SCHEDULER_MODES = ("pd_separate", "cdp_separate", "cpcd_separate", "pd_dual_dispatch")


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
    user_config: Mapping[str, Any], env_config: Mapping[str, Any], overrides: Mapping[str, Any] | None = None,
    project: str = PROJECT,
) -> Conversion:
    """The deploy.py pair with older names converted and `overrides` (dotted path -> value) applied; `project`: the
    name of the project the stack joins, which a target_job_id's stack reference names.

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
    _convert_store(user, notes, project)
    _drop_scheduler_deploy_mode(user, notes)
    _declare_hybrid_attention(user, notes)
    _convert_env(env, notes)
    conversion = Conversion(user, env, notes)
    for path, value in (overrides or {}).items():
        _set_path(conversion, path, value)
    # Motor's files never say which vllm-ascend the image runs; where it matters (seed 001's patch), ask for it.
    for finding in rules.check_layerwise_pool_patch(user.get("vllm_ascend_version"), rules.kv_transfer_configs(user)):
        if finding.path == "vllm_ascend_version":
            notes.append(f"{finding} Import with --set vllm_ascend_version=VERSION, or add it to the stack file.")
    return conversion


def _set_path(conversion: Conversion, path: str, value: Any) -> None:
    """Set `path` as the settings' messages print it: dotted keys, `[i]` list items, `['key']` for a key a dotted
    path cannot show; `env.<section>.<NAME>` sets env.json. Anything the path does not reach is refused."""
    steps = _path_steps(path)
    holder: Any = conversion.env if steps[0] == "env" else conversion.user_config
    steps = steps[1:] if steps[0] == "env" else steps
    if not steps:
        raise ConversionError(f"--set {path}: name a field inside env, e.g. env.motor_common_env.NAME")
    walked = "env" if holder is conversion.env else ""
    for step, following in zip(steps[:-1], steps[1:], strict=True):
        holder = _child(holder, step, following, path, walked)
        walked = _joined(walked, step)
    last = steps[-1]
    _check_holds(holder, last, path, walked)
    had = f"the file had {holder[last]!r}" if isinstance(last, int) or last in holder else "the file had none"
    holder[last] = value
    conversion.notes.append(f"{path} set to {value!r} (--set; {had})")


_STEP = re.compile(r"\[(-?\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\.?([^.\[\]]+)")


def _path_steps(path: str) -> list[str | int]:
    """`a.b[1]['x.y'].c` -> ['a', 'b', 1, 'x.y', 'c'] (the form settings_loader's messages print)."""
    steps: list[str | int] = []
    position = 0
    while position < len(path):
        match = _STEP.match(path, position)
        key_without_dot = match is not None and match.group(3) is not None and position and path[position] != "."
        if match is None or key_without_dot:
            raise ConversionError(f"--set {path}: cannot read the path at {path[position:]!r}; write keys.like[0].this")
        index, quoted, key = match.groups()
        steps.append(int(index) if index is not None else _quoted_key(path, quoted) if quoted is not None else key)
        position = match.end()
    return steps


def _quoted_key(path: str, quoted: str) -> str:
    """The key of `['...']`, its escapes read as Python reads them; an escape Python refuses is refused input."""
    try:
        return ast.literal_eval(f"'{quoted}'")
    except (SyntaxError, ValueError) as error:
        reason = str(getattr(error, "msg", error)).rsplit(": ", 1)[-1]
        raise ConversionError(f"--set {path}: the quoted key ['{quoted}'] cannot be read ({reason}); write escapes as "
                              "\\xXX, \\uXXXX or \\N{NAME}, and the key on one line") from None


def _check_holds(holder: Any, step: str | int, path: str, walked: str) -> None:
    """`holder` (reached by `walked`) is a list with item `step`, or a section when `step` is a key."""
    if isinstance(step, int):
        if not isinstance(holder, list) or not -len(holder) <= step < len(holder):
            raise ConversionError(f"--set {path}: {_where(walked)} {_list_size(holder)}; [{step}] is not one of its items")
    elif not isinstance(holder, dict):
        raise ConversionError(f"--set {path}: {_where(walked)} is not a section (it holds {holder!r})")


def _child(holder: Any, step: str | int, following: str | int, path: str, walked: str) -> Any:
    _check_holds(holder, step, path, walked)
    if isinstance(step, str) and step not in holder:
        if isinstance(following, int):
            raise ConversionError(f"--set {path}: {_where(_joined(walked, step))} is absent, so it has no item [{following}]")
        holder[step] = {}
    return holder[step]


def _joined(walked: str, step: str | int) -> str:
    if isinstance(step, int):
        return f"{walked}[{step}]"
    return f"{walked}.{step}" if walked else step


def _where(walked: str) -> str:
    return walked or "the top level"


def _list_size(holder: Any) -> str:
    return f"has {len(holder)} item{'s' if len(holder) != 1 else ''}" if isinstance(holder, list) else "is not a list"


def _convert_deploy(deploy: dict[str, Any], notes: list[str]) -> None:
    if "deploy_mode" not in deploy:
        deploy["deploy_mode"] = "infer_service_set"
        notes.append("motor_deploy_config.deploy_mode was absent: written as infer_service_set, deploy.py's default")
    if "env_path" in deploy:
        notes.append(f"motor_deploy_config.env_path ({deploy.pop('env_path')}) dropped: env.json is imported under `env`")
    unset = {key: port for key, port in DEPLOY_PY_NODE_PORTS.items() if key not in deploy}
    if unset:  # deploy.py's templates serve them whatever the file says; a stack asks for none unless told
        notes.append(
            f"motor_deploy_config: {', '.join(unset)} absent: deploy.py's templates served NodePorts "
            f"{', '.join(map(str, unset.values()))}; this stack's Services are ClusterIP (a cluster allocates a "
            "NodePort once). For clients outside the cluster: "
            + " ".join(f"--set motor_deploy_config.{key}={port}" for key, port in unset.items())
        )


def _convert_store(user: dict[str, Any], notes: list[str], project: str) -> None:
    if "kv_cache_pool_config" in user and "kv_cache_store_config" not in user:
        pool = user.pop("kv_cache_pool_config")
        store = user["kv_cache_store_config"] = pool_config_as_store_config(pool)
        notes.append("kv_cache_pool_config renamed to kv_cache_store_config (its current name)")
        if store is not pool:
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
    store["target_stack"] = local_stack_reference(project, target)
    notes.append(
        f"kv_cache_store_config.target_job_id {target!r} became target_stack {store['target_stack']!r}, assuming the "
        f"service that owns the store is the stack named after its job_id; edit it if that stack has another name "
        f"or lives in another organization"
    )


def _drop_scheduler_deploy_mode(user: dict[str, Any], notes: list[str]) -> None:
    """Motor's older SchedulerConfig had deploy_mode (Ascend/MindIE-PyMotor 7d15c04, motor/config/coordinator.py:128);
    njuyuan/PyMotor 8919e55's has none, so Motor ignores it. Its disaggregated values are what this tool deploys; the
    others (single_node, pd_disaggregation_single_container) are left for the settings to refuse."""
    coordinator = user.get("motor_coordinator_config")
    scheduler = coordinator.get("scheduler_config") if isinstance(coordinator, dict) else None
    if not isinstance(scheduler, dict) or scheduler.get("deploy_mode") not in _DISAGGREGATED_SCHEDULER_MODES:
        return
    mode = scheduler.pop("deploy_mode")
    notes.append(
        f"motor_coordinator_config.scheduler_config.deploy_mode ({mode}) dropped: Motor's SchedulerConfig no longer "
        f"has it (Motor ignores it); prefill and decode are deployed apart as motor_deploy_config.deploy_mode says"
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


def validate(conversion: Conversion, stack: str, source: str, project: str) -> ServiceSettings:
    try:
        return load_from_motor_files(conversion.user_config, conversion.env, stack, source, project)
    except SettingsError as error:
        placeholders = [p.split(":")[0] for p in error.problems if p.startswith(_PLACEHOLDER_FIELDS)]
        hints = []
        if placeholders:
            hints.append("fill them while importing: " + " ".join(f"--set {path}=VALUE" for path in placeholders))
        if error.fixes:
            hints.append("fix them while importing: " + " ".join(f"--set {path}={value}" for path, value in error.fixes.items()))
        if hints:
            raise SettingsError([*error.problems, *hints], source) from None
        raise


def stack_file_text(conversion: Conversion, source: str, modeline: bool = True) -> str:
    """The stack file: every key of the converted configuration under motor-kvpool:* (user_config's sections and
    motor-kvpool's own switches, which `--set` may give), the notes as a comment header, after the editors' schema
    modeline (`modeline`: the file is written beside the schema it names). Refused where the Pulumi CLI would hand
    the program something else than the file had (an integer beyond 64 bits)."""
    sections = {key: conversion.user_config[key] for key in PULUMI_CONFIG_KEYS
                if key in conversion.user_config and key != "env"}
    if conversion.env:
        sections["env"] = conversion.env
    problems = [problem for key, value in sections.items()
                for problem in json_problems(value, key) + _too_deep_for_the_stack_file(value, key)]
    if problems:
        raise ConversionError("\n".join(problems))
    config = {f"{PROJECT}:{key}": value for key, value in sections.items()}
    header = [MODELINE] if modeline else []
    header.append(f"# Imported from {source} by `python -m kvpool import`.")
    header += [f"# - {note}" for note in conversion.notes]
    body = dump_for_the_cli({"config": config})
    return "\n".join(header) + "\n" + body


# The stack file's top mapping and `config:` hold every section: what the reader accepts below a section is two less.
_SECTION_DEPTH = MAX_DEPTH - 2


def _too_deep_for_the_stack_file(value: Any, where: str) -> list[str]:
    """The first path nested deeper than the stack-file reader reads back below `config:` (user_config.json and
    env.json may each be MAX_DEPTH deep, their sections land two levels lower). Walked without recursion."""
    pending = [(value, where, 1)]
    while pending:
        item, path, depth = pending.pop()
        if not isinstance(item, (dict, list)):
            continue
        if depth > _SECTION_DEPTH:
            return [f"{path}: nested more than {_SECTION_DEPTH} levels deep, which the stack file (its top level and "
                    f"`config:` above it, {MAX_DEPTH} levels in all) cannot hold; flatten it"]
        children = item.items() if isinstance(item, dict) else enumerate(item)
        pending.extend((child, f"{path}.{key}" if isinstance(item, dict) else f"{path}[{key}]", depth + 1)
                       for key, child in children)
    return []


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
    project = project_of(stacks_dir)
    name = project_name(project) if project is not None else PROJECT
    conversion = convert(read_json(user_config_path), read_json(env_path), overrides, name)
    settings = validate(conversion, stack, str(user_config_path), name)
    if project is not None and _pick_free_values(conversion, settings, stack, project, name):
        validate(conversion, stack, str(user_config_path), name)
    target = stacks_dir / f"Pulumi.{stack}.yaml"
    if target.exists() and not force:
        raise ConversionError(f"{target} exists; pass --force to overwrite it")
    # The modeline names the schema relative to the stack file: written only where the schema is beside it.
    modeline = (stacks_dir / SCHEMA_NAME).is_file()
    if not modeline:
        conversion.notes.insert(0, f"no schema modeline: {stacks_dir} holds no {SCHEMA_NAME}; for editors to check "
                                   f"the file, write it with `kvpool stack-schema` and make `{MODELINE}` its first line")
    text = stack_file_text(conversion, source, modeline)
    try:
        write_file(target, text, stacks_dir)
    except OSError as error:
        raise ConversionError(f"--stacks-dir {stacks_dir}: cannot write {target.name}: {error.strerror or error}") from None
    return target, conversion


def project_of(stacks_dir: Path) -> Path | None:
    """The project whose stack folder `stacks_dir` is: the current folder's, its own (stack files beside Pulumi.yaml)
    or its parent's; None when none."""
    folder = stacks_dir.resolve()
    for project in (Path.cwd().resolve(), folder, folder.parent):
        config_dir = stack_config_dir(project)
        if config_dir is not None and config_dir.resolve() == folder:
            return project
    return None


def _pick_free_values(conversion: Conversion, settings: ServiceSettings, stack: str, project: Path, name: str) -> bool:
    """Motor's examples all carry deploy.py's job_id mindie-motor (and a deploy.py user's files its NodePorts): where
    the imported values clash with a stack already in the project's cluster, write the free value the clash names
    instead, and say so. True when a value changed."""
    unread: list[str] = []
    found = clashes_with_stack_files(project, local_stack_reference(name, stack), settings, unread)
    conversion.notes += unread
    deploy = conversion.user_config.setdefault("motor_deploy_config", {})
    for clash in found:  # from stack settings, a clash is a NodePort's or the namespace's: motor_deploy_config's
        deploy[clash.field.removeprefix("motor_deploy_config.")] = clash.free
        conversion.notes.append(
            f"{clash.field} {clash.value!r} became {clash.free!r}: stack {clash.first.rsplit('/', 1)[-1]} of the "
            f"project holds {clash.value!r} in cluster {settings.cluster!r} ({clash.kind}); a free value picked"
        )
    return bool(found)
