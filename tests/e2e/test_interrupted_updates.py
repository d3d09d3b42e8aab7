"""An interrupted `pulumi up` converges after the README's recovery ("When an update is interrupted"): the CLI killed
with SIGKILL after the store exists on a first deploy, inside the checkpoint save that follows (on purpose), and in
the middle of the engines of an image change, and kube-apiserver restarted in the middle of one. Afterwards the API
server holds exactly the state's objects, which are exactly the offline preview's, as it writes them; nothing is
orphaned. Each test breaks a copy of `dev` in its own namespace and its own backend (`own_workspace`), so neither the
session's stacks nor its backend's `pulumi stack ls` depend on how a kill lands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import manifests
from tests.e2e.kwok_stages import LATE_NAMESPACES
from tests.e2e.realengine import FORCE, Cluster, PulumiWorkspace
from tests.e2e.stack_objects import (
    checkpoint,
    copy_of,
    interrupt_when,
    key_of,
    kill_in_next_checkpoint_save,
    live_objects,
    lock_files,
    pending_operations,
    remove_empty_sidecar,
    sidecar,
    state_objects,
    wait_until,
)
from tests.e2e.views import live_differences, offline_in_copy_to

pytestmark = pytest.mark.e2e

NEW_IMAGE = "mindie-motor-vllm:3.0.0b3-800I-A2-py3.11-Ubuntu24.04-lts-x86_64"


def deployment(cluster: Cluster, stack: str, name: str) -> dict | None:
    return cluster.get(f"/apis/apps/v1/namespaces/{stack}/deployments/{name}")


def image_of(cluster: Cluster, stack: str, name: str) -> str | None:
    found = deployment(cluster, stack, name)
    return found["spec"]["template"]["spec"]["containers"][0]["image"] if found else None


def recover_from_kill(workspace: PulumiWorkspace, stack: str) -> None:
    """The README's steps after a killed CLI, each shown to be needed. A kill leaves the lock, and when it lands inside
    a checkpoint save also an empty sidecar (tests/e2e/stack_objects.py `sidecar`), with which no command loads the
    stack until the README's `find ... -empty -delete` removes it."""
    assert lock_files(workspace), "the killed CLI left no lock"
    refused = workspace.run("up", "--yes", "--skip-preview", "-s", stack)
    if sidecar(workspace, stack).stat().st_size == 0:
        assert (refused.returncode, refused.stdout, refused.stderr) == (
            1, "", "error: failed to load checkpoint: EOF\n"), refused.output
        remove_empty_sidecar(workspace, stack)
        assert not sidecar(workspace, stack).exists()
        refused = workspace.run("up", "--yes", "--skip-preview", "-s", stack)
    assert refused.returncode != 0 and "the stack is currently locked by 1 lock(s)" in refused.output, refused.output
    workspace.run("cancel", "--yes", "-s", stack).check()
    assert lock_files(workspace) == []
    workspace.run("refresh", "--clear-pending-creates", "--yes", "-s", stack, timeout=900).check()
    assert pending_operations(workspace, stack) == []
    # What the killed run applied belongs to its own field manager: a forced apply takes it over (measured: "Apply
    # failed with 3 conflicts: conflicts with pulumi-kubernetes-<other>").
    workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200, extra_env=FORCE).check()


def assert_converged(workspace: PulumiWorkspace, cluster: Cluster, stack: str, out: Path) -> None:
    """State == API server == offline preview (every object as written), and the engine sees nothing to change."""
    assert offline_in_copy_to(workspace, stack, out).returncode == 0
    preview = manifests(out, stack)
    wanted = {key_of(obj) for obj in preview}
    assert state_objects(workspace, stack) == wanted
    assert live_objects(cluster, preview, stack) == wanted  # and nothing orphaned beside them
    assert live_differences(cluster, preview) == []
    workspace.run("preview", "--expect-no-changes", "-s", stack, timeout=900).check()


def test_a_first_deploy_killed_while_the_store_is_created(
    own_workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path
) -> None:
    """The kill lands inside the store's create every time: the provider awaits the Deployment's readiness, and the
    pods of this stack's namespace become Ready only LATE_READY_DELAY_S after they are scheduled (a kwok stage). With
    pods readied at once, the create could end, and be saved, in the moment between seeing the Deployment and the
    kill (it did once in CI)."""
    workspace, stack = own_workspace, "cut-store"
    assert stack in LATE_NAMESPACES
    copy_of(workspace, cluster, "dev", stack, offline_out)
    up = workspace.start("up", "--yes", "--skip-preview", "-s", stack)
    interrupt_when(workspace, up, lambda: deployment(cluster, stack, "mindie-motor-kv-store") is not None)
    # the store's create was in flight, its pod not Ready yet: the engine cannot know whether it finished
    assert "readyReplicas" not in deployment(cluster, stack, "mindie-motor-kv-store").get("status", {})
    assert ("creating", "mindie-motor-kv-store") in pending_operations(workspace, stack)
    recover_from_kill(workspace, stack)
    assert_converged(workspace, cluster, stack, e2e_tmp / "converged-cut-store")


