"""Issue 21 §2: the offline API-server checks (kvpool/cli/apiserver/checks.py) against the real kube-apiserver.

Every manifest of every example stack, of the hand-written corpus of tests/hostile and of a seeded sample of the
property test's one-field mutants goes to the session's API server as the provider applies it, with dryRun=All
(tests/e2e/apiserver_dry_run.py); the offline verdict, accepted or refused on which fields, must be the server's.
Runs before the stacks go up (file order): the example stacks' NodePorts must still be free.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from kvpool.cli.apiserver.checks import check_manifests
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import InputFileError
from tests.e2e.apiserver_dry_run import (
    Comparison,
    Unit,
    apply,
    compare,
    delete,
    ensure_namespaces,
    units_of,
)
from tests.e2e.cluster_stacks import ensure_crds, manifests
from tests.e2e.realengine import REPO, Cluster
from tests.e2e.views import STACKS
from tests.hostile import test_mutated_stacks as mutations
from tests.hostile.apiserver_manifests import MANIFESTS

pytestmark = pytest.mark.e2e

K8S = "1.30"  # the schema version the offline checks follow (kvpool/cli/apiserver/checks.py)
MUTANTS = 40  # mutations drawn; those the settings accept are sent (a fixed, derandomized sample)

Preview = tuple[str, list[tuple[str, dict[str, Any]]]]  # (case, [(object label, body)])


def labelled(bodies: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [(f"{body['kind']} {body['metadata'].get('namespace', '')}/{body['metadata']['name']}", body)
            for body in bodies]


def example_previews(offline_out: Path) -> list[Preview]:
    """The manifests `python -m kvpool preview` wrote for each example stack (the session's offline previews)."""
    return [(stack, labelled(manifests(offline_out, stack))) for stack in STACKS]


def hostile_previews() -> list[Preview]:
    return [(case, labelled(bodies)) for case, bodies in MANIFESTS.items()]


def mutant_previews(project: Path) -> tuple[list[Preview], int]:
    """The manifests of the mutants the settings accept, and how many were drawn."""
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    previews: list[Preview] = []
    drawn = []

    @settings(max_examples=MUTANTS, derandomize=True, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=st.data(), stack=st.sampled_from(sorted(mutations.EXAMPLES)),
           operation=st.sampled_from(["replace", "delete", "add"]))
    def collect(data: st.DataObject, stack: str, operation: str) -> None:
        document = yaml.safe_load(yaml.safe_dump(mutations.EXAMPLES[stack]))
        path = data.draw(st.sampled_from(mutations.paths_of(document["config"])))
        value = data.draw(mutations.values)
        mutations.mutate(document["config"], path, operation, value)
        drawn.append(1)
        try:
            mutations.load(project, document)
            objects = mutations.rendered(project)
        except (KvpoolError, InputFileError):  # refused by the settings or the program: no manifest to send
            return
        previews.append((f"{stack} {operation} {path!r} {value!r}"[:200], [(o.label, o.body) for o in objects]))

    collect()
    return previews, len(drawn)


def differential(cluster: Cluster, previews: list[Preview]) -> list[Comparison]:
    """Every object of every preview through the server and the offline checks: one comparison per object."""
    units = {(case, label): units_of(label, body) for case, objects in previews for label, body in objects}
    everything = [unit for group in units.values() for unit in group]
    ensure_namespaces(cluster, everything)
    ensure_crds(cluster, [body for _, objects in previews for _, body in objects])
    _refuse_taken_node_ports(cluster, [unit for unit in everything if unit.node_ports])
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda unit: apply(cluster, unit), [unit for unit in everything if not unit.node_ports]))
    for case, objects in previews:  # NodePorts: each preview's Services hold theirs while its later ones apply
        created: list[Unit] = []
        for label, _ in objects:
            for unit in units[(case, label)]:
                if unit.node_ports:
                    apply(cluster, unit)
                    if unit.stage == "accepted":
                        apply(cluster, unit, dry_run=False)
                        created.append(unit)
        for unit in created:
            delete(cluster, unit)
    comparisons = []
    for case, objects in previews:
        offline = check_manifests(objects, K8S)
        for label, _ in objects:
            comparison = compare(label, units[(case, label)], offline)
            comparison.label = f"{case}: {label}"
            comparisons.append(comparison)
    return comparisons


def _refuse_taken_node_ports(cluster: Cluster, units: list[Unit]) -> None:
    taken = {(port.get("protocol", "TCP"), port["nodePort"]): f"{svc['metadata']['namespace']}/{svc['metadata']['name']}"
             for svc in cluster.get("/api/v1/services")["items"]
             for port in svc["spec"].get("ports", []) if port.get("nodePort")}
    wanted = {(port.get("protocol") or "TCP", port["nodePort"]) for unit in units
              for port in unit.body["spec"]["ports"] if isinstance(port.get("nodePort"), int)}
    clashes = sorted(f"{port} (held by Service {taken[(protocol, port)]})" for protocol, port in wanted & set(taken))
    assert not clashes, f"NodePorts already allocated in the session's cluster: {clashes}; this test must run before " \
                        "the stacks go up"


def agreement(comparisons: list[Comparison]) -> str:
    refused = sum(1 for c in comparisons if c.refused)
    masked = sum(c.masked for c in comparisons)
    return (f"{len(comparisons)} objects: {len(comparisons) - refused} accepted by both, {refused} refused by the "
            f"server; {masked} offline problems masked by an earlier stage")


def assert_agreement(comparisons: list[Comparison]) -> None:
    disagreements = [c.describe() for c in comparisons if not c.agrees]
    print(agreement(comparisons), f"; {len(disagreements)} disagreements")  # the counts issue 21 asks for (-s)
    assert not disagreements, f"{len(disagreements)} disagreements of {agreement(comparisons)}:\n" + "\n".join(disagreements)


def test_every_example_stack_object_is_accepted_as_offline(cluster: Cluster, offline_out: Path) -> None:
    comparisons = differential(cluster, example_previews(offline_out))
    assert_agreement(comparisons)
    assert not any(c.refused for c in comparisons)  # the examples are accepted, not merely equally refused


def test_every_hand_written_manifest_gets_the_offline_verdict(cluster: Cluster) -> None:
    comparisons = differential(cluster, hostile_previews())
    assert_agreement(comparisons)
    # The rest break a rule each; int32-wraps-to-one is stored as 1 replica (the settings refuse it).
    assert sorted(c.label for c in comparisons if not c.refused) == [
        "clean-deployment: Deployment ns/x", "clean-service: Service ns/svc", "int32-wraps-to-one: Deployment ns/x",
        "node-port-allocated-twice: Service ns/infer",
    ]


def test_every_accepted_mutant_gets_the_offline_verdict(cluster: Cluster, e2e_tmp: Path) -> None:
    previews, drawn = mutant_previews(e2e_tmp / "mutants")
    assert drawn == MUTANTS and previews, f"{drawn} mutants drawn, {len(previews)} accepted by the settings"
    print(f"{drawn} mutants drawn, {len(previews)} accepted by the settings and sent")
    assert_agreement(differential(cluster, previews))
