"""Which values each Motor role's processes get, from the settings' env.json sections and the store contract (what
deploy.py's set_env_to_shell merges); how they are written (container env, shell functions) is
kvpool/internal/motor_env.py's."""

from __future__ import annotations

from typing import Any, Mapping

from kvpool.errors import KvpoolError
from kvpool.internal.motor_env import env_text
from kvpool.policies import rules
from kvpool.settings.service import ServiceSettings


class EngineEnvConflict(KvpoolError):
    """env.json sets a variable the KV store contract sets to another value."""


def motor_derived_env(settings: ServiceSettings) -> dict[str, str]:
    """What deploy.py's set_env_to_shell adds to motor_common_env (Motor's alarms and log folders read them).
    SERVICE_ID is the job_id alone: deploy.py appends the deploy time, which would change motor-config (and
    Motor's log folder) on every run. NORTH_PLATFORM is left unset: deploy.py writes the text `None` when
    user_config.json has no north_config, and Motor's reader defaults to "" (motor-kvpool takes no north_config)."""
    prefill = settings.motor_engine_prefill_config
    return {
        "ENGINE_TYPE": prefill.engine_type,
        "MODEL_NAME": prefill.engine_config.served_model_name or "Unknown",
        "SERVICE_ID": settings.namespace,
    }


def engine_env(settings: ServiceSettings, side: str, contract: Mapping[str, str]) -> dict[str, Any]:
    """An engine's env: motor_common_env, then its side's section (with motor-kvpool's defaults), then the store
    contract, which env.json may repeat but never contradict."""
    sections = settings.env_sections()
    side_section = rules.engine_env_section(side)
    origin = {name: "motor_common_env" for name in sections["motor_common_env"]}
    origin.update({name: side_section for name in sections[side_section]})
    user = {**sections["motor_common_env"], **sections[side_section]}
    conflicts = sorted(key for key in contract if key in user and env_text(user[key]) != contract[key])
    if conflicts:
        raise EngineEnvConflict(
            "; ".join(
                f"env.{origin[key]}.{key} is {user[key]!r} but the KV store needs {contract[key]!r}" for key in conflicts
            )
            + ". Remove them from env.json: motor-kvpool sets them from the store."
        )
    return {**user, **contract}


def script_envs(settings: ServiceSettings, engine_contract: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """env.json section -> what its set_*_env function exports (motor_common_env and Motor's derived values first,
    as deploy.py merges them). Sections of roles motor-kvpool does not deploy export the common env only; the
    union engine reuses prefill's, as deploy.py does when env.json has no union section."""
    sections = settings.env_sections()
    common = {**sections["motor_common_env"], **motor_derived_env(settings)}
    envs = {section: {**common, **values} for section, values in sections.items()}
    for side in rules.SIDES:
        envs[rules.engine_env_section(side)] = {**common, **engine_env(settings, side, engine_contract)}
    envs["motor_engine_union_env"] = envs[rules.engine_env_section("prefill")]
    return envs
