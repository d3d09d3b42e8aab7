"""README's "A pool of its own": its Python block, run as a program of public imports only, renders a KV store and no
engine, and a service beside it uses that store through target_stack (issue 46)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kvpool.cli.engine.mock_engine import ProgramError, run_program
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.components.kv_store.component import KVStoreArgs
from kvpool.program.args import pool_store_args
from kvpool.settings.store import MooncakeStoreConfig
from tests.program_runs import PROJECT_DIR, env_of, render
from tests.test_shared_store import mooncake_pair

POOL = "organization/shared-pool/prod"
STORE = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2,
         "allowed_consumers": ["service-b"]}


def readme_block() -> str:
    section = (PROJECT_DIR / "README.md").read_text().split("### A pool of its own", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture(scope="module")
def pool(tmp_path_factory) -> tuple[dict, dict]:
    """(objects by (kind, name), outputs) of the README's program as stack prod of project shared-pool."""
    project = tmp_path_factory.mktemp("pool")
    (project / "Pulumi.yaml").write_text("name: shared-pool\nruntime: python\n")
    (project / "__main__.py").write_text(readme_block())
    values = {"namespace": "kv-pool", "image": "registry.local/mindie-motor-vllm:3.0.0", "hardware_type": "800I_A2",
              "store": json.dumps(STORE)}
    run = run_program(project, StackConfig("shared-pool", "prod", {f"shared-pool:{k}": v for k, v in values.items()}))
    return {(o.kind, o.name): o.body for o in kubernetes_objects(run.resources)}, run.outputs


def test_the_readme_block_imports_public_modules_only():
    imports = re.findall(r"^(?:from|import) (\S+)", readme_block(), re.M)
    assert imports == ["pulumi", "pulumi_kubernetes", "kvpool.components", "kvpool.program.args", "kvpool.settings.store"]


def test_the_pool_renders_a_store_and_no_engine(pool):
    objects, outputs = pool
    assert sorted(objects) == [
        ("Deployment", "mindie-motor-kv-store"),
        ("Namespace", "kv-pool"),
        ("NetworkPolicy", "mindie-motor-kv-store"),
        ("Service", "mindie-motor-kvs-master"),
    ]
    assert objects[("NetworkPolicy", "mindie-motor-kv-store")]["spec"]["ingress"][0]["from"][1] == {
        "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "service-b"}},
        "podSelector": {"matchLabels": {"motor-kvpool.io/kv-client": "true"}},
    }
    kv_store = outputs["kv_store"]
    assert (kv_store["stack"], kv_store["cluster"], kv_store["backend"], kv_store["compatibility"]) == (
        POOL, "default", "mooncake", {})
    assert kv_store["host"] == "mindie-motor-kvs-master.kv-pool.svc.cluster.local"


def test_a_service_uses_the_pool_through_target_stack(pool):
    _, outputs = pool
    _, consumer = mooncake_pair(lease=11000)
    consumer["kv_cache_store_config"]["target_stack"] = POOL
    rendered = render(consumer, stack="service-b", stack_references={POOL: outputs})
    env = env_of(rendered.container("Deployment", "vllm-p0", "vllm"))
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.kv-pool.svc.cluster.local"
    assert rendered.run.outputs["kv_store_source"] == POOL


def test_a_namespace_the_pool_does_not_list_is_refused(pool):
    _, outputs = pool
    _, consumer = mooncake_pair(lease=11000)
    consumer["kv_cache_store_config"]["target_stack"] = POOL
    consumer["motor_deploy_config"]["job_id"] = "service-c"
    with pytest.raises(ProgramError) as caught:
        render(consumer, stack="service-c", stack_references={POOL: outputs})
    assert f"{POOL} does not allow namespace 'service-c'" in str(caught.value)


@pytest.mark.parametrize(("change", "message"), [
    ({"target_stack": POOL, "allowed_consumers": None}, "kv_cache_store_config.target_stack: a pool of its own uses no other stack's store; "
                             "remove it"),
    ({"allowed_consumers": []}, "kv_cache_store_config.allowed_consumers: a pool of its own serves only its "
                                "consumers; list their namespaces"),
])
def test_a_pool_that_uses_another_or_serves_none_is_refused(change, message):
    written = {key: value for key, value in {**STORE, **change}.items() if value is not None}
    store = MooncakeStoreConfig.model_validate(written)
    with pytest.raises(ValueError) as caught:
        pool_store_args(store, "kv-pool", "registry.local/mindie-motor-vllm:3.0.0", "800I_A2")
    assert str(caught.value) == message


def test_the_arguments_are_the_components_own_type():
    store = MooncakeStoreConfig.model_validate(STORE)
    args = pool_store_args(store, "kv-pool", "registry.local/mindie-motor-vllm:3.0.0", "800I_A2", project_dir=Path("/p"))
    assert isinstance(args, KVStoreArgs)
    assert (args.namespace, args.image, args.allowed_consumers, args.compatibility, args.project_dir) == (
        "kv-pool", "registry.local/mindie-motor-vllm:3.0.0", ("service-b",), {}, Path("/p"))
