"""Every child of a component is named from the component's name (kvpool/internal/child_names.py), so two services,
two UCMStorages or two KVStores fit in one program, each with the objects it renders alone; the components named as
kvpool.program names them carry their children's old URNs as aliases, so a stack from before keeps its objects."""

from __future__ import annotations

from typing import Any

import pytest

from kvpool.cli.engine.mock_engine import ProgramRun, RecordedResource
from kvpool.component_package.service import as_stack_config
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.components.kv_store.component import KVStore
from kvpool.components.ucm_storage import UCMStorage, UCMStorageArgs
from kvpool.components.workloads import Workloads
from kvpool.program import build
from kvpool.program.args import kv_store_args, ucm_storage_args
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.service import ServiceSettings
from tests.program_runs import PROJECT_DIR, render_component, render_stack, stack_values

EXAMPLES = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))
SVC = "urn:pulumi:svc::motor-kvpool::"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"


def settings(stack: str) -> ServiceSettings:
    """The example stack's settings, its objects' keys sorted as the CLI hands a stack's configuration over."""
    return load_from_pulumi_config(as_stack_config(stack_values(stack)), stack, project_dir=PROJECT_DIR)


def objects(run: ProgramRun) -> dict[str, dict[str, Any]]:
    """Every Kubernetes object by its manifest's file name (kind, namespace and name)."""
    return {o.file_name: o.body for o in kubernetes_objects(run.resources)}


def renamed_from(resource: RecordedResource) -> list[str]:
    """Its aliases of its own type (the provider adds others, for the kind's older API versions)."""
    return [alias for alias in resource.aliases if alias.split("::")[2].split("$")[-1] == resource.type]


def test_two_services_in_one_program_each_render_what_they_render_alone() -> None:
    run = render_component(lambda: (build(settings("dev"), PROJECT_DIR), build(settings("ucm"), PROJECT_DIR, name="ucm"))).run
    assert sorted(r.urn for r in run.resources if r.type.startswith("kvpool:index:")) == [
        f"{SVC}pulumi:pulumi:Stack$kvpool:index:{urn}" for urn in (
            "ControlPlane::control-plane", "ControlPlane::ucm-control-plane", "EnginePool::decode",
            "EnginePool::prefill", "EnginePool::ucm-decode", "EnginePool::ucm-prefill", "KVStore::kv-store",
            "KVStore::ucm-kv-store", "UCMStorage::ucm-ucm-storage",
        )
    ]
    assert objects(run) == {**objects(render_stack("dev").run), **objects(render_stack("ucm").run)}
    # Only the default-named service's children say they were named otherwise before: two resources aliasing one
    # old URN would fail the update.
    assert {r.name for r in run.resources if renamed_from(r) and r.name.startswith("ucm-")} == set()
    assert run.resource("kubernetes:apps/v1:Deployment", "ucm-prefill-vllm-p1").inputs["metadata"]["namespace"] == "ucm"


