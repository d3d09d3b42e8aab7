"""Every connection Motor's code opens (tests/conformance/motor_connections.py, the table in docs/conformance.md) is admitted by the
rendered NetworkPolicies of every example stack, and no other pod reaches the store: not a Motor pod on a port its
code does not open, not an unlabelled pod of the namespace, not a pod of another namespace."""

from __future__ import annotations

import json
import textwrap
from typing import Any

import pytest

from tests.conformance.motor_connections import (
    CONNECTIONS,
    MOTOR_COMPONENTS,
    STORE,
    STORE_ETCD,
    conformance_table,
)
from tests.conformance.network_policy import Pod, allowed, pods
from tests.program_runs import PROJECT_DIR, Rendered, render, render_stack, stack_values

STACKS = ("dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "ucm", "service-set", "service-a", "service-b",
          "kv-affinity")
OWNER = {"service-b": "service-a"}  # target_stack: the store runs in the owner's namespace


@pytest.fixture(scope="module")
def rendered() -> dict[str, Rendered]:
    runs = {stack: render_stack(stack) for stack in STACKS if stack not in OWNER}
    for stack, owner in OWNER.items():
        references = {f"organization/motor-kvpool/{owner}": runs[owner].run.outputs}
        runs[stack] = render(stack_values(stack), stack=stack, stack_references=references)
    return runs


def cluster(rendered: dict[str, Rendered], stack: str) -> tuple[list[dict[str, Any]], list[Pod]]:
    """The stack's objects with its store owner's: (NetworkPolicies, pods)."""
    objects = [*rendered[stack].objects.values()]
    if stack in OWNER:
        objects += rendered[OWNER[stack]].objects.values()
    return [o for o in objects if o["kind"] == "NetworkPolicy"], pods(objects)


def store_pods(all_pods: list[Pod]) -> list[Pod]:
    # Host-network pods (Yuanrong's workers) are beyond any NetworkPolicy: nothing to evaluate.
    return [p for p in all_pods if p.labels.get("app") in (STORE, STORE_ETCD) and not p.host_network]


def destinations(row, all_pods: list[Pod], namespace: str) -> list[Pod]:
    if row.to_store:
        return [p for p in store_pods(all_pods) if p.labels["app"] == row.destination]
    return [p for p in all_pods if p.component == row.destination and p.namespace == namespace]


def expected_store_ports(user_config: dict[str, Any], component: str, app: str) -> set[int]:
    return {port for row in CONNECTIONS if row.to_store and row.destination == app and component in row.sources
            for port in row.ports(user_config)}


def user_config_of(rendered: Rendered) -> dict[str, Any]:
    return json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])


@pytest.mark.parametrize("stack", STACKS)
def test_every_connection_motor_opens_is_admitted(rendered, stack) -> None:
    policies, all_pods = cluster(rendered, stack)
    namespace = user_config_of(rendered[stack])["motor_deploy_config"]["job_id"]
    user_config = user_config_of(rendered[stack])
    checked = 0
    for row in CONNECTIONS:
        sources = [p for p in all_pods if p.component in row.sources and p.namespace == namespace]
        for source in sources:
            for destination in destinations(row, all_pods, namespace):
                for port in row.ports(user_config):
                    assert allowed(policies, source, destination, port), (row.motor, source.name, destination.name, port)
                    checked += 1
    assert checked > 0


@pytest.mark.parametrize("stack", STACKS)
def test_no_other_pod_reaches_the_store(rendered, stack) -> None:
    """Each Motor pod reaches exactly the store ports of the table's rows; strangers reach none."""
    policies, all_pods = cluster(rendered, stack)
    namespace = user_config_of(rendered[stack])["motor_deploy_config"]["job_id"]
    user_config = user_config_of(rendered[stack])
    motor_pods = [p for p in all_pods if p.component in MOTOR_COMPONENTS and p.namespace == namespace]
    strangers = [
        Pod(namespace, "unlabelled", "", {}),
        # a pod of another namespace carrying every label a Motor pod of this service carries
        Pod("elsewhere", "impostor", "", {k: v for p in motor_pods for k, v in p.labels.items()}),
    ]
    stores = store_pods(all_pods)
    for store in stores:
        for port in store.container_ports:
            for pod in motor_pods:
                want = port in expected_store_ports(user_config, pod.component, store.labels["app"])
                assert allowed(policies, pod, store, port) == want, (pod.name, store.name, port)
            for stranger in strangers:
                assert not allowed(policies, stranger, store, port), (stranger.name, store.name, port)
    assert stores


def test_the_conformance_table_is_the_connections_data() -> None:
    # in the conformance section's list, indented as its items
    assert textwrap.indent(conformance_table(), "  ") in (PROJECT_DIR / "docs" / "conformance.md").read_text()


def test_evaluator_reads_named_ports_namespace_selectors_and_egress() -> None:
    """The evaluator's own semantics, on a hand-written policy set."""
    server = Pod("a", "server", "s", {"app": "s"}, {"rpc": 50088}, (50088,))
    client = Pod("b", "client", "c", {"role": "c"})
    policies = [
        {"metadata": {"namespace": "a"}, "spec": {"podSelector": {"matchLabels": {"app": "s"}},
         "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "b"}},
                                "podSelector": {"matchExpressions": [{"key": "role", "operator": "In", "values": ["c"]}]}}],
                      "ports": [{"port": "rpc"}]}]}},
        {"metadata": {"namespace": "b"}, "spec": {"podSelector": {}, "policyTypes": ["Egress"],
         "egress": [{"ports": [{"port": 50000, "endPort": 50100}]}]}},
    ]
    assert allowed(policies, client, server, 50088)
    assert not allowed(policies, client, server, 50089)  # ingress names rpc only
    assert not allowed(policies, Pod("a", "local", "c", {"role": "c"}), server, 50088)  # namespace a is not b
    assert not allowed(policies[:1] + [{**policies[1], "spec": {**policies[1]["spec"], "egress": []}}],
                       client, server, 50088)  # egress denies all
