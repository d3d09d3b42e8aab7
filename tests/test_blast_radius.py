"""The blast radius `python -m kvpool diff` ends with: rolls and why, replacements, in-flight requests, the KV pool.

Each test writes two small previews by hand (the layout `python -m kvpool preview` writes: <out>/<stack>/manifests/
<kind>-<namespace>-<name>.yaml) and asserts the exact lines of the section."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvpool.cli.views.blast_radius import (
    FORCE_NEW,
    blast_radius,
    replaced_paths,
    template_changes,
)
from kvpool.cli.views.blast_radius_report import report
from kvpool.cli.views.diff import manifests
from kvpool.cli.views.manifests import KubernetesObject
from tests.program_runs import PROJECT_DIR

NS = "svc"
IMAGE = "mindie-motor-vllm:3.0.0"
COMPONENT = "app.kubernetes.io/component"
HA_ARGS = ["--enable_ha=true", "--ha_backend_type=etcd", "--etcd_endpoints=etcd-0:2379", "--enable_oplog=true"]


def workload(kind: str, name: str, component: str, containers: list[dict[str, Any]],
             checksums: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    template_metadata: dict[str, Any] = {"labels": {"app": name, COMPONENT: component}}
    if checksums:
        template_metadata["annotations"] = {f"checksum/{key}": value for key, value in checksums.items()}
    return {
        "apiVersion": "apps/v1", "kind": kind,
        "metadata": {"name": name, "namespace": NS, "labels": {"app": name, COMPONENT: component}},
        "spec": {**spec, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": template_metadata, "spec": {"containers": containers}}},
    }


def engine(name: str, side: str, backend: str, standalone_store: bool = False) -> dict[str, Any]:
    containers = [{"name": "vllm", "image": IMAGE, "command": ["/bin/bash", "-c", "source /mnt/configmap/boot.sh"],
                   "env": [{"name": "KV_STORE_BACKEND", "value": backend}, {"name": "PYTHONHASHSEED", "value": "0"}]}]
    checksums = {"engine-config": f"{side}-1", "env": "e1", "kv-client": "k1", "motor-scripts": "s1"}
    deployment = workload("Deployment", name, side, containers, checksums, replicas=1, strategy={"type": "Recreate"})
    if standalone_store:  # the writable folder Motor's node manager writes the store process's config into
        deployment["spec"]["template"]["spec"]["volumes"] = [{"name": "kv-client-dir", "emptyDir": {}}]
    return deployment


def config_map(name: str, data: dict[str, str], component: str = "motor-config") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": NS, "labels": {COMPONENT: component}}, "data": data}


def control_plane(user_config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [
        workload("Deployment", name, name, [{"name": role, "image": IMAGE}], {"motor-scripts": "s1"}, replicas=1)
        for name, role in (("mindie-motor-controller", "controller"), ("mindie-motor-coordinator", "coordinator"))
    ] + [config_map("motor-config", {"user_config.json": json.dumps(user_config or {}) + "\n"})]


def mooncake_stack(ha: bool = False, standalone: bool = False) -> list[dict[str, Any]]:
    master = {"name": "mooncake-master", "image": IMAGE, "command": ["mooncake_master"],
              "args": ["--rpc_port=50088", "--eviction_ratio=0.2", *(HA_ARGS if ha else [])]}
    # what Motor's node manager reads to start a store process in each engine pod (docs/standalone-store.md)
    store = {"kv_cache_store_config": {"backend": "mooncake", "store_mode": "standalone"}} if standalone else {}
    objects = [
        *control_plane(store),
        workload("Deployment", "mindie-motor-kv-store", "kv-store", [master], {"store-config": "m1"},
                 replicas=2 if ha else 1),
        config_map("mindie-motor-kv-client", {"mooncake.json": json.dumps(
            {"master_server_address": "mindie-motor-kvs-master.svc.svc.cluster.local:50088",
             "global_segment_size": 0 if standalone else "8GB"}, indent=2) + "\n"}, component="kv-client"),
        *(engine(name, side, "mooncake", standalone_store=standalone)
          for name, side in (("vllm-p0", "prefill"), ("vllm-p1", "prefill"), ("vllm-d0", "decode"))),
    ]
    if ha:
        objects.append(workload(
            "StatefulSet", "mindie-motor-kv-store-etcd", "kv-store", [{"name": "etcd", "image": "etcd:3.5"}],
            replicas=3, serviceName="mindie-motor-kv-store-etcd-peers", podManagementPolicy="Parallel",
        ))
    return objects


def memcache_stack() -> list[dict[str, Any]]:
    meta = {"name": "memcache-meta-service", "image": IMAGE, "command": ["/bin/sh", "-c", "exec meta"]}
    return [
        *control_plane(),
        workload("Deployment", "mindie-motor-kv-store", "kv-store", [meta], {"store-config": "m1"}, replicas=1),
        *(engine(name, side, "memcache") for name, side in (("vllm-p0", "prefill"), ("vllm-d0", "decode"))),
    ]


def yuanrong_stack() -> list[dict[str, Any]]:
    worker = {"name": "datasystem-worker", "image": IMAGE, "args": ["--shared_memory_size_mb=1024"]}
    return [
        *control_plane(),
        workload("DaemonSet", "mindie-motor-ds-worker", "kv-store", [worker]),
        workload("StatefulSet", "mindie-motor-kv-store-etcd", "kv-store", [{"name": "etcd", "image": "etcd:3.5"}],
                 replicas=1, serviceName="mindie-motor-kv-store-etcd-peers"),
        *(engine(name, side, "yuanrong") for name, side in (("vllm-p0", "prefill"), ("vllm-d0", "decode"))),
    ]


def service_set_stack() -> list[dict[str, Any]]:
    """The memcache stack as one InferServiceSet: every workload a role (spec.template.roles[].spec.template)."""
    roles = []
    for obj in memcache_stack():
        if obj["kind"] != "Deployment":
            continue
        component = obj["metadata"]["labels"][COMPONENT]
        role = {"kv-store": "kv-store", "prefill": "prefill", "decode": "decode"}.get(
            component, component.removeprefix("mindie-motor-"))
        roles.append({"name": role, "replicas": 1, "metadata": {"labels": obj["metadata"]["labels"]},
                      "workload": {"apiVersion": "apps/v1", "kind": "Deployment"}, "spec": obj["spec"]})
    service_set = {"apiVersion": "mindcluster.huawei.com/v1", "kind": "InferServiceSet",
                   "metadata": {"name": "vllm", "namespace": NS, "labels": {COMPONENT: "infer-service-set"}},
                   "spec": {"replicas": 1, "template": {"roles": roles}}}
    return [config_map("motor-config", {"user_config.json": "{}\n"}), service_set]


def find(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return obj["spec"]["template"]["spec"]["containers"]


def write(root: Path, objects: list[dict[str, Any]]) -> Path:
    """A preview folder as `python -m kvpool preview --out root --stack svc` writes it."""
    folder = root / NS / "manifests"
    folder.mkdir(parents=True)
    for obj in objects:
        name = KubernetesObject("urn", obj, (), ()).file_name
        (folder / name).write_text(yaml.safe_dump(obj, sort_keys=False))
    (root / NS / "outputs.json").write_text("{}\n")
    return root


def radius(tmp_path: Path, old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    old_root, new_root = write(tmp_path / "old", old), write(tmp_path / "new", new)
    return report(blast_radius(manifests(old_root, NS), manifests(new_root, NS)))


def test_no_change(tmp_path):
    assert radius(tmp_path, mooncake_stack(), mooncake_stack()) == [
        "Blast radius: 0 workloads roll, 0 replaced; KV pool keeps its contents.",
    ]


def test_one_engines_checksum_loses_its_share_of_a_mooncake_embedded_pool(tmp_path):
    new = mooncake_stack()
    find(new, "Deployment", "vllm-p0")["spec"]["template"]["metadata"]["annotations"]["checksum/engine-config"] = "p2"
    assert radius(tmp_path, mooncake_stack(), new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/vllm-p0: engine-config changed",
        "Impact:",
        "  drops in-flight requests on vllm-p0",
        "  the KV pool loses the share of vllm-p0: its embedded Mooncake store holds a pool segment",
        "Blast radius: 1 workload rolls (vllm-p0: engine-config), 0 replaced; KV pool loses the share of vllm-p0.",
    ]


def test_an_engine_without_a_store_connector_holds_no_share_of_the_pool(tmp_path):
    """The UCM example's shape: a Mooncake master, but the engines' kv_transfer_config has only the P/D transfer."""
    transfer_only = {"kv_connector": "MooncakeConnectorV1", "kv_port": "30001"}
    user_config = {f"motor_engine_{side}_config": {"engine_config": {"kv_transfer_config": transfer_only}}
                   for side in ("prefill", "decode")}
    old = mooncake_stack()
    find(old, "ConfigMap", "motor-config")["data"]["user_config.json"] = json.dumps(user_config)
    new = copy.deepcopy(old)
    find(new, "Deployment", "vllm-p0")["spec"]["template"]["metadata"]["annotations"]["checksum/engine-config"] = "p2"
    assert radius(tmp_path, old, new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/vllm-p0: engine-config changed",
        "Impact:",
        "  drops in-flight requests on vllm-p0",
        "Blast radius: 1 workload rolls (vllm-p0: engine-config), 0 replaced; KV pool keeps its contents.",
    ]


def test_prefill_engine_config_on_yuanrong_keeps_the_pool(tmp_path):
    """Yuanrong engines hold no pool memory (the node's datasystem worker does): the pool keeps its contents."""
    old, new = yuanrong_stack(), yuanrong_stack()
    new.append(copy.deepcopy(find(new, "Deployment", "vllm-p0")))
    new[-1]["metadata"]["name"] = "vllm-p1"
    old.append(copy.deepcopy(new[-1]))
    for name in ("vllm-p0", "vllm-p1"):
        find(new, "Deployment", name)["spec"]["template"]["metadata"]["annotations"]["checksum/engine-config"] = "p2"
    new_config = find(new, "ConfigMap", "motor-config")
    new_config["data"]["user_config.json"] = '{"gpu_memory_utilization": 0.8}\n'
    assert radius(tmp_path, old, new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/vllm-p0: engine-config changed",
        "  Deployment svc/vllm-p1: engine-config changed",
        "Objects replaced (deleted, then created; pulumi-kubernetes cannot update these fields):",
        "  ConfigMap svc/motor-config: data[user_config.json] (updated in place if the provider sets "
        "enableConfigMapMutable)",
        "Impact:",
        "  drops in-flight requests on vllm-p0, vllm-p1",
        "Blast radius: 2 workloads roll (vllm-p0, vllm-p1: engine-config), 1 replaced (ConfigMap/motor-config); "
        "KV pool keeps its contents.",
    ]


def test_image_change_on_all_empties_a_memcache_pool(tmp_path):
    new = memcache_stack()
    for obj in new:
        for container in containers(obj) if obj["kind"] == "Deployment" else []:
            container["image"] = "mindie-motor-vllm:3.0.1"
    assert radius(tmp_path, memcache_stack(), new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/mindie-motor-controller: containers[controller].image",
        "  Deployment svc/mindie-motor-coordinator: containers[coordinator].image",
        "  Deployment svc/mindie-motor-kv-store: containers[memcache-meta-service].image",
        "  Deployment svc/vllm-d0: containers[vllm].image",
        "  Deployment svc/vllm-p0: containers[vllm].image",
        "Impact:",
        "  drops in-flight requests on vllm-d0, vllm-p0",
        "  the KV pool is emptied: Deployment svc/mindie-motor-kv-store rolls; the MemCache MetaService holds the "
        "pool's metadata, without HA",
        "  the KV pool loses the share of vllm-d0: its MemCache LocalService holds pool memory",
        "  the KV pool loses the share of vllm-p0: its MemCache LocalService holds pool memory",
        "Blast radius: 5 workloads roll (mindie-motor-controller, mindie-motor-coordinator, mindie-motor-kv-store, "
        "vllm-d0, vllm-p0: image), 0 replaced; KV pool is emptied (mindie-motor-kv-store rolls).",
    ]


def test_store_args_change_empties_a_mooncake_pool_without_ha(tmp_path):
    new = mooncake_stack()
    store = find(new, "Deployment", "mindie-motor-kv-store")
    containers(store)[0]["args"][1] = "--eviction_ratio=0.3"
    store["spec"]["template"]["metadata"]["annotations"]["checksum/store-config"] = "m2"
    assert radius(tmp_path, mooncake_stack(), new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/mindie-motor-kv-store: store-config changed; containers[mooncake-master].args",
        "Impact:",
        "  the KV pool is emptied: Deployment svc/mindie-motor-kv-store rolls; the Mooncake master holds the pool's "
        "metadata, without HA",
        "Blast radius: 1 workload rolls (mindie-motor-kv-store: store-config, args), 0 replaced; "
        "KV pool is emptied (mindie-motor-kv-store rolls).",
    ]


def test_mooncake_ha_keeps_the_pool_across_a_master_and_etcd_roll(tmp_path):
    old, new = mooncake_stack(ha=True, standalone=True), mooncake_stack(ha=True, standalone=True)
    containers(find(new, "Deployment", "mindie-motor-kv-store"))[0]["args"][1] = "--eviction_ratio=0.3"
    containers(find(new, "StatefulSet", "mindie-motor-kv-store-etcd"))[0]["image"] = "etcd:3.6"
    assert radius(tmp_path, old, new) == [
        "Workloads that roll (pod template changed):",
        "  Deployment svc/mindie-motor-kv-store: containers[mooncake-master].args",
        "  StatefulSet svc/mindie-motor-kv-store-etcd: containers[etcd].image",
        "Impact:",
        "  the KV pool keeps its contents: Deployment svc/mindie-motor-kv-store rolls; Mooncake HA (--enable_ha, "
        "--enable_oplog) kept 50000 of 50000 keys across each of two leader failovers; a put in flight at the kill "
        "returned success and lost 15 of its 16 keys",
        "  the KV pool keeps its contents: StatefulSet svc/mindie-motor-kv-store-etcd rolls; etcd members restart "
        "one at a time and keep their data volumes",
        "Blast radius: 2 workloads roll (mindie-motor-kv-store: args; mindie-motor-kv-store-etcd: image), "
        "0 replaced; KV pool keeps its contents (Mooncake HA, etcd rolls member by member).",
    ]


def test_turning_mooncake_ha_on_restarts_a_master_without_it(tmp_path):
    """The running master is the old one: without HA it loses the metadata, whatever the new one does."""
    new = mooncake_stack(ha=True)
    assert radius(tmp_path, mooncake_stack(), new)[-1] == (
        "Blast radius: 1 workload rolls (mindie-motor-kv-store: args), 0 replaced, 1 workload created "
        "(mindie-motor-kv-store-etcd); KV pool is emptied (mindie-motor-kv-store rolls)."
    )


def test_standalone_store_processes_hold_the_segments(tmp_path):
    """The engines' mooncake.json says 0 bytes; the store process in the engine container holds the segment."""
    new = mooncake_stack(standalone=True)
    for name in ("vllm-p0", "vllm-d0"):
        containers(find(new, "Deployment", name))[0]["image"] = "motor:0.4"
    lines = radius(tmp_path, mooncake_stack(standalone=True), new)
    assert lines[-4:] == [
        "  drops in-flight requests on vllm-d0, vllm-p0",
        "  the KV pool loses the share of vllm-d0: its standalone Mooncake store process holds a pool segment",
        "  the KV pool loses the share of vllm-p0: its standalone Mooncake store process holds a pool segment",
        "Blast radius: 2 workloads roll (vllm-d0, vllm-p0: image), 0 replaced; KV pool loses the share of vllm-d0, "
        "vllm-p0.",
    ]


def test_selector_change_replaces_instead_of_rolling(tmp_path):
    new = mooncake_stack()
    p0 = find(new, "Deployment", "vllm-p0")
    p0["spec"]["selector"]["matchLabels"]["tier"] = "engine"
    p0["spec"]["template"]["metadata"]["labels"]["tier"] = "engine"
    assert radius(tmp_path, mooncake_stack(), new) == [
        "Objects replaced (deleted, then created; pulumi-kubernetes cannot update these fields):",
        "  Deployment svc/vllm-p0: spec.selector",
        "Impact:",
        "  drops in-flight requests on vllm-p0",
        "  the KV pool loses the share of vllm-p0: its embedded Mooncake store holds a pool segment",
        "Blast radius: 0 workloads roll, 1 replaced (Deployment/vllm-p0); KV pool loses the share of vllm-p0.",
    ]


def test_created_and_deleted_workloads_are_not_rolls(tmp_path):
    old, new = memcache_stack(), memcache_stack()
    d1 = copy.deepcopy(find(new, "Deployment", "vllm-d0"))
    d1["metadata"]["name"] = "vllm-d1"
    new.append(d1)
    new.remove(find(new, "Deployment", "vllm-p0"))
    assert radius(tmp_path, old, new) == [
        "Workloads created: Deployment svc/vllm-d1",
        "Workloads deleted: Deployment svc/vllm-p0",
        "Impact:",
        "  drops in-flight requests on vllm-p0",
        "  the KV pool loses the share of vllm-p0: its MemCache LocalService holds pool memory",
        "Blast radius: 0 workloads roll, 0 replaced, 1 workload created (vllm-d1), 1 workload deleted (vllm-p0); "
        "KV pool loses the share of vllm-p0.",
    ]


def test_deleting_the_store_empties_the_pool(tmp_path):
    old = mooncake_stack()
    new = [obj for obj in old if obj["metadata"]["name"] != "mindie-motor-kv-store"]
    assert radius(tmp_path, old, new)[-1] == (
        "Blast radius: 0 workloads roll, 0 replaced, 1 workload deleted (mindie-motor-kv-store); "
        "KV pool is emptied (mindie-motor-kv-store is deleted)."
    )


def test_service_set_role_change(tmp_path):
    new = service_set_stack()
    roles = find(new, "InferServiceSet", "vllm")["spec"]["template"]["roles"]
    prefill = next(role for role in roles if role["name"] == "prefill")
    prefill["spec"]["template"]["metadata"]["annotations"]["checksum/env"] = "e2"
    prefill["spec"]["template"]["spec"]["containers"][0]["env"].append({"name": "VLLM_LOG", "value": "debug"})
    assert radius(tmp_path, service_set_stack(), new) == [
        "Workloads that roll (pod template changed):",
        "  InferServiceSet svc/vllm role prefill: env changed; containers[vllm].env[VLLM_LOG]",
        "Impact:",
        "  drops in-flight requests on vllm/prefill",
        "  the KV pool loses the share of vllm/prefill: its MemCache LocalService holds pool memory",
        "Blast radius: 1 workload rolls (vllm/prefill: env), 0 replaced; KV pool loses the share of vllm/prefill.",
    ]


def test_service_set_store_role_and_removed_role(tmp_path):
    new = service_set_stack()
    roles = find(new, "InferServiceSet", "vllm")["spec"]["template"]["roles"]
    store = next(role for role in roles if role["name"] == "kv-store")
    store["spec"]["template"]["metadata"]["annotations"]["checksum/store-config"] = "m2"
    roles.remove(next(role for role in roles if role["name"] == "decode"))
    assert radius(tmp_path, service_set_stack(), new)[-1] == (
        "Blast radius: 1 workload rolls (vllm/kv-store: store-config), 0 replaced, 1 workload deleted "
        "(vllm/decode); KV pool is emptied (vllm/kv-store rolls)."
    )


def test_replica_count_is_not_a_roll(tmp_path):
    new = mooncake_stack(ha=True)
    find(new, "Deployment", "mindie-motor-kv-store")["spec"]["replicas"] = 3
    assert radius(tmp_path, mooncake_stack(ha=True), new) == [
        "Blast radius: 0 workloads roll, 0 replaced; KV pool keeps its contents.",
    ]


def test_stack_without_pool(tmp_path):
    assert radius(tmp_path, control_plane(), control_plane()) == [
        "Blast radius: 0 workloads roll, 0 replaced; no KV pool.",
    ]


@pytest.mark.parametrize(("old", "new", "paths"), [
    ({"apiVersion": "v1", "kind": "Service", "spec": {"clusterIP": "None", "ports": [1]}},
     {"apiVersion": "v1", "kind": "Service", "spec": {"ports": [2]}}, ["spec.clusterIP"]),
    ({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {"storageClassName": "a", "resources": 1}},
     {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "spec": {"storageClassName": "b", "resources": 2}},
     ["spec.storageClassName"]),  # a PVC grows in place
    ({"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"A": "x", "B": "y"}},
     {"apiVersion": "v1", "kind": "Secret", "type": "Opaque", "data": {"A": "x", "C": "y"}},
     ["data[B]", "data[C]"]),
    ({"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"serviceName": "a", "replicas": 1}},
     {"apiVersion": "apps/v1", "kind": "StatefulSet", "spec": {"serviceName": "a", "replicas": 3,
                                                               "volumeClaimTemplates": []}},
     ["spec.volumeClaimTemplates"]),
    ({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "roleRef": {"name": "a"}, "subjects": [1]},
     {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "roleRef": {"name": "b"}, "subjects": [2]},
     ["roleRef"]),
    ({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "spec": {"podSelector": {"a": 1}}},
     {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "spec": {"podSelector": {"a": 2}}}, []),
    ({"apiVersion": "mindcluster.huawei.com/v1", "kind": "InferServiceSet", "spec": {"replicas": 1}},
     {"apiVersion": "mindcluster.huawei.com/v1", "kind": "InferServiceSet", "spec": {"replicas": 2}}, []),
])
def test_force_new_fields(old, new, paths):
    assert replaced_paths(old, new) == paths


def test_force_new_covers_the_kinds_we_render():
    assert {kind for _, kind in FORCE_NEW} == {
        "Deployment", "DaemonSet", "StatefulSet", "Service", "PersistentVolumeClaim", "ConfigMap", "Secret",
        "RoleBinding", "ClusterRoleBinding",
    }


def test_template_paths():
    old = {"metadata": {"labels": {"app": "a"}, "annotations": {"checksum/env": "1", "note": "x"}},
           "spec": {"nodeSelector": {"n": "1"}, "volumes": [{"name": "v", "emptyDir": {}}],
                    "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}]}}
    new = {"metadata": {"labels": {"app": "a", "b": "c"}, "annotations": {"checksum/kv-client": "1", "note": "y"}},
           "spec": {"nodeSelector": {"n": "2"}, "volumes": [{"name": "v", "emptyDir": {"medium": "Memory"}}],
                    "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "2"}]},
                                   {"name": "side", "image": "j"}]}}
    assert template_changes(old, new) == (
        [("env", "removed"), ("kv-client", "added")],
        [("metadata.annotations[note]", "annotations"), ("metadata.labels[b]", "labels"),
         ("containers[c].env[A]", "env"), ("containers[side]", "containers"), ("nodeSelector", "nodeSelector"),
         ("volumes[v]", "volumes")],
    )


def test_cli_prints_the_section_after_the_listing(tmp_path):
    old = mooncake_stack(ha=True, standalone=True)
    new = copy.deepcopy(old)
    find(new, "Deployment", "vllm-d0")["spec"]["template"]["metadata"]["annotations"]["checksum/engine-config"] = "d2"
    write(tmp_path / "old", old)
    write(tmp_path / "new", new)
    (tmp_path / "Pulumi.yaml").write_text("name: motor-kvpool\nruntime: python\n")  # the stack's project
    (tmp_path / f"Pulumi.{NS}.yaml").write_text("config: {}\n")
    done = subprocess.run([sys.executable, "-m", "kvpool", "diff", "old", "new", "--stack", NS], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-7:] == [
        "Diff: 0 to create, 1 to update, 0 to delete, 9 unchanged",
        "Workloads that roll (pod template changed):",
        "  Deployment svc/vllm-d0: engine-config changed",
        "Impact:",
        "  drops in-flight requests on vllm-d0",
        "  the KV pool loses the share of vllm-d0: its standalone Mooncake store process holds a pool segment",
        "Blast radius: 1 workload rolls (vllm-d0: engine-config), 0 replaced; KV pool loses the share of vllm-d0.",
    ]


# --- how engines roll (issue 23) -------------------------------------------------------------------------------


def engines_stack(prefill: int, decode: int, image: str = IMAGE) -> list[dict[str, Any]]:
    objects = [*(engine(f"vllm-p{i}", "prefill", "yuanrong") for i in range(prefill)),
               *(engine(f"vllm-d{i}", "decode", "yuanrong") for i in range(decode))]
    for obj in objects:
        containers(obj)[0]["image"] = image
    return objects


def engine_outputs(prefill: int, decode: int, prefill_wave: int, decode_wave: int) -> dict[str, Any]:
    return {"engines": {"prefill": [f"vllm-p{i}" for i in range(prefill)],
                        "decode": [f"vllm-d{i}" for i in range(decode)]},
            "rollout": {"prefill": {"max_unavailable_instances": prefill_wave},
                        "decode": {"max_unavailable_instances": decode_wave}}}


def roll_lines(old, new, old_outputs, new_outputs, tmp_path) -> list[str]:
    old_root, new_root = write(tmp_path / "old", old), write(tmp_path / "new", new)
    lines = report(blast_radius(manifests(old_root, NS), manifests(new_root, NS), frozenset(), old_outputs, new_outputs))
    start = lines.index("Engines roll in waves (rollout.<role>.max_unavailable_instances; a wave starts when the one "
                        "before is Ready):")
    return [*lines[start + 1:start + 3], lines[-1]]


def test_an_image_change_rolls_each_side_in_waves_keeping_the_rest_serving(tmp_path):
    lines = roll_lines(engines_stack(4, 3), engines_stack(4, 3, "mindie-motor-vllm:3.0.1"),
                       engine_outputs(4, 3, 2, 1), engine_outputs(4, 3, 2, 1), tmp_path)
    assert lines == [
        "  prefill: 2 waves of 2 (vllm-p0, vllm-p1, then vllm-p2, vllm-p3); 2 of 4 keep serving",
        "  decode: 3 waves of 1 (vllm-d0, then vllm-d1, then vllm-d2); 2 of 3 keep serving",
        "Blast radius: 7 workloads roll (vllm-d0, vllm-d1, vllm-d2, vllm-p0, vllm-p1, vllm-p2, vllm-p3: image), "
        "0 replaced; prefill rolls in 2 waves keeping 2 of 4; decode rolls in 3 waves keeping 2 of 3; KV pool keeps "
        "its contents.",
    ]


def test_an_unchanged_instance_holds_no_wave_and_new_instances_start_at_once(tmp_path):
    """p1 keeps its template: its wave has p0 alone; p2, p3 are new (created, not rolled) and wait for nothing."""
    old = engines_stack(2, 1)
    new = engines_stack(4, 1)
    for name in ("vllm-p0",):
        containers(find(new, "Deployment", name))[0]["image"] = "mindie-motor-vllm:3.0.1"
    containers(find(new, "Deployment", "vllm-d0"))[0]["image"] = "mindie-motor-vllm:3.0.1"
    lines = roll_lines(old, new, engine_outputs(2, 1, 1, 1), engine_outputs(4, 1, 1, 1), tmp_path)
    assert lines == [
        "  prefill: 1 wave of 1 (vllm-p0); 1 of 2 keep serving",
        "  decode: 1 wave of 1 (vllm-d0); 0 of 1 keep serving: the role stops until a new instance is Ready",
        "Blast radius: 2 workloads roll (vllm-d0, vllm-p0: image), 0 replaced, 2 workloads created (vllm-p2, "
        "vllm-p3); prefill rolls in 1 wave keeping 1 of 2; decode rolls in 1 wave keeping 0 of 1; KV pool keeps its "
        "contents.",
    ]


def test_uneven_waves_name_their_sizes(tmp_path):
    lines = roll_lines(engines_stack(5, 1), engines_stack(5, 1, "mindie-motor-vllm:3.0.1"),
                       engine_outputs(5, 1, 2, 1), engine_outputs(5, 1, 2, 1), tmp_path)
    assert lines[0] == ("  prefill: 3 waves (2, 2, 1) (vllm-p0, vllm-p1, then vllm-p2, vllm-p3, then vllm-p4); "
                        "3 of 5 keep serving")


def test_a_service_set_is_rolled_by_its_operator(tmp_path):
    new = service_set_stack()
    roles = find(new, "InferServiceSet", "vllm")["spec"]["template"]["roles"]
    prefill = next(role for role in roles if role["name"] == "prefill")
    prefill["spec"]["template"]["spec"]["containers"][0]["image"] = "mindie-motor-vllm:3.0.1"
    outputs = {"engines": {"prefill": ["vllm-p0"], "decode": ["vllm-d0"]}}  # no `rollout`: the operator rolls
    old_root, new_root = write(tmp_path / "old", service_set_stack()), write(tmp_path / "new", new)
    lines = report(blast_radius(manifests(old_root, NS), manifests(new_root, NS), frozenset(), outputs, outputs))
    assert [line for line in lines if "operator" in line] == [
        "  prefill: vllm/prefill rolls as the InferServiceSet operator decides (deploy_mode infer_service_set)"
    ]