def test_two_ucm_storages_in_two_namespaces() -> None:
    entries = ucm_storage_args(settings("ucm")).entries
    run = render_component(lambda: [UCMStorage(name, UCMStorageArgs(namespace=name, entries=entries))
                                    for name in ("ucm-a", "ucm-b")]).run
    claims = [r for r in run.resources if r.type == PVC]
    assert [(r.urn, r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"], r.aliases) for r in claims] == [
        (f"{SVC}kvpool:index:UCMStorage${PVC}::ucm-a-mindie-motor-store-0", "ucm-a", "mindie-motor-store-0", ()),
        (f"{SVC}kvpool:index:UCMStorage${PVC}::ucm-b-mindie-motor-store-0", "ucm-b", "mindie-motor-store-0", ()),
    ]


def test_two_kv_stores_in_one_program_each_render_what_they_render_alone() -> None:
    def store(name: str, stack: str) -> KVStore:
        service = settings(stack)
        workloads = Workloads(service.namespace, service.motor_deploy_config.deploy_mode)
        return KVStore(name, kv_store_args(service, workloads, PROJECT_DIR))

    run = render_component(lambda: (store("kv-store", "dev"), store("pool-b", "mooncake-ha"))).run
    assert sorted(r.name for r in run.resources if r.parent_urn == f"{SVC}pulumi:pulumi:Stack$kvpool:index:KVStore::pool-b") == [
        # its Deployment, NetworkPolicy and ServiceMonitor
        "pool-b-mindie-motor-kv-store", "pool-b-mindie-motor-kv-store", "pool-b-mindie-motor-kv-store",
        "pool-b-mindie-motor-kv-store-alerts", "pool-b-mindie-motor-kv-store-dashboard",
        "pool-b-mindie-motor-kv-store-etcd", "pool-b-mindie-motor-kv-store-etcd",  # its StatefulSet, NetworkPolicy
        "pool-b-mindie-motor-kv-store-etcd-peers", "pool-b-mindie-motor-kvs-master",
    ]
    alone = [render_component(lambda: store("kv-store", "dev")).run, render_component(lambda: store("pool-b", "mooncake-ha")).run]
    assert objects(run) == {**objects(alone[0]), **objects(alone[1])}


def test_the_default_named_components_children_carry_their_old_urns() -> None:
    at = "urn:pulumi:service-set::motor-kvpool::"
    run = render_stack("service-set").run
    assert {r.urn.removeprefix(at): [a.removeprefix(at) for a in renamed_from(r)] for r in run.resources
            if renamed_from(r)} == {
        f"kvpool:index:ControlPlane$kubernetes:{kind}::control-plane-{name}":
            [f"kvpool:index:ControlPlane$kubernetes:{kind}::{name}"]
        for kind, name in [
            ("core/v1:ConfigMap", "motor-config"), ("core/v1:ServiceAccount", "mindie-motor-controller"),
            ("rbac.authorization.k8s.io/v1:ClusterRole", "mindie-controller-nodes-service-set"),
            ("rbac.authorization.k8s.io/v1:ClusterRole", "mindie-controller-pods-service-set"),
            ("rbac.authorization.k8s.io/v1:ClusterRoleBinding", "mindie-controller-nodes-service-set"),
            ("rbac.authorization.k8s.io/v1:ClusterRoleBinding", "mindie-controller-pods-service-set"),
            ("rbac.authorization.k8s.io/v1:Role", "mindie-controller-configmaps-service-set"),
            ("rbac.authorization.k8s.io/v1:RoleBinding", "mindie-controller-configmaps-service-set"),
        ]
    } | {
        "kvpool:index:KVStore$kubernetes:core/v1:ConfigMap::kv-store-mindie-motor-kv-store-meta-conf":
            ["kvpool:index:KVStore$kubernetes:core/v1:ConfigMap::mindie-motor-kv-store-meta-conf"],
        "kvpool:index:KVStore$kubernetes:networking.k8s.io/v1:NetworkPolicy::kv-store-mindie-motor-kv-store":
            ["kvpool:index:KVStore$kubernetes:networking.k8s.io/v1:NetworkPolicy::mindie-motor-kv-store"],
        # Under the ServiceSet since it exists, at the stack's root before.
        "kvpool:index:ServiceSet$kubernetes:mindcluster.huawei.com/v1:InferServiceSet::vllm-vllm": [
            "kubernetes:mindcluster.huawei.com/v1:InferServiceSet::vllm",
            "kvpool:index:ServiceSet$kubernetes:mindcluster.huawei.com/v1:InferServiceSet::vllm",
        ],
    }


def test_no_urn_is_claimed_twice_in_any_example() -> None:
    """The engine refuses an update where two resources alias one old URN, or one aliases another's URN."""
    for stack in EXAMPLES:
        if stack == "service-b":  # a consumer: needs its owner's outputs, and builds the same components
            continue
        claims = [urn for r in render_stack(stack).run.resources for urn in (r.urn, *r.aliases)]
        assert len(claims) == len(set(claims)), stack


@pytest.mark.parametrize("stack", ["dev", "ucm", "service-set"])
def test_the_component_packages_service_parts_and_their_children_carry_their_old_names(stack: str) -> None:
    """The Service names its parts after itself (`service-kv-store`); up to 0.3.0 they were named as a program's only
    service's, their children by Kubernetes name alone. Each part aliases its old name and each child its Kubernetes
    name: under the part's alias, the engine makes of them the old URNs."""
    named = render_component(lambda: build(settings(stack), PROJECT_DIR, name="service", renamed=True)).run
    alone = render_stack(stack).run
    # The namespace is named by its Kubernetes name; the program reads its own stack, which build() does not.
    kept = ("pulumi:pulumi:Stack", "kubernetes:core/v1:Namespace", "pulumi:pulumi:StackReference")
    assert {r.name: sorted({a.split("::")[-1] for a in renamed_from(r)}) for r in named.resources
            if r.type not in kept} == {
        f"service-{r.name}": sorted({a.split("::")[-1] for a in renamed_from(r)} or {r.name})
        for r in alone.resources if r.type not in kept
    }
