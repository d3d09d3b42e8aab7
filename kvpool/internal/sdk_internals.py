"""Every use of the Pulumi Python SDK's non-public internals, in one place, written for the SDK version pinned in
requirements.txt (SDK_VERSION; tests/test_sdk_internals.py fails on any other, so an upgrade re-checks these).

- The program lists its stack's config keys: the SDK offers `Config.get` per key but no listing, and the offline
  preview and the CLI's language host put config in different places (runtime state or environment).
- The offline engine (kvpool/cli/engine/mock_engine.py) runs a program to completion in its own root stack, as the
  language host does, serializes its exports as the engine stores them, and resets the SDK's module-level state
  between runs, which `set_mocks` does not.
"""

from __future__ import annotations

from typing import Any, Callable

import pulumi.runtime
from pulumi.runtime import config as runtime_config
from pulumi.runtime import rpc, settings
from pulumi.runtime.stack import massage, run_in_stack

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


def set_mocks_without_root_stack(mocks: Any, **options: Any) -> None:
    """`pulumi.runtime.set_mocks`, minus the finished root stack it makes for unit tests (it makes one only when
    there is none): `run_program` makes the program's own, so that an entry point given to `pulumi.run` runs."""
    settings.ROOT.set(object())
    try:
        pulumi.runtime.set_mocks(mocks, **options)
    finally:
        settings.ROOT.set(None)


async def run_program(program: Callable[[], Any]) -> Any:
    """Run the program in a new root stack as the language host does (its `pulumi.run` entry point included),
    wait for every registration and apply (re-raising the first failure), and return its exports serialized
    exactly as the engine would store them (secrets marked)."""
    await run_in_stack(program)
    return await rpc.serialize_properties(massage(settings.get_root_resource().outputs, []), {})


def reset_state() -> None:
    """Clear what `set_mocks` leaves from a previous run: the root stack, pending outputs and RPCs."""
    settings.ROOT.set(None)
    settings.SETTINGS.outputs.clear()
    settings.SETTINGS.rpc_manager.clear()


def leftover_state() -> tuple[Any, dict[str, Any], int]:
    """What the SDK holds between runs: (root resource, config, pending outputs); (None, {}, 0) once reset."""
    return settings.get_root_resource(), dict(runtime_config.CONFIG.get()), len(settings.SETTINGS.outputs)
