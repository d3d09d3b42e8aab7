"""ConfigMap `motor-config`: exactly the files deploy.py puts there (`create_motor_config_configmap` in Motor's
examples/deployer/lib/generator/k8s_utils.py), under deploy.py's keys, read at deploy time from the user's Motor
checkout, plus the effective user_config.json that Motor's in-pod code reads (and re-syncs every 10 s).

Two things differ from a copy of Motor's files, both as deploy.py itself does them:
- env.json's sections become the `set_*_env` shell functions that Motor's role scripts call (deploy.py's
  `update_shell_safely`): the engine side's function runs after `set_cann_env` and after Motor regenerates the
  Mooncake client file, so what it exports wins (this is how the engines keep our MOONCAKE_CONFIG_PATH).
- the MemCache LocalService conf under `kv_store_backends.memcache.mmc-local.conf` is ours (the store's Service
  and configured ports); Motor's `sync_mmc_local_config` copies it to a writable file that its node manager
  rewrites in place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from kvpool.errors import KvpoolError
from kvpool.internal.input_files import InputFileError, read_text
from kvpool.internal.motor_env import shell_exports
from kvpool.internal.project_files import ProjectFileError, inside_folder
from kvpool.policies import rules

MOTOR_CONFIG_NAME = "motor-config"
USER_CONFIG_KEY = "user_config.json"
MMC_LOCAL_KEY = "kv_store_backends.memcache.mmc-local.conf"
# ConfigMap key -> path in Motor's examples/deployer folder, in deploy.py's order.
MOTOR_FILES: tuple[tuple[str, str], ...] = (
    ("boot.sh", "startup/boot.sh"),
    ("common.sh", "startup/common.sh"),
    ("hccl_tools.py", "startup/hccl_tools.py"),
    ("mooncake_config.py", "startup/roles/kv_store_backends/mooncake/mooncake_config.py"),
    ("controller.sh", "startup/roles/controller.sh"),
    ("coordinator.sh", "startup/roles/coordinator.sh"),
    ("engine.sh", "startup/roles/engine.sh"),
    ("kv_cache_store.sh", "startup/roles/kv_cache_store.sh"),
    ("kv_store_backends.mooncake.mooncake.sh", "startup/roles/kv_store_backends/mooncake/mooncake.sh"),
    ("kv_store_backends.memcache.memcache.sh", "startup/roles/kv_store_backends/memcache/memcache.sh"),
    (
        "kv_store_backends.memcache.memcache_meta_service.py",
        "startup/roles/kv_store_backends/memcache/memcache_meta_service.py",
    ),
    (MMC_LOCAL_KEY, "startup/roles/kv_store_backends/memcache/mmc-local.conf"),
    ("kv_conductor.sh", "startup/roles/kv_conductor.sh"),
    ("mf_store.sh", "startup/roles/mf_store.sh"),
    ("all_combine_in_single_container.sh", "startup/roles/all_combine_in_single_container.sh"),
    ("probe.sh", "probe/probe.sh"),
    ("probe.py", "probe/probe.py"),
    ("prestop.sh", "prestop/prestop.sh"),
    ("prestop.py", "prestop/prestop.py"),
)
# Motor's files each role's pod runs or reads from motor-config (Motor 8919e55), by boot.sh's ROLE: boot.sh sources
# common.sh and the role's script (startup/boot.sh:13-42); the exec probes run probe.sh, which runs probe.py
# (probe/probe.sh:27); an engine's preStop runs prestop.sh, which runs prestop.py (prestop/prestop.sh:33). A role's
# checksum/motor-scripts digests exactly these, so a Motor upgrade rolls only the roles whose files changed;
# tests/conformance/test_motor_role_scripts.py boots each role with every other file made to fail when read.
BOOT_SCRIPTS = ("boot.sh", "common.sh")
PROBE_SCRIPTS = ("probe.sh", "probe.py")
# engine.sh runs hccl_tools.py (gen_ranktable_config, common.sh; skipped on A5); engines alone have a preStop hook.
ENGINE_SCRIPTS = (*BOOT_SCRIPTS, "engine.sh", "hccl_tools.py", *PROBE_SCRIPTS, "prestop.sh", "prestop.py")
ROLE_SCRIPTS: dict[str, tuple[str, ...]] = {
    "controller": (*BOOT_SCRIPTS, "controller.sh", *PROBE_SCRIPTS),
    "coordinator": (*BOOT_SCRIPTS, "coordinator.sh", *PROBE_SCRIPTS),
    "prefill": ENGINE_SCRIPTS,
    "decode": ENGINE_SCRIPTS,
    # kv_conductor.sh runs `mooncake_config.py conductor`; the conductor's probes are TCP checks, not probe.sh.
    "kv_conductor": (*BOOT_SCRIPTS, "kv_conductor.sh", "mooncake_config.py"),
}
# What engine.sh adds by the engines' KV_STORE_BACKEND (rules.Backend.engine_scripts); MemCache's conf is ours
# (CLIENT_FILE_KEYS, checksum/kv-client).
ENGINE_BACKEND_SCRIPTS: dict[str, tuple[str, ...]] = {
    backend.name: backend.engine_scripts for backend in rules.BACKENDS.values() if backend.engine_scripts}
# Store client files that Motor's scripts read from motor-config (by their endpoint file name).
CLIENT_FILE_KEYS = {"mmc-local.conf": MMC_LOCAL_KEY}
# The `set_*_env` functions each script calls, with the env.json section each exports (after
# motor_common_env), as deploy.py's set_env_to_shell writes them for multi_deployment and infer_service_set.
ENV_FUNCTIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "common.sh": (("set_common_env", "motor_common_env"),),
    "controller.sh": (("set_controller_env", "motor_controller_env"),),
    "coordinator.sh": (("set_coordinator_env", "motor_coordinator_env"),),
    "engine.sh": (
        ("set_encode_env", "motor_engine_encode_env"),
        ("set_prefill_env", "motor_engine_prefill_env"),
        ("set_decode_env", "motor_engine_decode_env"),
        ("set_union_env", "motor_engine_union_env"),
    ),
    "kv_cache_store.sh": (("set_kv_store_env", "motor_kv_cache_store_env"),),
    "mf_store.sh": (("set_mf_store_env", "motor_mf_store_env"),),
    "kv_conductor.sh": (("set_kv_conductor_env", "motor_kv_conductor_env"),),
}


class MotorScriptsError(KvpoolError):
    """motor_deployer_dir is unset where it is needed, unreadable, or lacks a file deploy.py ships."""


def render_user_config(user_config: Mapping[str, Any]) -> str:
    """The effective user_config.json (ServiceSettings.user_config()) as stable text: key order as Motor writes its
    files, so an unchanged config never shows a diff."""
    return json.dumps(user_config, indent=2, ensure_ascii=False) + "\n"


def read_motor_files(motor_deployer_dir: str | None, project_dir: Path) -> dict[str, str]:
    """deploy.py's files by ConfigMap key, from the settings' motor_deployer_dir (relative to `project_dir`; None:
    none). Never copied into this repository: Motor's code stays Motor's.

    The folder may lie outside the project (it is Motor's checkout), but only MOTOR_FILES are read from it, each
    resolved (symlinks, `..`) and refused unless it stays inside the folder: a symlinked boot.sh pointing at
    /proc/self/environ or /etc/shadow would otherwise be published in motor-config. Errors never quote content."""
    if motor_deployer_dir is None:
        return {}
    folder = project_dir / motor_deployer_dir
    hint = "point motor_deployer_dir at Motor's examples/deployer folder (the one holding deploy.py)"
    if not folder.is_dir():
        raise MotorScriptsError(f"motor_deployer_dir: {folder} is not a folder; {hint}")
    paths = {}
    for key, relative in MOTOR_FILES:
        try:
            paths[key] = inside_folder(folder, relative, "motor_deployer_dir", "Motor's deployer folder")
        except ProjectFileError as error:
            raise MotorScriptsError(str(error)) from None
    missing = [relative for key, relative in MOTOR_FILES if not paths[key].is_file()]
    if missing:
        raise MotorScriptsError(
            f"motor_deployer_dir: {folder} lacks {', '.join(missing)}, which deploy.py puts in motor-config; {hint}"
        )
    files = {}
    for key, path in paths.items():
        try:
            files[key] = read_text(path)
        except InputFileError as error:
            raise MotorScriptsError(f"motor_deployer_dir: {error}") from None
    return files


def role_scripts(role: str, kv_store_backend: str | None = None) -> tuple[str, ...]:
    """motor-config keys of Motor's files that a pod of boot.sh's `role` runs or reads; `kv_store_backend`: the
    engines' KV_STORE_BACKEND (None without a pool)."""
    extra = ENGINE_BACKEND_SCRIPTS.get(kv_store_backend or "", ()) if role in ("prefill", "decode") else ()
    return (*ROLE_SCRIPTS[role], *extra)


def role_motor_files(motor_files: Mapping[str, str], role: str, kv_store_backend: str | None = None) -> dict[str, str] | None:
    """The part of read_motor_files() that `role` runs, as read from the checkout (checksum/motor-scripts; the env
    functions deploy.py adds are each role's checksum/motor-env); None without Motor's checkout."""
    if not motor_files:
        return None
    return {key: motor_files[key] for key in role_scripts(role, kv_store_backend)}


def with_env_functions(
    script: str, functions: Mapping[str, Mapping[str, Any]], containers: Mapping[str, Sequence[str]] | None = None
) -> str:
    """The script with each `function NAME() { export ...; }` placed on top, as deploy.py's update_shell_safely
    leaves it (each call prepends, so the last function called comes first); what each exports: shell_exports, with
    `containers`' entry for the function (the env names of the container that runs it), if any."""
    block = ""
    for name, env in functions.items():
        block = f"function {name}() {{\n{shell_exports(env, (containers or {}).get(name))}}}\n" + block
    return block + script


def motor_config_data(
    user_config: Mapping[str, Any],
    motor_files: Mapping[str, str],
    role_envs: Mapping[str, Mapping[str, Any]],
    client_files: Mapping[str, str],
    role_containers: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, str]:
    """`user_config`: the effective user_config.json (ServiceSettings.user_config()); `motor_files`:
    read_motor_files(); `role_envs`: env.json section name -> what its set_*_env function exports
    (motor_common_env included; a section without an entry exports motor_common_env's);
    `client_files`: the store's client files by endpoint file name; `role_containers`: section name -> the env names
    (past Motor's own) of the container running its function, where they are not the function's own (shell_exports)."""
    data = dict(motor_files)
    containers = role_containers or {}
    for key, functions in ENV_FUNCTIONS.items():
        if key in data:
            common = role_envs.get("motor_common_env", {})
            data[key] = with_env_functions(
                data[key], {name: role_envs.get(section, common) for name, section in functions},
                {name: containers[section] for name, section in functions if section in containers},
            )
    for name, key in CLIENT_FILE_KEYS.items():
        if name in client_files:
            data[key] = client_files[name]
    data[USER_CONFIG_KEY] = render_user_config(user_config)
    return data
