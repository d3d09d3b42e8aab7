"""bench/floor/: the floor program of bench/floor.py declares exactly the objects a preview wrote, file for file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bench.floor import ROOT, check_same_objects, floor_project
from kvpool.cli.preview import preview
from tests.program_runs import PROJECT_DIR


@pytest.fixture(scope="module")
def dev_manifests(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("out")
    preview(PROJECT_DIR, "dev", out)
    return out / "dev" / "manifests"


def test_the_floor_declares_exactly_the_dev_previews_objects(dev_manifests: Path, tmp_path: Path) -> None:
    floor = floor_project(tmp_path / "floor", {1: dev_manifests})
    check_same_objects(floor, "n1", dev_manifests)  # raises SystemExit naming the files that differ


def test_an_object_the_floor_declares_differently_is_named(dev_manifests: Path, tmp_path: Path) -> None:
    floor = floor_project(tmp_path / "floor", {1: dev_manifests})
    changed = tmp_path / "changed"
    changed.mkdir()
    for path in dev_manifests.glob("*.yaml"):
        (changed / path.name).write_text(path.read_text())
    (changed / "namespace-_cluster-dev.yaml").write_text("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: other\n")
    with pytest.raises(SystemExit, match=r"does not declare the objects of .*changed: namespace-_cluster-dev\.yaml$"):
        check_same_objects(floor, "n1", changed)


def test_the_floors_namespaced_objects_depend_on_their_namespace(dev_manifests: Path, tmp_path: Path) -> None:
    """Without it `pulumi up` of the floor creates them with the Namespace at once and can fail (bench/floor)."""
    from kvpool.cli.engine.mock_engine import run_program
    from kvpool.cli.engine.stack_config import load_stack_config

    floor = floor_project(tmp_path / "floor", {1: dev_manifests})
    run = run_program(floor, load_stack_config(floor, "n1"))
    namespace = next(r.urn for r in run.resources if r.type == "kubernetes:core/v1:Namespace")
    depending = {r.name for r in run.resources if r.dependencies == (namespace,)}
    in_dev = {r.name for r in run.resources if r.custom and r.inputs.get("metadata", {}).get("namespace") == "dev"}
    assert depending == in_dev
    assert "deployment-dev-vllm-p0" in depending and "role-kube-system-mindie-controller-configmaps-dev" not in depending
    assert len(depending) == 15


def test_the_floors_empty_pack_is_a_policy_pack_that_checks_nothing(dev_manifests: Path, tmp_path: Path) -> None:
    """bench/floor/empty_pack prices the policy protocol: it runs as any pack does, has one policy and reports
    nothing about the floor's objects; the floor's copy names the project's virtualenv, as the CLI needs it."""
    floor = floor_project(tmp_path / "floor", {1: dev_manifests})
    pack = floor / "empty_pack"
    manifest = yaml.safe_load((pack / "PulumiPolicy.yaml").read_text())
    assert manifest["runtime"] == {"name": "python", "options": {"toolchain": "pip", "virtualenv": str(ROOT / "venv")}}
    result = preview(floor, "n1", tmp_path / "out", policy_pack=pack)
    report = result.policy_report
    assert (report.pack_name, report.pack_version) == ("floor-empty", "0.1.0")
    assert [(policy.name, policy.enforcement_level) for policy in report.policies] == [("checks-nothing", "advisory")]
    assert report.violations == []
    assert len(result.manifest_files) == len(list(dev_manifests.glob("*.yaml")))
