"""A stack's objects three ways, to say whether it converged: what the Pulumi state records, what the API server
holds (every object labelled as the stack's, so an orphan shows), and what the offline preview wants; plus what an
interrupted CLI leaves in the file backend (pending operations, lock files, an emptied checkpoint sidecar). Also a
copy of an example stack in its own namespace, for tests that break it."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any, Callable

import psutil
import yaml

from tests.e2e.cluster_stacks import ensure_nodes, manifests
from tests.e2e.realengine import Cluster, PulumiWorkspace
from tests.e2e.views import collection_path
from tests.outside import absent

ObjectKey = tuple[str, str, str]  # kind, namespace ("" when cluster-scoped), name
PART_OF = "app.kubernetes.io/part-of"


def key_of(obj: dict[str, Any]) -> ObjectKey:
    return obj["kind"], obj["metadata"].get("namespace") or "", obj["metadata"]["name"]


def checkpoint(workspace: PulumiWorkspace, stack: str) -> dict[str, Any]:
    return workspace.state(stack)["checkpoint"].get("latest") or {}


def state_objects(workspace: PulumiWorkspace, stack: str) -> set[ObjectKey]:
    """The Kubernetes objects the stack's state records (their outputs name them as the API server does)."""
    return {
        key_of(resource["outputs"])
        for resource in checkpoint(workspace, stack).get("resources", [])
        if resource["type"].startswith("kubernetes:") and not resource.get("delete")
    }


def pending_operations(workspace: PulumiWorkspace, stack: str) -> list[tuple[str, str]]:
    """(type of operation, Kubernetes name) of what the last run left pending: the object's metadata.name (a
    component's child's URN name is `<component>-<name>`), else the URN's name."""
    def name(resource: dict) -> str:
        for key in ("inputs", "outputs"):
            found = ((resource.get(key) or {}).get("metadata") or {}).get("name")
            if isinstance(found, str) and found:
                return found
        return resource["urn"].rsplit("::", 1)[-1]

    return [(op["type"], name(op["resource"])) for op in checkpoint(workspace, stack).get("pending_operations") or []]


def lock_files(workspace: PulumiWorkspace) -> list[Path]:
    """The file backend's update locks (.pulumi/locks/...), one per running (or killed) update."""
    return sorted((workspace.backend / ".pulumi" / "locks").rglob("*.json"))


def sidecar(workspace: PulumiWorkspace, stack: str) -> Path:
    """The stack's checkpoint metadata, `<stack>.json.attrs`. gocloud's fileblob, the file backend's store, saves a
    checkpoint to a temp file beside it, then empties this file (os.Create), fills it in one write, and only then
    renames the temp file over `<stack>.json` (fileblob.go writerWithSidecar.Close, attrs.go setAttrs). A kill between
    the emptying and the write leaves it empty and `<stack>.json` whole, as the previous save wrote it; every later read
    of the checkpoint decodes the empty file first and fails with `EOF` (attrs.go getAttrs)."""
    return workspace.backend / ".pulumi" / "stacks" / "motor-kvpool" / f"{stack}.json.attrs"


# The README's step for a stack whose sidecar a kill emptied ("When an update is interrupted", as for `dev`):
# fileblob reads a missing sidecar as no metadata.
REMOVE_EMPTY_SIDECAR = 'find "$BACKEND/.pulumi/stacks/motor-kvpool" -name {stack}.json.attrs -empty -delete'


def remove_empty_sidecar(workspace: PulumiWorkspace, stack: str) -> None:
    """The README's command, run as written with BACKEND the folder of the backend's file:// URL."""
    subprocess.run(["bash", "-c", REMOVE_EMPTY_SIDECAR.format(stack=stack)],
                   env={**os.environ, "BACKEND": str(workspace.backend)}, check=True)


def live_objects(cluster: Cluster, preview: list[dict[str, Any]], namespace: str) -> set[ObjectKey]:
    """Every object of the preview's kinds that the API server holds labelled as part of `namespace`'s service, and
    the namespace itself: an object the stack created and lost track of shows here and not in its state."""
    found: set[ObjectKey] = set()
    for api_version, kind in sorted({(obj["apiVersion"], obj["kind"]) for obj in preview}):
        if kind == "Namespace":
            if cluster.get(f"/api/v1/namespaces/{namespace}") is not None:
                found.add(("Namespace", "", namespace))
            continue
        listed = cluster.get(f"{collection_path(api_version, kind)}?labelSelector={PART_OF}%3D{namespace}")
        found |= {(kind, item["metadata"].get("namespace") or "", item["metadata"]["name"])
                  for item in listed["items"] if not item["metadata"].get("ownerReferences")}
    return found


def copy_of(workspace: PulumiWorkspace, cluster: Cluster, source: str, stack: str, offline_out: Path) -> None:
    """`source`'s stack file as `stack`, whose namespace (job_id) is the stack's name, with nodes its pods can run
    on."""
    config = yaml.safe_load((workspace.project / "stacks" / f"Pulumi.{source}.yaml").read_text())
    config["config"]["motor-kvpool:motor_deploy_config"]["job_id"] = stack
    (workspace.project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config))
    workspace.stack_init(stack)
    ensure_nodes(cluster, manifests(offline_out, source))


def wait_until(process: subprocess.Popen, happened: Callable[[], bool], timeout: float = 600) -> None:
    """Return once `happened()`, the background CLI still running."""
    deadline = time.monotonic() + timeout
    while not happened():
        if process.poll() is not None:
            raise AssertionError(f"pulumi exited {process.returncode} before the point of interruption")
        if time.monotonic() > deadline:
            raise AssertionError(f"the point of interruption was not reached in {timeout}s")
        time.sleep(0.05)


def kill_plugins_left(workspace: PulumiWorkspace) -> None:
    """SIGKILL what a killed CLI leaves running in the workspace's project, as a cancelled CI job kills it with the
    CLI: its plugins (language host, program, provider), which the CLI starts each in a process group of its own
    (pulumi sdk cmdutil.RegisterProcessGroup, from plugin.go), so that killing the CLI's group leaves them running."""
    left = [process for process in psutil.process_iter(["cwd"]) if process.info["cwd"] == str(workspace.project)]
    for process in left:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    psutil.wait_procs(left, timeout=30)


def interrupt_when(
    workspace: PulumiWorkspace, process: subprocess.Popen, happened: Callable[[], bool], timeout: float = 600
) -> None:
    """SIGKILL the background CLI and its plugins once `happened()`."""
    wait_until(process, happened, timeout)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(30)
    kill_plugins_left(workspace)


def kill_in_next_checkpoint_save(workspace: PulumiWorkspace, stack: str, process: subprocess.Popen) -> str:
    """SIGKILL the background CLI inside its next checkpoint save of `stack`, after emptying the sidecar and before
    filling it (`sidecar`): strace, attached to the CLI's threads, kills it on entering that write. Then its plugins.
    Returns strace's log."""
    if shutil.which("strace") is None:
        absent("strace is not installed (apt-get install strace): it kills the CLI inside a checkpoint save")
    log = workspace.root / "background" / f"strace-{stack}.log"
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "signal=none", "-o", str(log), "-P",
                               str(sidecar(workspace, stack)), "-e", "trace=write", "-e", "inject=write:signal=KILL",
                               "-p", str(process.pid)])
    assert process.wait(600) == -signal.SIGKILL, f"pulumi exited {process.returncode}, not killed in a save"
    kill_plugins_left(workspace)
    assert tracer.wait(30) == 0, log.read_text()
    return log.read_text()
