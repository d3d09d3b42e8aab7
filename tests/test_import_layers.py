"""The library (kvpool/ but the command's kvpool/cli/) reads bottom-up: facts -> settings -> component arguments ->
components -> program. No import circle (every module imports alone, and the import graph, function-level imports and
parent packages included, has no cycle), the settings reach nothing that builds resources (no module that uses
pulumi_kubernetes or declares Pulumi components or resource options), and nothing of it imports the command."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from tests.program_runs import PROJECT_DIR

LIBRARY = PROJECT_DIR / "kvpool"
COMMAND = "kvpool.cli"
SETTINGS = ("kvpool.settings.service", "kvpool.settings.loader")


def module_name(path: Path) -> str:
    parts = path.relative_to(PROJECT_DIR).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {
    name: path for path in sorted(LIBRARY.rglob("*.py"))
    if not (name := module_name(path)).startswith(COMMAND) and not name.endswith("__main__")
}


def imported(path: Path) -> set[str]:
    """Every module `path` imports, anywhere in it (functions too), as dotted names."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def with_parents(name: str) -> set[str]:
    """Importing a.b.c runs a/__init__ and a/b/__init__ first."""
    parts = name.split(".")
    return {".".join(parts[:index]) for index in range(1, len(parts) + 1)}


def graph() -> dict[str, set[str]]:
    """Module -> the modules importing it runs. A module's own parent packages are left out unless it imports them by
    name: Python initialises them before the module, so a package __init__ that re-exports its children (kvpool.components)
    is no cycle; `from kvpool.components import X` inside one of those children would be, and is kept."""
    edges = {}
    for name, path in MODULES.items():
        modules = imported(path)
        targets = set().union(*(with_parents(module) for module in modules))
        ancestors = with_parents(name) - {name}
        edges[name] = {target for target in targets
                       if target in MODULES and target != name and (target not in ancestors or target in modules)}
    return edges


def cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import cycle, as the modules along it, or None."""
    state: dict[str, str] = {}
    trail: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        trail.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == "open":
                return trail[trail.index(target):] + [target]
            if target not in state and (found := visit(target)):
                return found
        state[node] = "done"
        trail.pop()
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)):
            return found
    return None


def builds_resources(path: Path) -> bool:
    text = path.read_text()
    uses_kubernetes = any(module.split(".")[0] == "pulumi_kubernetes" for module in imported(path))
    return uses_kubernetes or "ComponentResource" in text or "ResourceOptions" in text


def reachable(edges: dict[str, set[str]], start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo += edges[node]
    return seen


def test_the_import_graph_of_the_library_has_no_cycle() -> None:
    assert len(MODULES) > 60
    assert cycle(graph()) is None


def test_the_library_never_imports_the_command() -> None:
    offenders = sorted(name for name, path in MODULES.items()
                       if any(module.startswith(COMMAND) for module in imported(path)))
    assert offenders == []


def test_a_child_that_imports_its_re_exporting_package_by_name_is_a_cycle(tmp_path, monkeypatch) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from pkg.child import X\n")
    (package / "child.py").write_text("from pkg import Y\nX = 1\n")
    monkeypatch.setitem(MODULES, "pkg", package / "__init__.py")
    monkeypatch.setitem(MODULES, "pkg.child", package / "child.py")
    assert cycle({name: edges for name, edges in graph().items() if name.startswith("pkg")}) == ["pkg", "pkg.child", "pkg"]


def test_the_cycle_finder_finds_one() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


def test_the_settings_reach_nothing_that_builds_resources() -> None:
    edges = graph()
    for start in SETTINGS:
        builders = sorted(name for name in reachable(edges, start) if builds_resources(MODULES[name]))
        assert builders == [], f"{start} reaches modules that build resources: {builders}"
    assert builds_resources(MODULES["kvpool.components.engine_pool"])


def test_every_module_imports_alone() -> None:
    """In one fresh interpreter, each module is imported with every kvpool module forgotten first, so a module that
    works only when another was imported before it fails here."""
    script = (
        "import importlib, sys\n"
        f"for name in {sorted(MODULES)!r}:\n"
        "    for loaded in [m for m in sys.modules if m == 'kvpool' or m.startswith('kvpool.')]:\n"
        "        del sys.modules[loaded]\n"
        "    importlib.import_module(name)\n"
        "print('imported', len(" + repr(sorted(MODULES)) + "))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == f"imported {len(MODULES)}"
