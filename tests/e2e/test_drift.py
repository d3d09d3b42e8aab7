"""Drift, changed out of band on the cluster: an engine Deployment scaled, an engine env var edited, motor-config
edited, the store Service deleted. `pulumi preview --refresh` shows each, `pulumi up --refresh` restores it, and
`kvpool diff --live` of the live objects against the offline preview names it. One copy of `dev` in its own
namespace takes all four changes at once: each is a different object, and each is asserted on its own."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_stacks import manifests
from tests.e2e.realengine import FORCE, REPO, Cluster, PulumiWorkspace
from tests.e2e.stack_objects import copy_of
from tests.e2e.views import (
    api_path,
    kube_name,
    live_differences,
    offline_in_copy_to,
    preview_json,
    split_urn,
)
from tests.test_diff_live import FOUR_DRIFTS, drift_report

pytestmark = pytest.mark.e2e

STACK = "drift"
MERGE_PATCH = "application/merge-patch+json"


def drift(cluster: Cluster) -> None:
    base = f"/apis/apps/v1/namespaces/{STACK}/deployments"
    cluster.request("PATCH", f"{base}/vllm-p0", {"spec": {"replicas": 3}}, MERGE_PATCH)
    decode = cluster.get(f"{base}/vllm-d0")
    env = decode["spec"]["template"]["spec"]["containers"][0]["env"]
    edited = next(entry for entry in env if entry["name"] == "ASCEND_CONNECT_TIMEOUT")
    edited["value"] = "99999"
    cluster.request("PUT", f"{base}/vllm-d0", decode)
    config = cluster.get(f"/api/v1/namespaces/{STACK}/configmaps/motor-config")
    config["data"]["user_config.json"] = config["data"]["user_config.json"].replace(
        '"d_instances_num": 1', '"d_instances_num": 4')
    cluster.request("PUT", f"/api/v1/namespaces/{STACK}/configmaps/motor-config", config)
    cluster.request("DELETE", f"/api/v1/namespaces/{STACK}/services/mindie-motor-kvs-master")


def live_folder(cluster: Cluster, preview: list[dict], folder: Path) -> Path:
    """What `kubectl get <kind> -n drift -o yaml` writes, one file per object the preview names that the API server
    holds (the README's command; no kubectl is built here, the API server's answer is the same object)."""
    folder.mkdir()
    for obj in preview:
        live = cluster.get(api_path(obj))
        if live is not None:
            live.setdefault("apiVersion", obj["apiVersion"])
            live.setdefault("kind", obj["kind"])
            (folder / f"{obj['kind']}-{obj['metadata']['name']}.yaml").write_text(yaml.safe_dump(live))
    return folder


def test_out_of_band_changes_are_shown_restored_and_named(
    workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path
) -> None:
    copy_of(workspace, cluster, "dev", STACK, offline_out)
    workspace.run("up", "--yes", "--skip-preview", "-s", STACK, timeout=1200).check()
    out = e2e_tmp / "drift-preview"
    assert offline_in_copy_to(workspace, STACK, out).returncode == 0
    preview = manifests(out, STACK)
    drift(cluster)

    # kvpool diff of the live objects against the preview, without the CLI
    live = live_folder(cluster, preview, e2e_tmp / "drift-live")
    result = subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "diff", "--live", str(live), str(out), "--stack", STACK,
         "--project-dir", str(workspace.project)],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert drift_report(result.stdout.splitlines(), STACK) == FOUR_DRIFTS

    # the engine's own view: a refresh reads the drift, the preview puts each object back
    # The drifted fields belong to the editor's field manager: the provider's dry-run apply conflicts on them unless
    # forced (measured: "Server-Side Apply field conflict detected ... conflict with Python-urllib").
    data, shown = preview_json(workspace, STACK, "--refresh", extra_env=FORCE)
    assert shown.returncode == 0, shown.output[-4000:]
    changes = {(step["op"], split_urn(step["urn"])[0], kube_name(step)) for step in data["steps"]
               if step["op"] not in ("same", "refresh", "read")}
    assert changes == {
        ("update", "kubernetes:core/v1:ConfigMap", "motor-config"),
        ("update", "kubernetes:apps/v1:Deployment", "vllm-d0"),
        ("update", "kubernetes:apps/v1:Deployment", "vllm-p0"),
        ("create", "kubernetes:core/v1:Service", "mindie-motor-kvs-master"),
    }, json.dumps(data["steps"])[-4000:]

    # The README's command: the drifted fields now belong to another field manager, whose values only a forced
    # server-side apply takes back (the provider's PULUMI_K8S_ENABLE_PATCH_FORCE).
    workspace.run("up", "--refresh", "--yes", "--skip-preview", "-s", STACK, timeout=1200, extra_env=FORCE).check()
    assert live_differences(cluster, preview) == []
    workspace.run("preview", "--refresh", "--expect-no-changes", "-s", STACK, timeout=900).check()
