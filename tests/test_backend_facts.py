"""A backend's knowledge stays in one place (issue 46): its plain facts in kvpool/policies/rules/backends.py, its
rendering in its own module's RENDERER (kvpool/components/kv_store/registry.py finds it by name), its settings class in
kvpool/settings/store.py. Everywhere else reads a fact; a backend's name literal or an isinstance on its settings
class is a branch this scan refuses."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import pytest

from kvpool.components.kv_store.registry import Renderer, renderer
from kvpool.policies import rules
from kvpool.settings.engine import ConnectorExtraConfig
from kvpool.settings.store import STORE_CONFIGS, StoreConfig

PACKAGE = Path(__file__).resolve().parents[1] / "kvpool"
STORE_CLASSES = {config.__name__ for config in STORE_CONFIGS}
ALLOWED = {
    "policies/rules/backends.py",  # the facts
    "components/kv_store/mooncake.py", "components/kv_store/memcache.py", "components/kv_store/yuanrong.py",
    "components/kv_store/registry.py",  # the renderers by name
    "settings/store.py",  # the settings classes: a discriminated union's tags must be literals
}


def offences(source: str) -> list[tuple[int, str]]:
    """(line, what) for each backend name literal and each isinstance on a backend's settings class."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in rules.BACKENDS:
            found.append((node.lineno, repr(node.value)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            named = {part.id if isinstance(part, ast.Name) else part.attr
                     for part in ast.walk(node.args[1]) if isinstance(part, (ast.Name, ast.Attribute))}
            found += [(node.lineno, f"isinstance(..., {name})") for name in sorted(named & STORE_CLASSES)]
    return sorted(found)


def test_the_scan_finds_a_name_literal_and_an_isinstance_on_a_store_class() -> None:
    source = ('if store.backend == "yuanrong":\n    pass\n'
              'ok = isinstance(store, (settings.MooncakeStoreConfig, dict))\n'
              'text = "a yuanrong pool"\n')
    assert offences(source) == [(1, "'yuanrong'"), (3, "isinstance(..., MooncakeStoreConfig)")]


def test_no_module_outside_the_allowed_ones_branches_on_a_backend() -> None:
    found = {str(path.relative_to(PACKAGE)): where for path in sorted(PACKAGE.rglob("*.py"))
             if str(path.relative_to(PACKAGE)) not in ALLOWED and (where := offences(path.read_text()))}
    assert found == {}, "read a fact of rules.BACKENDS or the backend's renderer (registry.renderer) instead"


def test_the_facts_the_settings_and_the_renderers_name_the_same_backends_in_one_order() -> None:
    assert list(rules.BACKENDS) == ["mooncake", "memcache", "yuanrong"]
    assert [typing.get_args(config.model_fields["backend"].annotation) for config in STORE_CONFIGS] == [
        (name,) for name in rules.BACKENDS]
    assert typing.get_args(typing.get_args(StoreConfig)[0]) == STORE_CONFIGS
    assert all(isinstance(renderer(name), Renderer) for name in rules.BACKENDS)
    assert typing.get_args(typing.get_args(ConnectorExtraConfig.model_fields["backend"].annotation)[0]) == tuple(
        rules.BACKENDS)
    assert rules.DEFAULT_BACKEND in rules.BACKENDS


def test_a_name_outside_the_facts_has_no_renderer() -> None:
    with pytest.raises(KeyError, match=r"'ucm' is not one of rules.BACKENDS \(mooncake, memcache, yuanrong\)"):
        renderer("ucm")
