"""ConfigMap `motor-config`: the effective user_config.json that Motor's in-pod code reads (and re-syncs every
10 s), plus Motor's startup scripts read at deploy time from the folder the stack names."""

from __future__ import annotations

import json
from pathlib import Path

from components.errors import KvpoolError
from components.settings import ServiceSettings

MOTOR_CONFIG_NAME = "motor-config"
USER_CONFIG_KEY = "user_config.json"


class MotorScriptsError(KvpoolError):
    """motor_scripts_dir is unset where it is needed, unreadable, or lacks boot.sh."""


def render_user_config(settings: ServiceSettings) -> str:
    """Stable text: key order as Motor writes its files, so an unchanged config never shows a diff."""
    return json.dumps(settings.user_config(), indent=2, ensure_ascii=False) + "\n"


def read_motor_scripts(settings: ServiceSettings, project_dir: Path) -> dict[str, str]:
    """Every file of motor_scripts_dir by name. Never copied into this repository: Motor's code stays Motor's."""
    if settings.motor_scripts_dir is None:
        return {}
    folder = project_dir / settings.motor_scripts_dir
    if not folder.is_dir():
        raise MotorScriptsError(f"motor_scripts_dir: {folder} is not a folder; point it at Motor's examples/deployer/startup")
    try:
        scripts = {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.iterdir()) if path.is_file()}
    except (OSError, UnicodeDecodeError) as error:
        raise MotorScriptsError(f"motor_scripts_dir: cannot read {folder} as text files: {error}") from None
    if "boot.sh" not in scripts:
        raise MotorScriptsError(f"motor_scripts_dir: {folder} has no boot.sh; point it at Motor's examples/deployer/startup")
    if USER_CONFIG_KEY in scripts:
        raise MotorScriptsError(f"motor_scripts_dir: {folder} holds a {USER_CONFIG_KEY}; the effective one is generated")
    return scripts


def motor_config_data(settings: ServiceSettings, project_dir: Path) -> dict[str, str]:
    return {**read_motor_scripts(settings, project_dir), USER_CONFIG_KEY: render_user_config(settings)}
