"""The engines' environment: ASCEND timeouts as vllm-ascend applies them, and one hash seed for every pool engine."""

from __future__ import annotations

from typing import Any, Mapping

from .sections import SIDES, Finding, engine_env_section, uses_pool


# vllm-ascend's Mooncake P2P connectors set ASCEND_TRANSFER_TIMEOUT process-wide to
# 4.096 us * 2**HCCL_RDMA_TIMEOUT * HCCL_RDMA_RETRY_CNT + 3000 ms when the variable is unset
# (vllm_ascend/distributed/kv_transfer/utils/utils.py, get_transfer_timeout_value).
HCCL_RDMA_TIMEOUT_DEFAULT = 20
HCCL_RDMA_RETRY_CNT_DEFAULT = 7
# Mooncake's ascend_direct transport default when ASCEND_CONNECT_TIMEOUT is unset
# (Mooncake docs/source/design/transfer-engine/ascend_direct_transport.md).
ASCEND_CONNECT_TIMEOUT_DEFAULT_MS = 3000


def env_int(env: Mapping[str, Any], name: str) -> int | None:
    value = env.get(name)
    if value is None or value == "":
        return None
    try:
        return int(str(value).strip())
    except ValueError:
        return None


def effective_transfer_timeout_ms(env: Mapping[str, Any]) -> int:
    """ASCEND_TRANSFER_TIMEOUT as vllm-ascend applies it: the env value, else its HCCL-derived default."""
    explicit = env_int(env, "ASCEND_TRANSFER_TIMEOUT")
    if explicit is not None:
        return explicit
    rdma_timeout = env_int(env, "HCCL_RDMA_TIMEOUT") or HCCL_RDMA_TIMEOUT_DEFAULT
    retry_count = env_int(env, "HCCL_RDMA_RETRY_CNT") or HCCL_RDMA_RETRY_CNT_DEFAULT
    return int(4.096 * 2**rdma_timeout * retry_count // 1000 + 3000)


def effective_connect_timeout_ms(env: Mapping[str, Any]) -> int:
    explicit = env_int(env, "ASCEND_CONNECT_TIMEOUT")
    return ASCEND_CONNECT_TIMEOUT_DEFAULT_MS if explicit is None else explicit


def check_hash_seed(
    engines: Mapping[str, Mapping[str, Any]], kv_transfer_configs: Mapping[str, Mapping[str, Any] | None]
) -> list[Finding]:
    """PYTHONHASHSEED set and equal on every engine that uses the pool: block hashes differ otherwise and every
    pool lookup misses (vllm-ascend kv_pool.md; the silent failure users report most)."""
    if not uses_pool(kv_transfer_configs):
        return []
    seeds = {side: (engines.get(side) or {}).get("PYTHONHASHSEED") for side in SIDES}
    findings = []
    for side, seed in seeds.items():
        if seed is None or str(seed) == "random":
            findings.append(Finding(
                f"env.{engine_env_section(side)}.PYTHONHASHSEED",
                "is unset or random: each engine would hash KV blocks differently and every pool lookup would "
                "miss; set the same fixed value (e.g. \"0\") on every engine.",
            ))
    if None not in seeds.values() and len({str(seed) for seed in seeds.values()}) > 1:
        findings.append(Finding(
            f"env.{engine_env_section('decode')}.PYTHONHASHSEED",
            f"is {seeds['decode']!r} but prefill uses {seeds['prefill']!r}; pool lookups only hit with one seed "
            f"on every engine.",
        ))
    return findings


# The env.json sections of the roles whose script runs Motor's set_cann_env (examples/deployer/startup/common.sh:236-243,
# called by roles/engine.sh:28 and roles/coordinator.sh:20), which sources "$CANN_INSTALL_PATH/ascend-toolkit/set_env.sh".
CANN_ENV_SECTIONS = ("motor_coordinator_env", "motor_engine_prefill_env", "motor_engine_decode_env")


def check_cann_install_path(role_envs: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """CANN_INSTALL_PATH set wherever set_cann_env runs (`role_envs`: env.json section -> the env its role gets):
    unset, the script sources /ascend-toolkit/set_env.sh, which no image has, unless the image itself sets the
    variable; every env.json of Motor's examples and its config tool (vllm_to_motor.py DEFAULT_ENV_COMMON) sets it."""
    unset = [section for section in CANN_ENV_SECTIONS
             if not str((role_envs.get(section) or {}).get("CANN_INSTALL_PATH", "")).strip()]
    if not unset:
        return []
    return [Finding(
        "env.motor_common_env.CANN_INSTALL_PATH",
        f"is unset, and {', '.join(f'env.{section}' for section in unset)} do not set it: Motor's set_cann_env sources \"$CANN_INSTALL_PATH/ascend-toolkit/"
        "set_env.sh\", which is /ascend-toolkit/set_env.sh unless the image sets CANN_INSTALL_PATH; set it to the "
        "image's CANN folder (Motor's env examples: /usr/local/Ascend).",
    )]
