"""Changes to up stacks: the blast radius Pulumi shows equals `kvpool diff`'s; a protected store survives
`pulumi destroy`; a config secret is encrypted in the state and absent from every output.

These change the session's stacks, so they run after the other e2e files (pytest runs files by name)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import StacksUp, ensure_nodes, manifests
from tests.e2e.realengine import Cluster, PulumiWorkspace
from tests.e2e.views import changes_both_ways, kube_name, preview_json, split_urn

pytestmark = pytest.mark.e2e


def test_scaling_decode_creates_one_deployment_and_updates_motor_config(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    workspace = dev_up
    workspace.run("config", "set", "--path", "motor_deploy_config.d_instances_num", "2", "-s", "dev").check()
    ensure_nodes(cluster, manifests(offline_out, "dev"))
    workspace.run("up", "--yes", "--skip-preview", "-s", "dev", timeout=1200).check()
    workspace.run("config", "set", "--path", "motor_deploy_config.d_instances_num", "3", "-s", "dev").check()
    data, result = preview_json(workspace, "dev", "--diff")
    assert result.returncode == 0, result.output[-4000:]
    changes = sorted((step["op"], split_urn(step["urn"])[0], kube_name(step))
                     for step in data["steps"] if step["op"] != "same")
    assert changes == [
        ("create", "kubernetes:apps/v1:Deployment", "vllm-d2"),
        # the stack reads its own last outputs to order the engines' waves (kvpool/internal/rollout.py): a read, no change
        ("read", "pulumi:pulumi:StackReference", "organization/motor-kvpool/dev"),
        ("update", "kubernetes:core/v1:ConfigMap", "motor-config"),
    ], changes
    text = workspace.run("preview", "--diff", "-s", "dev").check().stdout
    assert "replace" not in text.split("Resources:")[-1], text[-3000:]


def test_a_store_setting_and_a_selector_change_have_the_blast_radius_kvpool_diff_shows(
    stacks_up: StacksUp, e2e_tmp: Path
) -> None:
    """Pulumi's own diff of two changes to an up stack equals `kvpool diff` of the two offline previews: an eviction
    ratio updates the store's Deployment (and motor-config's user_config.json, which Motor re-reads) and no engine;
    a program change to the engines' selector, which the provider cannot update, replaces every engine."""
    workspace, stack = stacks_up.workspace, "mooncake-layerwise"
    base = stacks_up.bring_up(stack)

    def eviction_ratio(value: str) -> None:
        workspace.run("config", "set", "--path", "kv_cache_store_config.eviction_ratio", value, "--type", "float",
                      "-s", stack).check()

    eviction_ratio("0.3")
    try:
        engine, offline, text = changes_both_ways(workspace, stack, base, e2e_tmp / "blast-eviction")
    finally:
        eviction_ratio("0.4")
    assert engine == offline == {
        ("update", "ConfigMap", "motor-config"), ("update", "Deployment", "mindie-motor-kv-store"),
    }, text
    assert "Blast radius: 1 workload rolls (mindie-motor-kv-store: args), 0 replaced" in text, text

    program = workspace.project / "kvpool" / "components" / "engine_pool.py"
    source = program.read_text()
    assert source.count('"selector": {"matchLabels": app_selector(name)}') == 1
    program.write_text(source.replace('"selector": {"matchLabels": app_selector(name)}',
                                      '"selector": {"matchLabels": {**app_selector(name), "job-name": job_name}}'))
    try:
        engine, offline, text = changes_both_ways(workspace, stack, base, e2e_tmp / "blast-selector")
    finally:
        program.write_text(source)
    assert engine == offline == {
        ("replace", "Deployment", "vllm-p0"), ("replace", "Deployment", "vllm-d0"),
    }, text
    assert "0 workloads roll, 2 replaced" in text, text

def test_destroy_is_refused_on_a_protected_store(stacks_up: StacksUp, cluster: Cluster) -> None:
    workspace = stacks_up.workspace
    stacks_up.bring_up("mooncake-ha")
    result = workspace.run("destroy", "--yes", "-s", "mooncake-ha", timeout=900)
    assert result.returncode != 0, result.output[-4000:]
    assert "protected" in result.output, result.output[-4000:]
    for path in ("/apis/apps/v1/namespaces/mooncake-ha/deployments/mindie-motor-kv-store",
                 "/apis/apps/v1/namespaces/mooncake-ha/statefulsets/mindie-motor-kv-store-etcd"):
        assert cluster.get(path) is not None, f"{path} was deleted"


SECRET = "e2e-hf-token-9f3c1a"


def test_config_secrets_are_encrypted_in_state_and_absent_from_output(
    dev_up: PulumiWorkspace, cluster: Cluster
) -> None:
    workspace = dev_up
    workspace.run("config", "set", "--secret", "--path", "secret_env.HF_TOKEN", SECRET, "-s", "dev").check()
    stack_file = (workspace.project / "stacks" / "Pulumi.dev.yaml").read_text()
    assert SECRET not in stack_file and "secure:" in stack_file
    up = workspace.run("up", "--yes", "--skip-preview", "-s", "dev", timeout=1200).check()
    assert SECRET not in up.output
    state = json.dumps(workspace.state("dev"))
    assert SECRET not in state
    assert "ciphertext" in state
    export = workspace.run("stack", "export", "-s", "dev").check().stdout
    assert SECRET not in export
