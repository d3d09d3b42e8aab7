"""An owner's pull request previews its consumers (`python -m kvpool diff`, kvpool/cli/views/consumer_previews.py): when the
owner's kv_store output changes, each stack that reads it is previewed against the owner's old and new outputs
and its diff and blast radius follow; a consumer the change shuts out says why, naming both stacks."""

from __future__ import annotations

import re

import pytest

from kvpool.cli.commands.cli import main
from kvpool.cli.preview import preview
from kvpool.cli.views.consumer_previews import consumer_lines
from tests.program_runs import project_with_stacks, stack_values

A, B = "organization/motor-kvpool/service-a", "organization/motor-kvpool/service-b"


def _owner_change(tmp_path, **store) -> tuple:
    """(project dir holding the changed owner and service-b, old previews, new previews) of service-a."""
    owner = stack_values("service-a")
    old_project = project_with_stacks(tmp_path / "old-project", {"service-a": owner})
    preview(old_project, "service-a", tmp_path / "old")
    owner["kv_cache_store_config"].update(store)
    project = project_with_stacks(tmp_path / "project", {"service-a": owner, "service-b": stack_values("service-b")})
    preview(project, "service-a", tmp_path / "new")
    return project, tmp_path / "old", tmp_path / "new"


def _headlines(lines: list[str]) -> list[str]:
    """Without the unified diffs (unindented below each changed file's indented headline, so that GitHub colours
    them)."""
    return [line for line in lines if line == "" or re.match(r"( {2}| {4})?[^-+@ ]", line)]


@pytest.fixture(scope="module")
def port_change(tmp_path_factory):
    return _owner_change(tmp_path_factory.mktemp("port"), port=50100)


def test_a_new_store_port_rolls_the_consumers_engines(port_change):
    project, old, new = port_change
    assert _headlines(consumer_lines(old, new, "service-a", project)) == [
        "",
        "service-a's kv_store output changes; the stacks that read it: service-b",
        "Consumer service-b, previewed against service-a's new outputs:",
        "  ~ manifests/configmap-service-b-motor-config.yaml (to update)",
        "  ~ manifests/deployment-service-b-vllm-d0.yaml (to update)",
        "  ~ manifests/deployment-service-b-vllm-p0.yaml (to update)",
        "  ~ manifests/networkpolicy-service-b-mindie-motor-kv-client-egress.yaml (to update)",
        "  Diff: 0 to create, 4 to update, 0 to delete, 16 unchanged",
        "  Workloads that roll (pod template changed):",
        "    Deployment service-b/vllm-d0: kv-client changed",
        "    Deployment service-b/vllm-p0: kv-client changed",
        "  Impact:",
        "    drops in-flight requests on vllm-d0, vllm-p0",
        "    the KV pool loses the share of vllm-d0: its MemCache LocalService holds pool memory",
        "    the KV pool loses the share of vllm-p0: its MemCache LocalService holds pool memory",
        "  Blast radius: 2 workloads roll (vllm-d0, vllm-p0: kv-client), 0 replaced; KV pool loses the share of "
        "vllm-d0, vllm-p0.",
    ]
    lines = consumer_lines(old, new, "service-a", project)
    motor_config = lines.index("  ~ manifests/configmap-service-b-motor-config.yaml (to update)")
    assert lines[motor_config + 1:motor_config + 3] == [
        "--- old/service-b/manifests/configmap-service-b-motor-config.yaml",
        "+++ new/service-b/manifests/configmap-service-b-motor-config.yaml",
    ]
    assert "-    ock.mmc.meta_service_url = tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50088" in lines
    assert "+    ock.mmc.meta_service_url = tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50100" in lines


def test_kvpool_diff_prints_the_consumers_after_the_owners_blast_radius(port_change, capsys):
    project, old, new = port_change
    assert main(["diff", str(old), str(new), "--stack", "service-a", "--project-dir", str(project)]) == 0
    out = capsys.readouterr().out.splitlines()
    owner_summary = next(i for i, line in enumerate(out) if line.startswith("Blast radius: "))
    assert out[owner_summary + 1:owner_summary + 4] == [
        "", "service-a's kv_store output changes; the stacks that read it: service-b",
        "Consumer service-b, previewed against service-a's new outputs:",
    ]
    assert out[-1] == ("  Blast radius: 2 workloads roll (vllm-d0, vllm-p0: kv-client), 0 replaced; KV pool loses the "
                       "share of vllm-d0, vllm-p0.")


def test_a_consumer_the_change_shuts_out_says_why(tmp_path):
    project, old, new = _owner_change(tmp_path, allowed_consumers=[])
    assert consumer_lines(old, new, "service-a", project) == [
        "",
        "service-a's kv_store output changes; the stacks that read it: service-b",
        "Consumer service-b, previewed against service-a's new outputs:",
        f"  does not preview (new outputs): {B} cannot use the KV store of {A}:",
        f"    - kv_cache_store_config.target_stack: {A} does not allow namespace 'service-b' (kv_store.allowed_consumers: "
        f"[]); add it to {A}'s kv_cache_store_config.allowed_consumers and run `pulumi up` there, so that its "
        f"NetworkPolicy admits {B}'s engines.",
    ]


def test_nothing_when_the_kv_store_output_is_unchanged(port_change):
    project, _, new = port_change
    assert consumer_lines(new, new, "service-a", project) == []