def test_a_first_deploy_killed_inside_a_checkpoint_save_loads_again_without_its_empty_sidecar(
    own_workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path
) -> None:
    """A kill can land in a checkpoint save (one did once in CI, before the test above readied its pods late): here
    in the save after the store exists, between emptying the checkpoint's sidecar and filling it."""
    workspace, stack = own_workspace, "cut-save"
    copy_of(workspace, cluster, "dev", stack, offline_out)
    up = workspace.start("up", "--yes", "--skip-preview", "-s", stack)
    wait_until(up, lambda: deployment(cluster, stack, "mindie-motor-kv-store") is not None)
    traced = kill_in_next_checkpoint_save(workspace, stack, up).splitlines()
    # strace saw the sidecar's refill entered, the write it killed the CLI on, and no write return (`= ?`). Mostly one
    # thread enters it; once in CI two did at once, so strace split their lines (`<unfinished ...>`, `<... resumed>`).
    entered = [re.fullmatch(r'\d+ +write\((\d+), "\{\\"user\.cache_control.*, \d+(?: <unfinished \.\.\.>|\) += \?)', line)
               for line in traced if "resumed>" not in line]
    assert entered and all(entered) and len({found.group(1) for found in entered}) == 1, traced
    assert all(re.fullmatch(r"\d+ +<\.\.\. write resumed>\) += \?", line) for line in traced if "resumed>" in line), traced
    assert sidecar(workspace, stack).stat().st_size == 0
    # The checkpoint is whole, as the save before wrote it (and as the cut save first copied it to .bak); the new one
    # is in the temp file fileblob never renamed.
    stacks = sidecar(workspace, stack).parent
    assert checkpoint(workspace, stack)["resources"]
    assert (stacks / f"{stack}.json.bak").read_bytes() == (stacks / f"{stack}.json").read_bytes()
    [unrenamed] = stacks.glob(f"{stack}.json.*.tmp")
    assert json.loads(unrenamed.read_text())["checkpoint"]["latest"]["resources"]
    assert len(lock_files(workspace)) == 1
    listed = workspace.run("stack", "ls")
    assert (listed.returncode, listed.stdout, listed.stderr) == (1, "", "error: EOF\n"), listed.output
    recover_from_kill(workspace, stack)
    assert_converged(workspace, cluster, stack, e2e_tmp / "converged-cut-save")
    listed = workspace.run("stack", "ls", "--json").check()
    assert [entry["name"] for entry in json.loads(listed.stdout)] == [stack]


def test_an_image_change_killed_in_the_middle_of_the_engines_converges(
    own_workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path
) -> None:
    workspace, stack = own_workspace, "cut-engines"
    copy_of(workspace, cluster, "dev", stack, offline_out)
    for key in ("p_instances_num", "d_instances_num"):
        workspace.run("config", "set", "--path", f"motor_deploy_config.{key}", "2", "-s", stack).check()
    workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()
    workspace.run("config", "set", "--path", "motor_deploy_config.image_name", NEW_IMAGE, "-s", stack).check()
    engines = ("vllm-p0", "vllm-p1", "vllm-d0", "vllm-d1")
    up = workspace.start("up", "--yes", "--skip-preview", "-s", stack)
    interrupt_when(workspace, up, lambda: any(image_of(cluster, stack, name) == NEW_IMAGE for name in engines))
    recover_from_kill(workspace, stack)
    assert {name: image_of(cluster, stack, name) for name in engines} == dict.fromkeys(engines, NEW_IMAGE)
    assert_converged(workspace, cluster, stack, e2e_tmp / "converged-cut-engines")


def test_an_image_change_across_an_apiserver_restart_converges(
    own_workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path
) -> None:
    """The CLI lives through it and exits (its failure, if any, is the API server's absence): no lock is left, and
    `pulumi refresh` then `pulumi up` converge."""
    workspace, stack = own_workspace, "cut-apiserver"
    copy_of(workspace, cluster, "dev", stack, offline_out)
    workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()
    workspace.run("config", "set", "--path", "motor_deploy_config.image_name", NEW_IMAGE, "-s", stack).check()
    up = workspace.start("up", "--yes", "--skip-preview", "-s", stack)
    while image_of(cluster, stack, "mindie-motor-kv-store") != NEW_IMAGE:
        assert up.poll() is None, f"pulumi exited {up.returncode} before the store changed"
    cluster.restart_apiserver()
    up.wait(900)
    assert lock_files(workspace) == []
    workspace.run("refresh", "--yes", "-s", stack, timeout=900).check()
    workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()
    assert_converged(workspace, cluster, stack, e2e_tmp / "converged-cut-apiserver")
