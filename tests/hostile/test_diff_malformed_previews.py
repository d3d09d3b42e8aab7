"""`kvpool diff` on preview folders that `kvpool preview` did not write as they are: a manifest that is a list, a
scalar or a link, an outputs.json that is a list, and any field of any object or output replaced by a value of
another type. Each is refused naming the file (exit 1) or compared; never an internal error (exit 2)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvpool.cli.commands.cli import main
from kvpool.cli.preview import preview
from tests.hostile.test_mutated_stacks import paths_of
from tests.program_runs import PROJECT_DIR

STACK = "dev"
JUNK = [None, 0, -1, "x", "", True, [], [1, "a"], {}, {"a": [None]}]


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("base")
    with contextlib.redirect_stdout(io.StringIO()):
        preview(PROJECT_DIR, STACK, root)
    return root


def diff(old: Path, new: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["diff", str(old), str(new), "--stack", STACK, "--project-dir", str(PROJECT_DIR)])
    return code, err.getvalue()


def copy_of(base: Path, folder: Path) -> Path:
    shutil.copytree(base, folder)
    return folder


def first_manifest(root: Path) -> Path:
    return sorted((root / STACK / "manifests").glob("*.yaml"))[0]


@pytest.mark.parametrize(("text", "problem"), [
    ("- 1\n", "is not one Kubernetes object (a mapping with apiVersion, kind, metadata.name) as kvpool preview "
              "writes it; preview again"),
    ("42\n", "is not one Kubernetes object (a mapping with apiVersion, kind, metadata.name) as kvpool preview "
             "writes it; preview again"),
    ("kind: [\n", "is not YAML (while parsing a flow node); preview again"),
])
def test_a_manifest_that_is_no_object_is_refused_naming_it(base, tmp_path, text, problem) -> None:
    new = copy_of(base, tmp_path / "new")
    first_manifest(new).write_text(text)
    assert diff(base, new) == (1, f"error: {first_manifest(new)}: {problem}\n")


def test_a_linked_manifest_is_refused_unread(base, tmp_path) -> None:
    new = copy_of(base, tmp_path / "new")
    linked = first_manifest(new)
    linked.unlink()
    linked.symlink_to("/etc/passwd")
    assert diff(base, new) == (1, f"error: {linked}: is a link; kvpool preview writes regular files only: preview "
                                  "again into a fresh --out folder\n")


@pytest.mark.parametrize(("text", "problem"), [
    ("[]", "is not a JSON object of the stack's outputs; preview again"),
    ("{", "is not JSON (Expecting property name enclosed in double quotes); preview again"),
])
def test_outputs_that_are_no_object_are_refused_naming_them(base, tmp_path, text, problem) -> None:
    new = copy_of(base, tmp_path / "new")
    (new / STACK / "outputs.json").write_text(text)
    assert diff(base, new) == (1, f"error: {new / STACK / 'outputs.json'}: {problem}\n")


def _paths(value: Any) -> list[tuple]:
    """Every path to a node of a JSON-like value (the value itself first)."""
    return [(), *paths_of(value)]


def _replaced(value: Any, path: tuple, junk: Any) -> Any:
    if not path:
        return junk
    copied = json.loads(json.dumps(value))
    node = copied
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = junk
    return copied


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_field_of_another_type_is_refused_or_compared(base, data) -> None:
    names = sorted(path.name for path in (base / STACK / "manifests").glob("*.yaml")) + ["outputs.json"]
    name = data.draw(st.sampled_from(names), label="file")
    with tempfile.TemporaryDirectory() as folder:
        new = copy_of(base, Path(folder) / "new")
        path = new / STACK / ("outputs.json" if name == "outputs.json" else f"manifests/{name}")
        value = json.loads(path.read_text()) if name == "outputs.json" else yaml.safe_load(path.read_text())
        where = data.draw(st.sampled_from(_paths(value)), label="path")
        changed = _replaced(value, where, data.draw(st.sampled_from(JUNK), label="value"))
        path.write_text(json.dumps(changed) if name == "outputs.json" else yaml.safe_dump(changed))
        code, err = diff(base, new)
        # the changed file on the new side, then with the sides swapped (what a deleted field looks like)
        swapped, swapped_err = diff(new, base)
    assert code in (0, 1) and "internal error" not in err, err
    assert swapped in (0, 1) and "internal error" not in swapped_err, swapped_err


def live_diff(live: Path, new: Path) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["diff", "--live", str(live), str(new), "--stack", STACK, "--project-dir", str(PROJECT_DIR)])
    return code, err.getvalue()


@pytest.mark.parametrize(("text", "problem"), [
    ("- 1\n", "a document without `kind`; expected `kubectl get -o yaml` output"),
    ("kind: Deployment\nmetadata: 3\n", "a Deployment without metadata.name"),
    ("kind: DeploymentList\napiVersion: v1\nitems: 7\n", "a DeploymentList whose items are not a list of objects"),
    ("kind: [1]\n", "a document without `kind`; expected `kubectl get -o yaml` output"),
])
def test_live_objects_that_are_no_objects_are_refused_naming_the_file(base, tmp_path, text, problem) -> None:
    (tmp_path / "live").mkdir()
    (tmp_path / "live" / "dev.yaml").write_text(text)
    assert live_diff(tmp_path / "live", base) == (1, f"error: {tmp_path / 'live' / 'dev.yaml'}: {problem}\n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_field_of_a_live_object_of_another_type_is_refused_or_compared(base, data) -> None:
    """The cluster's objects as the preview wrote them (no drift), one field replaced by a value of another type."""
    objects = [yaml.safe_load(path.read_text()) for path in sorted((base / STACK / "manifests").glob("*.yaml"))]
    index = data.draw(st.integers(0, len(objects) - 1), label="object")
    where = data.draw(st.sampled_from(_paths(objects[index])), label="path")
    objects[index] = _replaced(objects[index], where, data.draw(st.sampled_from(JUNK), label="value"))
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "dev.yaml").write_text(yaml.safe_dump_all(objects))
        code, err = live_diff(Path(folder), base)
    assert code in (0, 1) and "internal error" not in err, err
