"""An example stack in the test cluster: the nodes, volumes and custom kinds it needs, and `pulumi up`, unchanged:
every example stack goes up into the session's one cluster as it is written, beside the others (shared by tests/e2e
and bench/pulumi_up.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e.realengine import Cluster, PulumiResult, PulumiWorkspace
from tests.e2e.views import live_differences, offline_in_copy_to


def manifests(out: Path, stack: str) -> list[dict[str, Any]]:
    """The objects `python -m kvpool preview --out out` wrote for `stack`."""
    return [yaml.safe_load(p.read_text()) for p in sorted((out / stack / "manifests").glob("*.yaml"))]


def ensure_nodes(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """Fake (kwok) nodes carrying every node selector the stack's pods name, with its extended resources."""
    selectors: list[dict[str, str]] = []
    extended: dict[str, str] = {}
    for obj in objects:
        spec = obj.get("spec", {}).get("template", {}).get("spec")
        if not spec:
            continue
        selector = spec.get("nodeSelector") or {}
        if selector not in selectors:
            selectors.append(selector)
        for container in spec.get("containers", []):
            for name in container.get("resources", {}).get("requests", {}):
                if "/" in name:
                    extended[name] = "64"
    existing = cluster.get("/api/v1/nodes")["items"]
    for selector in selectors:
        matching = [n for n in existing if selector.items() <= n["metadata"].get("labels", {}).items()]
        if len(matching) < 4:
            cluster.add_nodes(selector, 4 - len(matching), extended)


def ensure_volumes(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """Static PersistentVolumes for the stack's claims, a StatefulSet's and plain ones (no provisioner runs here;
    kwok mounts nothing), so each claim binds and the provider's await of a PersistentVolumeClaim ends."""
    for obj in objects:
        if obj["kind"] == "PersistentVolumeClaim":
            _static_volume(cluster, f"e2e-{obj['metadata']['namespace']}-{obj['metadata']['name']}", obj["spec"])
        elif obj["kind"] == "StatefulSet":
            for template in obj["spec"].get("volumeClaimTemplates", []):
                for i in range(obj["spec"].get("replicas", 1)):
                    name = f"e2e-{obj['metadata']['namespace']}-{template['metadata']['name']}-{obj['metadata']['name']}-{i}"
                    _static_volume(cluster, name, template["spec"])


def _static_volume(cluster: Cluster, name: str, claim: dict[str, Any]) -> None:
    if cluster.get(f"/api/v1/persistentvolumes/{name}") is None:
        cluster.request("POST", "/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {
                "capacity": {"storage": claim["resources"]["requests"]["storage"]},
                "accessModes": claim["accessModes"],
                "storageClassName": claim.get("storageClassName", ""),
                "hostPath": {"path": f"/nonexistent/{name}"},
            },
        })


BUILT_IN_GROUPS = ("", "apps", "rbac.authorization.k8s.io", "networking.k8s.io", "policy", "batch")


def ensure_crds(cluster: Cluster, objects: list[dict[str, Any]]) -> None:
    """An open-schema CustomResourceDefinition for every custom kind the stack writes (Motor's InferServiceSet, the
    Prometheus operator's ServiceMonitor): the API server stores the object; no operator acts on it here."""
    for obj in objects:
        group, _, version = obj["apiVersion"].rpartition("/")
        if group in BUILT_IN_GROUPS:
            continue
        kind = obj["kind"]
        plural = kind.lower() + "s"
        name = f"{plural}.{group}"
        if cluster.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}") is not None:
            continue
        cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name},
            "spec": {
                "group": group, "scope": "Namespaced",
                "names": {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": f"{kind}List"},
                "versions": [{"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
            },
        })
        deadline = time.monotonic() + 30  # the API server serves a new CRD's kind within seconds
        while cluster.get(f"/apis/{group}/{version}") is None and time.monotonic() < deadline:
            time.sleep(0.5)


def up_stack(workspace: PulumiWorkspace, cluster: Cluster, stack: str, out: Path) -> PulumiResult:
    """`pulumi up` of a stack whose offline preview is in `out`, on nodes its pods can run on."""
    objects = manifests(out, stack)
    ensure_nodes(cluster, objects)
    ensure_volumes(cluster, objects)
    ensure_crds(cluster, objects)
    return workspace.run("up", "--yes", "--skip-preview", "-s", stack, timeout=1200).check()


def deployments_not_ready(cluster: Cluster, namespace: str) -> list[str]:
    """The Deployments of `namespace` with fewer ready replicas than they ask for (kwok readies pods at once)."""
    return [
        d["metadata"]["name"]
        for d in cluster.get(f"/apis/apps/v1/namespaces/{namespace}/deployments")["items"]
        if d["status"].get("readyReplicas", 0) != d["spec"]["replicas"]
    ]


def deployment_namespaces(objects: list[dict[str, Any]]) -> list[str]:
    """The namespaces the Deployments among a preview's `objects` are in, sorted."""
    return sorted({obj["metadata"]["namespace"] for obj in objects if obj["kind"] == "Deployment"})


def deployments_not_ready_in(cluster: Cluster, namespaces: list[str]) -> list[str]:
    """`namespace/name` of each Deployment of `namespaces` that is not Ready (deployments_not_ready)."""
    return [f"{namespace}/{name}" for namespace in namespaces for name in deployments_not_ready(cluster, namespace)]


@dataclass
class StacksUp:
    """The session's stacks in the cluster, each initialized and brought up once, whichever test asks first."""

    workspace: PulumiWorkspace
    cluster: Cluster
    offline_out: Path  # the offline previews of the repository's stacks (nodes, volumes and kinds to prepare)
    previews: Path  # where the offline previews of the stacks as they are up go
    initialized: set[str] = field(default_factory=set)
    up: set[str] = field(default_factory=set)

    def init(self, stack: str) -> None:
        if stack not in self.initialized:
            self.workspace.stack_init(stack)
            self.initialized.add(stack)

    def bring_up(self, stack: str) -> Path:
        """`pulumi up` of the stack (once, unchanged, beside the session's other stacks); returns the folder of the
        offline preview of its config as it went up (with Motor's scripts): what the API server must hold."""
        if stack not in self.up:
            self.init(stack)
            up_stack(self.workspace, self.cluster, stack, self.offline_out)
            result = offline_in_copy_to(self.workspace, stack, self.previews)
            assert result.returncode == 0, f"offline preview of {stack} as up: {result.stderr}"
            self.up.add(stack)
        return self.previews

    def up_as_previewed(self, stack: str) -> list[dict[str, Any]]:
        """`bring_up`, then assert the API server holds every object of that preview as written (apart from what
        the server adds) and every Deployment in the stack's namespaces is Ready; returns the objects."""
        objects = manifests(self.bring_up(stack), stack)
        problems = live_differences(self.cluster, objects)
        problems += [
            f"Deployment {name} is not Ready"
            for name in deployments_not_ready_in(self.cluster, deployment_namespaces(objects))
        ]
        assert not problems, "\n".join(problems)
        return objects
