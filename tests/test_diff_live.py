"""`python -m kvpool diff --live`: the cluster's objects (as `kubectl get -o yaml` or the API server lists them)
against a preview; what the server adds is no difference, what was changed out of band is named."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvpool.cli.preview import preview
from kvpool.cli.views.diff import manifests
from kvpool.cli.views.live_objects import LiveObjectsError, read_live
from kvpool.internal.input_files import InputFileError
from tests.program_runs import PROJECT_DIR

P0, D0 = "deployment-dev-vllm-p0.yaml", "deployment-dev-vllm-d0.yaml"
MOTOR_CONFIG, STORE_SERVICE = "configmap-dev-motor-config.yaml", "service-dev-mindie-motor-kvs-master.yaml"


# What `kvpool diff --live` says of the four out-of-band changes below (tests/e2e/test_drift.py makes them on a cluster):
# the objects, then each changed line from the cluster's value to the preview's.
FOUR_DRIFTS = (
    ["~ manifests/configmap-{ns}-motor-config.yaml (to update)", "~ manifests/deployment-{ns}-vllm-d0.yaml (to update)",
     "~ manifests/deployment-{ns}-vllm-p0.yaml (to update)",
     "+ manifests/service-{ns}-mindie-motor-kvs-master.yaml (to create)"],
    ['-"d_instances_num": 4,', '+"d_instances_num": 1,', "-value: '99999'", "+value: '10000'", "-replicas: 3",
     "+replicas: 1"],
)


def drift_report(lines: list[str], namespace: str) -> tuple[list[str], list[str]]:
    """The object lines of a `kvpool diff` (with the namespace as `{ns}`) and its changed lines, stripped."""
    headline = re.compile(r"[~+-] manifests/")
    objects = [line.replace(f"-{namespace}-", "-{ns}-") for line in lines if headline.match(line)]
    changed = [line[0] + line[1:].strip() for line in lines
               if line[:1] in "+-" and not line.startswith(("---", "+++")) and not headline.match(line)]
    return objects, changed


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("preview")
    preview(PROJECT_DIR, "dev", root)
    return root


def as_served(obj: dict[str, Any]) -> dict[str, Any]:
    """The object as the API server returns it: its own metadata and status, defaulted fields, canonical quantities."""
    served = copy.deepcopy(obj)
    served["metadata"].update(uid="0b6f-e2e", resourceVersion="4711", creationTimestamp="2026-12-01T00:00:00Z")
    if obj["kind"] == "Deployment":
        served["status"] = {"replicas": 1, "readyReplicas": 1}
        served["spec"]["progressDeadlineSeconds"] = 600
        for container in served["spec"]["template"]["spec"]["containers"]:
            container.update(imagePullPolicy="IfNotPresent", terminationMessagePath="/dev/termination-log")
            for limits in container.get("resources", {}).values():
                for name, value in limits.items():
                    if value == "32768Mi":
                        limits[name] = "32Gi"
    return served


def write_live(folder: Path, objects: dict[str, dict[str, Any]]) -> Path:
    """Deployments as the API server lists them (a DeploymentList, items without kind), the rest as `kubectl get -o
    yaml` writes a List."""
    folder.mkdir()
    served = [as_served(obj) for obj in objects.values()]
    deployments = [{k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}
                   for obj in served if obj["kind"] == "Deployment"]
    (folder / "deployments.json").write_text(yaml.safe_dump({"kind": "DeploymentList", "apiVersion": "apps/v1",
                                                             "items": deployments}))
    (folder / "rest.yaml").write_text(yaml.safe_dump({"kind": "List", "apiVersion": "v1", "items": [
        obj for obj in served if obj["kind"] != "Deployment"]}))
    return folder


def kvpool_diff(live: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", "diff", "--live", str(live), str(out), "--stack", "dev"],
                          cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300)


def test_a_cluster_as_previewed_shows_no_difference(out: Path, tmp_path: Path) -> None:
    objects = manifests(out, "dev")
    result = kvpool_diff(write_live(tmp_path / "live", objects), out)
    assert result.returncode == 0, result.stderr
    assert f"Diff: 0 to create, 0 to update, 0 to delete, {len(objects)} unchanged" in result.stdout.splitlines()


def test_each_out_of_band_change_is_named(out: Path, tmp_path: Path) -> None:
    """Engine Deployment scaled, an env var edited, motor-config edited, the store Service deleted."""
    objects = copy.deepcopy(manifests(out, "dev"))
    objects[P0]["spec"]["replicas"] = 3
    env = objects[D0]["spec"]["template"]["spec"]["containers"][0]["env"]
    edited = next(entry for entry in env if entry.get("value") == "10000")
    edited["value"] = "99999"
    config = objects[MOTOR_CONFIG]["data"]
    config["user_config.json"] = config["user_config.json"].replace('"d_instances_num": 1', '"d_instances_num": 4')
    del objects[STORE_SERVICE]
    result = kvpool_diff(write_live(tmp_path / "live", objects), out)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert drift_report(lines, "dev") == FOUR_DRIFTS
    assert f"Diff: 1 to create, 3 to update, 0 to delete, {len(objects) - 3} unchanged" in lines
    assert "  Deployment dev/vllm-d0: containers[vllm].env[ASCEND_CONNECT_TIMEOUT]" in lines  # the edited variable
    assert lines[-1] == "Blast radius: 1 workload rolls (vllm-d0: env), 0 replaced; KV pool loses the share of vllm-d0."


def test_a_folder_without_objects_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("just: text\n")
    with pytest.raises(LiveObjectsError, match=r"notes.yaml: a document without `kind`; expected `kubectl get -o yaml`"):
        read_live(tmp_path)


def test_a_live_configmap_whose_data_is_an_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    """Issue 45 §4: yaml.safe_load_all expanded this to 3 GiB and hung; the live reader has the others' bounds."""
    levels = [f"l{index}: &l{index} [{', '.join([f'*l{index - 1}'] * 9)}]" for index in range(1, 10)]
    bomb = "\n".join(["l0: &l0 [lol]", *levels])
    (tmp_path / "live.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: motor-config, namespace: dev}\ndata:\n"
        + "".join(f"  {line}\n" for line in bomb.splitlines())
    )
    with pytest.raises(InputFileError) as caught:
        read_live(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'live.yaml'}:11: aliases expand the document beyond 200000 values; write the sections out "
        "instead of multiplying them with anchors"
    )
