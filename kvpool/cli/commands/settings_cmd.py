"""`python -m kvpool settings`: the settings a stack runs with, every default filled in, as JSON.

Examples:
    python -m kvpool settings --stack dev
    python -m kvpool settings --stack mooncake-ha --section kv_cache_store_config

Prints what Motor reads (the effective user_config.json in ConfigMap motor-config), env.json's sections with
motor-kvpool's defaults (`env`), what each Motor role's container gets from them (`role_env`: the engines, the
controller and the coordinator; the store's and conductor's addresses are added at deploy time), and motor-kvpool's
own settings (how the store is deployed, the switches). secret_env is listed by name only: its values stay secrets.
`--section` prints one section of the stack as the program runs it: any top-level key of the stack file
(kv_cache_store_config with motor-kvpool's deployment keys too; null for a section left unset).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kvpool.cli.commands import exit_codes, options
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.offline import stack_settings
from kvpool.errors import KvpoolError
from kvpool.policies import rules
from kvpool.settings.from_stack import SECRET_ENV_KEY
from kvpool.settings.loader import PULUMI_CONFIG_KEYS
from kvpool.settings.service import MOTOR_KVPOOL_OWN_KEYS, PROJECT, ServiceSettings
from kvpool.settings.store import DEPLOYMENT_ONLY_STORE_KEYS


class UnknownSectionError(KvpoolError):
    """--section names no section of the settings."""


def effective_settings(settings: ServiceSettings, secret_env_names: list[str]) -> dict[str, Any]:
    store = settings.kv_cache_store_config
    store_deployment = store.model_dump(mode="json", include=DEPLOYMENT_ONLY_STORE_KEYS) if store else None
    return {
        "user_config": settings.user_config(),
        "env": settings.env_sections(),
        "role_env": role_envs(settings),
        "motor_kvpool": {
            **settings.model_dump(mode="json", include=set(MOTOR_KVPOOL_OWN_KEYS)),
            SECRET_ENV_KEY: {name: "[secret]" for name in secret_env_names},
            # How the store is deployed (HA, resources, protection, consumers): motor-kvpool's, not Motor's.
            "kv_cache_store_config": store_deployment,
        },
    }


def role_envs(settings: ServiceSettings) -> dict[str, dict[str, Any]]:
    """What each Motor role's container gets from env.json: motor_common_env under the role's own section."""
    sections = settings.env_sections()
    common = sections["motor_common_env"]
    return {
        **rules.engine_envs(sections),
        "controller": {**common, **sections["motor_controller_env"]},
        "coordinator": {**common, **sections["motor_coordinator_env"]},
    }


def section_of(document: dict[str, Any], section: str) -> Any:
    """A stack section as the program runs it: any top-level key of the stack (null where a section is unset), and
    user_config's version. kv_cache_store_config: Motor's keys and motor-kvpool's own (HA, resources, protection,
    consumers), which only the store's deployment reads."""
    user_config, own = document["user_config"], document["motor_kvpool"]
    sections = {"version": user_config["version"]}
    for key in (*PULUMI_CONFIG_KEYS, SECRET_ENV_KEY):
        if key == "env":
            sections[key] = document["env"]
        elif key in own and key != "kv_cache_store_config":  # motor-kvpool's own keys
            sections[key] = own[key]
        else:
            sections[key] = user_config.get(key)  # None: a Motor section left unset
    if section not in sections:
        raise UnknownSectionError(f"--section {section}: not in the settings; known: {', '.join(sections)}")
    if section == "kv_cache_store_config" and sections[section] is not None:
        return {**sections[section], **own["kv_cache_store_config"]}
    return sections[section]


def _secret_env_names(text: str | None) -> list[str]:
    try:
        data = json.loads(text or "{}")
    except json.JSONDecodeError:
        return []  # an encrypted whole object: its names are secret too
    return sorted(data) if isinstance(data, dict) else []


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "settings", help="print a stack's settings with every default filled in", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    options.add_stack(parser)
    parser.add_argument("--project-dir", type=Path, default=Path("."), help="folder of Pulumi.yaml (default: .)")
    parser.add_argument(
        "--section", help="print only this section of the stack: any top-level key (e.g. kv_cache_store_config, env, rollout)"
    )
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    config = load_stack_config(args.project_dir, args.stack)
    settings = stack_settings(config)
    document = effective_settings(settings, _secret_env_names(config.values.get(f"{PROJECT}:{SECRET_ENV_KEY}")))
    if args.section is not None:
        document = section_of(document, args.section)
    print(json.dumps(document, indent=2, ensure_ascii=False))
    return exit_codes.OK
