"""Every use of the Pulumi Python SDK's non-public internals, in one place, written for the SDK version pinned in
requirements.txt (SDK_VERSION; tests/test_sdk_internals.py fails on any other, so an upgrade re-checks these).

- The program lists its stack's config keys: the SDK offers `Config.get` per key but no listing, and the offline
  preview and the CLI's language host put config in different places (runtime state or environment).
- The offline engine (kvpool/mock_engine.py) runs a program to completion and serializes its exports as the
  engine stores them, and resets the SDK's module-level state between runs, which `set_mocks` does not.
"""

from __future__ import annotations

from typing import Any, Callable

from pulumi.runtime import config as runtime_config
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import massage, run_pulumi_func

SDK_VERSION = "3.272.0"


def config_texts(prefix: str) -> dict[str, str]:
    """Every config key starting with `prefix` and its raw text, wherever the language host put it."""
    keys = set(runtime_config.CONFIG.get()) | set(runtime_config.get_config_env())
    return {key: runtime_config.get_config(key) or "" for key in keys if key.startswith(prefix)}


def secret_config_keys(keys: set[str]) -> set[str]:
    """Which of `keys` the CLI marked secret (in the runtime's set or the environment)."""
    return {key for key in keys if runtime_config.is_config_secret(key)} | set(runtime_config.get_config_secret_keys_env())


def raw_config(key: str) -> str | None:
    """A key's raw text without reading its value as an Output (reading a secret outside one logs it as plain)."""
    return runtime_config.get_config(key)


async def run_program(program: Callable[[], Any]) -> Any:
    """Run the program, wait for every registration and apply (re-raising the first failure), and return its
    exports serialized exactly as the engine would store them (secrets marked)."""
    await run_pulumi_func(program)
    return await rpc.serialize_properties(massage(settings.get_root_resource().outputs, []), {})


def reset_state() -> None:
    """Clear what `set_mocks` leaves from a previous run: the root stack, pending outputs and RPCs."""
    settings.ROOT.set(None)
    settings.SETTINGS.outputs.clear()
    settings.SETTINGS.rpc_manager.clear()
