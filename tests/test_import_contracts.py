"""The library's layers, kept by a maintained tool: import-linter runs pyproject.toml's [tool.importlinter] contracts
(cli | component_package > program > components > settings > internal > policies.rules > errors; internal imports no
settings, component, program or command; the components read their own arguments, never ServiceSettings; the policy
pack stands on the rules alone) over the import graph grimp
builds, function-level imports and indirect chains included. tests/test_import_layers.py keeps what import-linter has
no contract for (no cycle, every module imports alone, the settings reach nothing that builds resources)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.program_runs import PROJECT_DIR

LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def lint_imports(project: Path) -> subprocess.CompletedProcess[str]:
    """lint-imports on `project`'s pyproject.toml, from its root (import-linter puts the working directory first on
    sys.path, so it is that folder's kvpool/ that is analysed); no cache written into the tree."""
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", "pyproject.toml", "--no-cache", "--no-logo"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )


def test_the_import_contracts_are_kept() -> None:
    done = lint_imports(PROJECT_DIR)
    assert done.returncode == 0, f"an import contract is broken:\n{done.stdout[-6000:]}{done.stderr[-2000:]}"
    assert "4 kept, 0 broken" in done.stdout, done.stdout


@pytest.mark.parametrize(("module", "source", "broken"), [
    ("kvpool/internal/zz_reads_settings.py", "from kvpool.settings.service import ServiceSettings\n",
     ["the rendering helpers (kvpool.internal) import no settings", "cli | component_package > program"]),
    # and through the wiring it reaches ServiceSettings: an indirect chain breaks the contract too
    ("kvpool/components/zz_wires.py", "def late():\n    from kvpool.program import args\n",
     ["cli | component_package > program", "the components (kvpool.components) read their own arguments"]),
    # below the components in the layers, but a component's settings are its arguments, built by kvpool.program.args
    ("kvpool/components/kv_store/zz_reads_service.py", "from kvpool.settings.service import ServiceSettings\n",
     ["the components (kvpool.components) read their own arguments"]),
    ("kvpool/policies/zz_renders.py", "from kvpool.internal import labels\n", ["the policy pack (kvpool.policies"]),
])
def test_an_import_against_the_layers_breaks_its_contract(tmp_path: Path, module: str, source: str,
                                                          broken: list[str]) -> None:
    """In a copy of the tree, one module that imports upwards (a function-level import too) breaks exactly the
    contracts it crosses, and the report names the importing module."""
    shutil.copytree(PROJECT_DIR / "kvpool", tmp_path / "kvpool", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT_DIR / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / module).write_text(source)
    done = lint_imports(tmp_path)
    report = " ".join(done.stdout.split())  # the report wraps long names
    assert done.returncode == 1, report
    for name in broken:
        assert f"{name}" in report and "BROKEN" in report, report
    assert f"{len(broken)} broken" in report, report
    assert module.removesuffix(".py").replace("/", ".") in report, report
