"""The pods' environment: numbers where a process parses numbers, ASCEND timeouts as vllm-ascend applies them, and one
hash seed for every pool engine."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from .sections import SIDES, Finding, engine_env_section, uses_pool

# vllm-ascend's Mooncake P2P connectors set ASCEND_TRANSFER_TIMEOUT process-wide to
# 4.096 us * 2**HCCL_RDMA_TIMEOUT * HCCL_RDMA_RETRY_CNT + 3000 ms when the variable is unset
# (vllm_ascend/distributed/kv_transfer/utils/utils.py, get_transfer_timeout_value).
HCCL_RDMA_TIMEOUT_DEFAULT = 20
HCCL_RDMA_RETRY_CNT_DEFAULT = 7
# Mooncake's ascend_direct transport default when ASCEND_CONNECT_TIMEOUT is unset
# (Mooncake docs/source/design/transfer-engine/ascend_direct_transport.md).
ASCEND_CONNECT_TIMEOUT_DEFAULT_MS = 3000


# Variables a process of the pods parses as a whole number, with what a non-number does there.
NUMERIC_ENV = {
    "ASCEND_TRANSFER_TIMEOUT": "vllm-ascend's connectors read it with int() (kv_transfer/utils/utils.py) and fail to "
                               "start",
    "ASCEND_CONNECT_TIMEOUT": "Mooncake's ascend_direct transport reads it as milliseconds and fails to start",
    "HCCL_RDMA_TIMEOUT": "vllm-ascend derives the transfer timeout from it with int() and fails to start",
    "HCCL_RDMA_RETRY_CNT": "vllm-ascend derives the transfer timeout from it with int() and fails to start",
    "KV_CACHE_STORE_PORT": "Motor's node manager reads it with int() (motor/config/node_manager.py:628) and stops",
    "KV_STORE_METRICS_PORT": "Motor's coordinator reads it with int() (motor/config/coordinator.py:118) and stops",
    "RATE_LIMIT_MAX_REQUESTS": "Motor's coordinator reads it with int() and silently keeps its default "
                               "(motor/coordinator/middleware/fastapi_middleware.py:100)",
    "RATE_LIMIT_WINDOW_SIZE": "Motor's coordinator reads it with int() and silently keeps its default "
                              "(motor/coordinator/middleware/fastapi_middleware.py:108)",
}
# Python refuses to start with anything else (PYTHONHASHSEED must be "random" or an integer in [0; 4294967295]).
PYTHONHASHSEED_MAX = 4294967295
_WHOLE_NUMBER = re.compile(r"^[+-]?[0-9]+$")


def _whole_number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    # digits only, as the message says: no surrounding whitespace, no trailing newline
    text = str(value)
    return int(text) if isinstance(value, str) and len(text) <= 20 and _WHOLE_NUMBER.fullmatch(text) else None


def check_numeric_env(sections: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """Variables parsed as numbers hold whole numbers (NUMERIC_ENV), PYTHONHASHSEED one in Python's range or
    "random". `sections`: env.json's section name -> its variables."""
    findings = []
    for section, env in sections.items():
        for name, value in (env or {}).items():
            if name in NUMERIC_ENV and _whole_number(value) is None:
                findings.append(Finding(
                    f"env.{section}.{name}",
                    f"{value!r} is not a whole number: {NUMERIC_ENV[name]}; write digits only, e.g. \"10000\".",
                ))
            elif name == "PYTHONHASHSEED" and str(value) != "random" and not (
                (seed := _whole_number(value)) is not None and 0 <= seed <= PYTHONHASHSEED_MAX
            ):
                findings.append(Finding(
                    f"env.{section}.{name}",
                    f"{value!r} is neither \"random\" nor a whole number in 0..{PYTHONHASHSEED_MAX}: Python refuses "
                    f"to start with it; write e.g. \"0\".",
                ))
    return findings


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


# env.json's sections whose variables are container env of the pods that load secret_env's Secret with envFrom (the
# controller, the coordinator and the engines: kvpool/internal/secret_env.py), where an env entry beats an envFrom one.
SECRET_ENV_SECTIONS = (
    "motor_common_env", "motor_controller_env", "motor_coordinator_env", "motor_engine_prefill_env",
    "motor_engine_decode_env",
)


def check_secret_env_shadowing(secret_names: Iterable[str], sections: Mapping[str, Mapping[str, Any]]) -> list[Finding]:
    """A secret_env name that env.json also sets: Kubernetes lets the plain env entry win over envFrom, so the secret
    would silently never arrive. `sections`: env.json's section name -> its variables."""
    secret = set(secret_names)
    return [
        Finding(
            f"env.{section}.{name}",
            f"secret_env.{name} sets the same variable, and this plain value would hide the secret in every pod "
            f"that gets both (Kubernetes prefers env over envFrom); remove one of env.{section}.{name} and "
            f"secret_env.{name}.",
        )
        for section in SECRET_ENV_SECTIONS
        for name in (sections.get(section) or {})
        if name in secret
    ]
