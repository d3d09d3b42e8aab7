"""The fleet from the Pulumi backend (`kvpool fleet --source backend`, through the Automation API and the real CLI)
equals the fleet from the stack files, for an owner and two consumers up in the cluster, and draws them; a new store port on the
owner previews both consumers' engine changes in `kvpool diff` exactly as the engine's own preview of each
consumer shows them once the owner is up with it; the backend source's refusals name what to do.

The stacks are this file's own (fleet-owner, a copy of service-a's stack file admitting fleet-c1 and fleet-c2,
copies of service-b's), each in its own namespace, so the example stacks the other tests use stay as they are.
Named to run after test_stack_reference.py and before test_updates.py (pytest takes the files in order).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest
import yaml

from kvpool.cli.fleet.backend import backend_facts
from kvpool.cli.fleet.model import OWNER
from kvpool.cli.fleet.offline import offline_facts
from tests.e2e.cluster_stacks import up_stack
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace
from tests.e2e.views import (
    consumer_stack,
    engine_changes,
    offline_in_copy_to,
    preview_json,
)

pytestmark = pytest.mark.e2e

OWNER_STACK, CONSUMERS = "fleet-owner", ("fleet-c1", "fleet-c2")
FLEET = (OWNER_STACK, *CONSUMERS)
REFERENCE = "organization/motor-kvpool/{}".format
GIB = 2**30
SVG = "{http://www.w3.org/2000/svg}"


def kvpool(workspace: PulumiWorkspace, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """`python -m kvpool ...` in the workspace's copy of the project, with the CLI's environment (its backend)."""
    return subprocess.run([str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", *args], cwd=workspace.project,
                          env=env or workspace.env(), capture_output=True, text=True, timeout=900)


def only(*stacks: str) -> list[str]:
    return [argument for stack in stacks for argument in ("--stack", stack)]


@pytest.fixture(scope="module")
def fleet_up(workspace: PulumiWorkspace, cluster: Cluster, e2e_tmp: Path) -> Path:
    """The owner and its two consumers up; returns the folder of their offline previews as they went up."""
    owner_file = yaml.safe_load((workspace.project / "stacks" / "Pulumi.service-a.yaml").read_text())
    owner_file["config"]["motor-kvpool:kv_cache_store_config"]["allowed_consumers"] = list(CONSUMERS)
    (workspace.project / "stacks" / f"Pulumi.{OWNER_STACK}.yaml").write_text(yaml.safe_dump(owner_file))
    workspace.stack_init(OWNER_STACK)
    for consumer in CONSUMERS:
        consumer_stack(workspace, consumer, target_stack=REFERENCE(OWNER_STACK))
    base = e2e_tmp / "fleet-base"
    for stack in FLEET:
        result = offline_in_copy_to(workspace, stack, base)
        assert result.returncode == 0, result.stderr
        up_stack(workspace, cluster, stack, base)
    return base


def test_the_fleet_from_the_backend_equals_the_fleet_from_the_stack_files(
    fleet_up: Path, workspace: PulumiWorkspace, e2e_tmp: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    picture = e2e_tmp / "fleet-backend.svg"
    from_backend = kvpool(workspace, "fleet", "--source", "backend", "--json", "--svg", str(picture), *only(*FLEET))
    offline = kvpool(workspace, "fleet", "--json", *only(*FLEET))
    assert from_backend.returncode == 0, from_backend.stderr
    assert offline.returncode == 0, offline.stderr
    # The whole model, nothing left out: it holds the stacks' config and the owner's kv_store output, which both
    # sources know (the backend as the CLI merged and the last `pulumi up` exported them).
    assert json.loads(from_backend.stdout) == json.loads(offline.stdout)
    document = json.loads(from_backend.stdout)
    assert document["problems"] == []
    owner = next(stack for stack in document["stacks"] if stack["role"] == OWNER)
    assert owner["stack"] == REFERENCE(OWNER_STACK) and owner["allowed_consumers"] == list(CONSUMERS)
    assert owner["consumers"] == [REFERENCE(c) for c in CONSUMERS]
    # 2 engine pods of TP 2 in each of the three stacks: a MemCache LocalService of 1GiB in each of the 12 ranks
    assert owner["pool_size_bytes"] == 12 * GIB
    assert [(s["stack"], s.get("target_stack")) for s in document["stacks"]] == [
        (REFERENCE(c), REFERENCE(OWNER_STACK)) for c in CONSUMERS] + [(REFERENCE(OWNER_STACK), None)]
    titles = {(group.get("class"), group.find(f"{SVG}title").text)
              for group in ElementTree.parse(picture).getroot().iter(f"{SVG}g") if group.get("class") in ("node", "edge")}
    assert titles == {("node", stack) for stack in FLEET} | {("edge", f"{c}->{OWNER_STACK}") for c in CONSUMERS}

    # Below the model, what each source hands it: the same settings, and the owner's kv_store as the engine
    # exported it equals the offline preview's. The one difference is the consumers' outputs, which the offline
    # source leaves out (it runs a consumer's program for its objects only: the model checks a consumer against its
    # owner's).
    for key, value in workspace.env().items():
        monkeypatch.setenv(key, value)
    for key in ("VIRTUAL_ENV", "PYTHONPATH"):
        monkeypatch.delenv(key, raising=False)
    backend = {facts.reference: facts for facts in backend_facts(workspace.project, FLEET)}
    files = {facts.reference: facts for facts in offline_facts(workspace.project, None, FLEET)}
    assert backend.keys() == files.keys() == {REFERENCE(stack) for stack in FLEET}
    for reference, facts in backend.items():
        assert facts.settings == files[reference].settings, reference
    assert backend[REFERENCE(OWNER_STACK)].outputs["kv_store"] == files[REFERENCE(OWNER_STACK)].outputs["kv_store"]
    assert all(files[REFERENCE(c)].outputs is None and backend[REFERENCE(c)].outputs["namespace"] == c
               for c in CONSUMERS)


def _kvpool_diff_consumer_changes(text: str, consumer: str) -> set[tuple[str, str, str]]:
    """(op, kind, name) of what `kvpool diff` lists under one consumer (its manifests are <kind>-<ns>-<name>.yaml)."""
    section = text.split(f"Consumer {consumer}, previewed against {OWNER_STACK}'s new outputs:\n", 1)[1]
    section = section.split("\nConsumer ", 1)[0]
    ops = {"+": "create", "~": "update", "-": "delete"}
    return {
        (ops[match.group(1)], match.group(2), match.group(3))
        for match in re.finditer(rf"^  ([+~-]) manifests/([a-z]+)-{consumer}-(\S+)\.yaml \(to ", section, re.M)
    }


def test_a_new_store_port_on_the_owner_previews_both_consumers_as_the_engine_does(
    fleet_up: Path, workspace: PulumiWorkspace, e2e_tmp: Path
) -> None:
    workspace.run("config", "set", "--path", "kv_cache_store_config.port", "50100", "--type", "int",
                  "-s", OWNER_STACK).check()
    new = e2e_tmp / "fleet-new-port"
    assert offline_in_copy_to(workspace, OWNER_STACK, new).returncode == 0
    diff = kvpool(workspace, "diff", str(fleet_up), str(new), "--stack", OWNER_STACK, "--project-dir", ".")
    assert diff.returncode == 0, diff.stderr
    assert f"{OWNER_STACK}'s kv_store output changes; the stacks that read it: fleet-c1, fleet-c2" in diff.stdout

    workspace.run("up", "--yes", "--skip-preview", "-s", OWNER_STACK, timeout=1200).check()
    expected = {("update", "configmap", "motor-config"), ("update", "deployment", "vllm-d0"),
                ("update", "deployment", "vllm-p0"), ("update", "networkpolicy", "mindie-motor-kv-client-egress")}
    for consumer in CONSUMERS:
        data, result = preview_json(workspace, consumer)  # reads the owner's new outputs from the backend
        assert result.returncode == 0, result.output[-4000:]
        engine = {(op, kind.lower(), name) for op, kind, name in engine_changes(data)}
        assert engine == _kvpool_diff_consumer_changes(diff.stdout, consumer) == expected, diff.stdout
    # The owner stays up with the new port (its own stack, consistent with its state); the consumers are not
    # brought up again, so nothing else in the cluster changes.


def test_the_backend_source_says_what_to_do(fleet_up: Path, workspace: PulumiWorkspace, e2e_tmp: Path) -> None:
    def refusal(*args: str, **env: str) -> str:
        result = kvpool(workspace, "fleet", "--source", "backend", *args, env={**workspace.env(), **env})
        assert result.returncode == 1 and result.stdout == "", result.stdout + result.stderr
        return result.stderr

    backend = f"file://{workspace.backend}"
    never = "fleet-never-up"
    stack_file = workspace.project / "stacks" / f"Pulumi.{never}.yaml"
    stack_file.write_text((workspace.project / "stacks" / "Pulumi.service-a.yaml").read_text())
    workspace.stack_init(never)
    try:
        assert refusal(*only(OWNER_STACK, never)) == (
            f"error: stack {never} in backend {backend} has no outputs: it was never up. Run `pulumi up -s {never}`, "
            f"remove it (`pulumi stack rm {never}`), or leave it out by naming the others with --stack\n"
        )
    finally:
        workspace.run("stack", "rm", "--yes", never).check()
        stack_file.unlink(missing_ok=True)  # `pulumi stack rm` removes it too
    assert refusal(*only("no-such-stack")).startswith(
        f"error: no stack no-such-stack of project motor-kvpool in backend {backend} (its stacks: ")
    empty = e2e_tmp / "fleet-empty-backend"
    empty.mkdir()
    assert refusal(PULUMI_BACKEND_URL=f"file://{empty}") == (
        f"error: project motor-kvpool has no stack in backend file://{empty}: create one with `pulumi stack init "
        f"NAME` and `pulumi up -s NAME` (or log in to the backend that holds them)\n"
    )
    home = e2e_tmp / "fleet-logged-out-home"
    home.mkdir()
    logged_out = {k: v for k, v in workspace.env().items() if k != "PULUMI_BACKEND_URL"}
    result = kvpool(workspace, "fleet", "--source", "backend", env={**logged_out, "PULUMI_HOME": str(home)})
    assert result.returncode == 1 and result.stderr == (
        "error: the Pulumi CLI is not logged in to a backend: run `pulumi login` (Pulumi Cloud, or give the "
        "backend's URL, e.g. `pulumi login file://~/.pulumi-state`), or set PULUMI_BACKEND_URL; or read the stack "
        "files instead (kvpool fleet without --source backend)\n"
    ), result.stderr
    assert refusal(PATH="/usr/bin:/bin") == (
        "error: `pulumi` is not on PATH: --source backend reads the stacks through the Pulumi CLI; install it "
        "(https://www.pulumi.com/docs/install/) and log in to the stacks' backend, or read the stack files instead "
        "(kvpool fleet without --source backend)\n"
    )
