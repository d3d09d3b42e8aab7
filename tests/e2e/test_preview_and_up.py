"""Every example stack: pulumi preview lists what the offline preview lists; pulumi up puts our manifests in the
API server, every Deployment Ready; a second up changes nothing; Motor's controller may make exactly its API calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import StacksUp, manifests
from tests.e2e.realengine import Cluster, PulumiWorkspace
from tests.e2e.views import CONSUMERS, STACKS, preview_json, tree_mismatch

pytestmark = pytest.mark.e2e

OWNERS = [s for s in STACKS if s not in CONSUMERS]


@pytest.mark.parametrize("stack", OWNERS)
def test_pulumi_preview_lists_the_offline_preview_resources(
    stack: str, offline_stacks: PulumiWorkspace, offline_out: Path
) -> None:
    data, result = preview_json(offline_stacks, stack)
    assert result.returncode == 0, result.output[-4000:]
    mismatch = tree_mismatch((offline_out / f"{stack}.tree").read_text(), data)
    assert not mismatch, mismatch


@pytest.mark.parametrize("stack", OWNERS)
def test_pulumi_up_puts_the_offline_manifests_in_the_api_server(stack: str, stacks_up: StacksUp) -> None:
    """Every object of the offline preview of the stack's config, as it went up, is in the API server as written
    (apart from what the server adds), and every Deployment is Ready. An InferServiceSet is stored as written; no
    operator here creates its workloads."""
    objects = stacks_up.up_as_previewed(stack)
    namespaces = {obj["metadata"]["namespace"] for obj in objects if obj["kind"] == "Deployment"}
    assert namespaces == (set() if stack == "service-set" else {stack}), namespaces


@pytest.mark.parametrize("stack", OWNERS)
def test_second_up_changes_nothing(stack: str, stacks_up: StacksUp) -> None:
    stacks_up.bring_up(stack)
    result = stacks_up.workspace.run("up", "--yes", "--expect-no-changes", "-s", stack).check()
    assert "unchanged" in result.stdout, result.stdout[-3000:]


def can(cluster: Cluster, user: str, verb: str, resource: str, namespace: str = "") -> bool:
    review = cluster.request(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{user.split(':')[2]}",
                           "system:authenticated"],
                "resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace},
            },
        },
    )
    return bool(review["status"].get("allowed"))


def test_motor_controller_service_account_has_exactly_its_rules(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    user = "system:serviceaccount:dev:mindie-motor-controller"
    granted: set[tuple[str, str, str]] = set()
    for obj in manifests(offline_out, "dev"):
        if obj["kind"] not in ("ClusterRole", "Role"):
            continue
        namespace = obj["metadata"].get("namespace", "")
        for rule in obj["rules"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    granted.add((verb, resource, namespace))
    assert granted
    denied = [g for g in sorted(granted) if not can(cluster, user, *g)]
    assert not denied, f"RBAC does not allow: {denied}"
    beyond = [
        (verb, resource, namespace)
        for verb in ("get", "list", "create", "update", "patch", "delete")
        for resource in ("nodes", "pods", "configmaps", "secrets", "deployments")
        for namespace in ("dev", "kube-system", "")
        if (verb, resource, namespace) not in granted
        and not (namespace and (verb, resource, "") in granted)
        and can(cluster, user, verb, resource, namespace)
    ]
    assert not beyond, f"allowed beyond our rules: {beyond}"
