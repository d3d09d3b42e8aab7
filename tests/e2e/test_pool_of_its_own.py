"""README's "A pool of its own" on the cluster (issue 46): its Python block, as a project of its own (shared-pool,
stack prod), goes up with the real CLI as a store and no engine; a service beside it, service-b's stack file with
target_stack pointing at the pool, goes up on it. tests/test_pool_of_its_own.py runs the same block offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.e2e.cluster_stacks import deployments_not_ready, ensure_crds, ensure_nodes, ensure_volumes, manifests
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace
from tests.test_pool_of_its_own import readme_block

pytestmark = pytest.mark.e2e

POOL = "organization/shared-pool/prod"
CONSUMER = "pool-consumer"
# A Mooncake store admitting the consumer's namespace (the consumer's job_id is its stack's name), its lease
# longer than the consumer's ASCEND_TRANSFER_TIMEOUT (10000 ms) as the contract requires.
STORE = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2,
         "default_kv_lease_ttl": 11000, "allowed_consumers": [CONSUMER]}


def _pool_project(workspace: PulumiWorkspace) -> Path:
    """The README block as __main__.py of project shared-pool, its stack prod's config in Pulumi.prod.yaml."""
    project = workspace.root / "shared-pool"
    project.mkdir()
    (project / "Pulumi.yaml").write_text(
        "name: shared-pool\nruntime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n")
    (project / "venv").symlink_to(REPO / "venv")
    (project / "__main__.py").write_text(readme_block())
    (project / "Pulumi.prod.yaml").write_text(yaml.safe_dump({"config": {
        "shared-pool:namespace": "kv-pool",
        "shared-pool:image": "registry.local/mindie-motor-vllm:3.0.0",
        "shared-pool:hardware_type": "800I_A2",
        "shared-pool:store": STORE,
    }}))
    return project


def _consumer_stack(workspace: PulumiWorkspace) -> None:
    """The mooncake-layerwise service moved onto the pool: its store section becomes target_stack (a consumer writes
    no store of its own), in its own namespace."""
    config = yaml.safe_load((workspace.project / "stacks" / "Pulumi.mooncake-layerwise.yaml").read_text())
    config["config"]["motor-kvpool:kv_cache_store_config"] = {"backend": "mooncake", "target_stack": POOL}
    config["config"]["motor-kvpool:motor_deploy_config"]["job_id"] = CONSUMER
    (workspace.project / "stacks" / f"Pulumi.{CONSUMER}.yaml").write_text(yaml.safe_dump(config))
    workspace.stack_init(CONSUMER)


def test_the_readme_pool_goes_up_with_no_engine_and_a_service_uses_it(
    workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    needs = manifests(offline_out, "mooncake-layerwise")  # the consumer's nodes, volumes and kinds
    ensure_nodes(cluster, needs)
    ensure_volumes(cluster, needs)
    ensure_crds(cluster, needs)
    project = _pool_project(workspace)
    # The wheel is what a team installs (tests/e2e/test_template.py); here the checkout's package is on the path.
    package = {"PYTHONPATH": str(REPO)}
    workspace.run("stack", "init", "prod", cwd=project).check()
    try:
        workspace.run("up", "--yes", "--skip-preview", "-s", "prod", cwd=project, extra_env=package,
                      timeout=600).check()
        deployments = cluster.get("/apis/apps/v1/namespaces/kv-pool/deployments")["items"]
        assert [d["metadata"]["name"] for d in deployments] == ["mindie-motor-kv-store"]
        assert deployments_not_ready(cluster, "kv-pool") == []
        outputs = json.loads(workspace.run("stack", "output", "--json", "-s", "prod", cwd=project).check().stdout)
        host = outputs["kv_store"]["host"]
        assert (outputs["kv_store"]["stack"], host) == (POOL, "mindie-motor-kvs-master.kv-pool.svc.cluster.local")

        _consumer_stack(workspace)
        try:
            workspace.run("up", "--yes", "--skip-preview", "-s", CONSUMER, timeout=1200).check()
            assert deployments_not_ready(cluster, CONSUMER) == []
            engine = cluster.get(f"/apis/apps/v1/namespaces/{CONSUMER}/deployments/vllm-p0")
            vllm = next(c for c in engine["spec"]["template"]["spec"]["containers"] if c["name"] == "vllm")
            env = {e["name"]: e.get("value") for e in vllm["env"]}
            assert env["KVS_MASTER_SERVICE"] == host
            assert json.loads(workspace.run("stack", "output", "--json", "-s", CONSUMER).check().stdout)[
                "kv_store_source"] == POOL
        finally:
            # Its engines hold fake NPUs the example stacks count on (test_stack_reference.py brings all of them up).
            workspace.run("destroy", "--yes", "--skip-preview", "-s", CONSUMER, timeout=900).check()
    finally:
        workspace.run("destroy", "--yes", "--skip-preview", "-s", "prod", cwd=project, extra_env=package,
                      timeout=600).check()
