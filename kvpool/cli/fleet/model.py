"""The fleet: every stack of the project as owners and consumers of KV pools, and what is wrong between them.

One model whatever the source: a source (kvpool/cli/fleet/offline.py: the stack files and their previews;
kvpool/cli/fleet/backend.py: the stacks' config, outputs and state) hands over, per stack, its reference, its settings,
its outputs and its objects (StackFacts); build_fleet does the rest. Between a consumer and its owner the fleet
runs the consumer's own contract checks (kvpool/program/shared_store.py) on the owner's outputs, as the consumer's
program runs them on its next `pulumi up`; it adds what no single stack can see: a reference to a stack that is not
there, consumers that a destroy would strand, and what two stacks of one cluster
both ask the cluster for (NodePorts, namespaces, objects, host ports: kvpool/cli/fleet/clashes.py, over the objects a
source rendered for the stack, else over its settings); and, for a cluster whose nodes were read, whether its engine
pods fit there (kvpool/cli/fleet/capacity.py: warnings, not problems); and, for each owner whose store was read from
its cluster, whether it serves (kvpool/cli/fleet/pools.py: what the report says, not a problem).

Pool memory per engine pod is what the owner's `kv_store` output configures in every engine that reads the pool
(the consumers' engines get the same client files): Mooncake's global_segment_size (in the engine's embedded store of
every rank: vllm-ascend's KVPoolWorker mounts one per worker; 0 there in standalone mode, where the store process
Motor's node manager starts in each engine pod holds the stack's own global_segment_size, as its user_config.json
says), MemCache's LocalService memory (the stack's own `dram_size` per engine pod, as Motor's node manager sizes
it; unknown without it); Yuanrong's engines hold none (each node's datasystem worker holds it). A stack whose engines
use no store connector writes nothing into a pool and holds none of it (docs/sizing.md).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kvpool.cli.fleet.capacity import (
    CapacityWarning,
    ClusterNodes,
    capacity_warnings,
    engine_pods,
)
from kvpool.cli.fleet.clashes import (
    CLASH_KINDS,
    Footprint,
    clashes,
    footprint_from_objects,
    footprint_from_settings,
)
from kvpool.cli.views import sizing
from kvpool.components.kv_store.contract import OUTPUT, sanitized_endpoint
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.registry import renderer
from kvpool.internal.local_backend import LOCAL_ORGANIZATION
from kvpool.internal.units import integral_floats_to_ints
from kvpool.policies import rules
from kvpool.program.compatibility import compatibility
from kvpool.program.shared_store import (
    COMPATIBILITY,
    CONTRACT,
    NO_STORE,
    NOT_ADMITTED,
    contract_findings,
)
from kvpool.settings.service import ServiceSettings

MISSING_STACK = "missing-stack"
DESTROY = "destroy"
PROBLEM_KINDS = (NOT_ADMITTED, COMPATIBILITY, NO_STORE, MISSING_STACK, CONTRACT, *CLASH_KINDS, DESTROY)
"""In the order a report lists them: what breaks a running consumer first, then what the cluster refuses."""

OWNER, CONSUMER, NO_POOL = "owner", "consumer", "no pool"


@dataclass(frozen=True)
class StackFacts:
    """What a source knows of one stack."""

    reference: str  # <org>/<project>/<stack>
    settings: ServiceSettings
    outputs: Mapping[str, Any] | None  # None when the source has none (a consumer's are not needed)
    objects: tuple[Mapping[str, Any], ...] | None = None  # its preview's manifests, or its state's; None: not at hand
    unrendered: str | None = None  # why there are no objects (its clashes are then checked on its settings)

    def footprint(self) -> Footprint:
        if self.objects is None:
            return footprint_from_settings(self.reference, self.settings)
        return footprint_from_objects(self.reference, self.settings, self.objects)


@dataclass(frozen=True)
class EngineGroup:
    role: str  # "prefill" or "decode"
    instances: int
    pods_per_instance: int
    pool_bytes_per_pod: int | None  # None when the pool is unknown (its owner is missing or broken)

    @property
    def pods(self) -> int:
        return self.instances * self.pods_per_instance

    @property
    def pool_bytes(self) -> int | None:
        return None if self.pool_bytes_per_pod is None else self.pods * self.pool_bytes_per_pod


@dataclass(frozen=True)
class FleetStack:
    reference: str
    name: str  # the stack's name when it is on the local backend, else its reference
    role: str  # OWNER, CONSUMER or NO_POOL
    cluster: str
    namespace: str
    backend: str | None
    target: str | None  # the owner's reference, for a consumer
    allowed_consumers: tuple[str, ...]  # an owner's
    compatibility_key: str
    engines: tuple[EngineGroup, ...]
    node_worker_mib: int | None = None  # a Yuanrong owner: shared memory each node's worker offers
    unrendered: str | None = None  # set: why its clashes were checked on its settings alone, not rendered objects
    sizing: tuple[str, ...] = ()  # its row of the sizing table (kvpool/cli/views/sizing.py)
    uses_pool: bool = True  # False: none of its engines has a store connector, it writes nothing into a pool

    @property
    def pool_bytes(self) -> int | None:
        """Pool memory this stack's engine pods contribute (None when unknown)."""
        sizes = [group.pool_bytes for group in self.engines]
        return None if None in sizes else sum(size for size in sizes if size is not None)


@dataclass(frozen=True)
class Problem:
    kind: str
    owner: str  # the references of the two stacks it is between
    consumer: str
    message: str


@dataclass(frozen=True)
class PoolReadiness:
    """One owner's store as read from its cluster (kvpool/cli/fleet/pools.py): the Endpoints of the Service its
    `kv_store` output's host names and, where there is one, the workload behind it."""

    owner: str  # the owner's reference
    cluster: str
    context: str | None  # the kubeconfig's context it was read in; None: not read (see `unread`)
    namespace: str = ""
    service: str = ""
    ready: int | None = None  # the Endpoints' addresses; None: the Endpoints are not there (no such Service)
    not_ready: int = 0  # their notReadyAddresses
    workload: str | None = None  # "Deployment NAME" or "DaemonSet NAME" when one was read
    available: int | None = None  # its available replicas (ready pods of a DaemonSet); None: it is not there
    desired: int = 0  # its spec.replicas (desiredNumberScheduled of a DaemonSet)
    serves: bool = False  # whether a consumer's engines would find a ready store
    unread: str | None = None  # why it was not read


@dataclass(frozen=True)
class Fleet:
    stacks: tuple[FleetStack, ...]  # sorted by reference
    problems: tuple[Problem, ...]
    nodes: tuple[ClusterNodes, ...] = ()  # the clusters whose nodes were read (none: capacity not checked)
    capacity: tuple[CapacityWarning, ...] = ()  # warnings, not problems: the cluster is short, not the stacks wrong
    readiness: tuple[PoolReadiness, ...] | None = None  # each owner's store as read from its cluster; None: not read

    def consumers_of(self, owner: str) -> list[FleetStack]:
        return [stack for stack in self.stacks if stack.target == owner]

    def is_healthy(self, consumer: FleetStack) -> bool:
        return not any(p.consumer == consumer.reference and p.owner == consumer.target for p in self.problems)

    def pool_bytes(self, owner: FleetStack) -> int | None:
        """The pool's size: what the owner's engine pods and those of every consumer that passes its checks
        contribute (a consumer that fails them never comes up, or is shut out by the owner's NetworkPolicy)."""
        readers = [owner, *(c for c in self.consumers_of(owner.reference) if self.is_healthy(c))]
        sizes = [reader.pool_bytes for reader in readers]
        return None if None in sizes else sum(size for size in sizes if size is not None)


def stack_name(reference: str) -> str:
    """A stack of the local backend by its name (a fleet is one project's stacks, of whatever name), else the whole
    reference."""
    organization, _, rest = reference.partition("/")
    project, _, stack = rest.partition("/")
    return stack if organization == LOCAL_ORGANIZATION and project and stack else reference


def pool_bytes_per_process(endpoint: KVStoreEndpoint, settings: ServiceSettings) -> tuple[int | None, bool]:
    """Pool memory one store process holds (None: not known), as the owner's endpoint configures every engine that
    reads the pool, and whether every engine rank runs one (else one per pod: the standalone store process, or
    MemCache's standalone LocalService)."""
    return renderer(endpoint.backend).pool_bytes_per_process(endpoint, settings.kv_cache_store_config,
                                                             settings.pool_sizing())


def _engines(settings: ServiceSettings, user_config: dict[str, Any], endpoint: KVStoreEndpoint | None,
             role: str) -> tuple[EngineGroup, ...]:
    """Each side's engines and the pool memory each of their pods holds (None: unknown)."""
    groups = []
    per_process, per_rank = pool_bytes_per_process(endpoint, settings) if endpoint else (None, False)
    for side in rules.SIDES:
        pods = settings.motor_deploy_config.engine_side(side)
        if role == NO_POOL or not rules.store_connector_backends(rules.kv_transfer_configs(user_config)[side]):
            per_pod: int | None = 0  # no store connector: the engine joins no pool
        elif endpoint is None:
            per_pod = None
        else:
            ranks = rules.engine_ranks(user_config[rules.engine_section(side)]["engine_config"])
            per_pod = None if per_process is None else (
                per_process * (math.ceil(ranks / pods.pods_per_instance) if per_rank else 1))
        groups.append(EngineGroup(side, pods.instances, pods.pods_per_instance, per_pod))
    return tuple(groups)


def _kv_store(facts: StackFacts) -> Any:
    return integral_floats_to_ints((facts.outputs or {}).get(OUTPUT))  # outputs from a backend carry floats


def owner_endpoints(all_facts: Sequence[StackFacts]) -> dict[str, KVStoreEndpoint | None]:
    """Each owner's store by reference: every stack that reads no other stack's store and has a `kv_store` output
    (None when the output is not a usable endpoint: its consumers' checks name what is wrong with it)."""
    endpoints: dict[str, KVStoreEndpoint | None] = {}
    for facts in sorted(all_facts, key=lambda facts: facts.reference):
        store = facts.settings.kv_cache_store_config
        if store is None or store.target_stack is None:
            output = _kv_store(facts)
            if isinstance(output, dict):
                endpoints[facts.reference], _ = sanitized_endpoint(
                    facts.settings.cluster_domain, facts.reference, output
                )
    return endpoints


def build_fleet(all_facts: list[StackFacts], nodes: Sequence[ClusterNodes] = (),
                readiness: Sequence[PoolReadiness] | None = None) -> Fleet:
    """`nodes`: the clusters whose nodes were read, to check their stacks' engine pods against; `readiness`: each
    owner's store as read from its cluster (None: not read)."""
    by_reference = {facts.reference: facts for facts in all_facts}
    endpoints = owner_endpoints(all_facts)
    stacks = []
    problems: list[Problem] = []
    for reference in sorted(by_reference):
        facts = by_reference[reference]
        settings = facts.settings
        store = settings.kv_cache_store_config
        target = store.target_stack if store is not None else None
        own_endpoint = endpoints.get(reference)
        if target is not None:
            role, backend, allowed, worker_mib = CONSUMER, store.backend, (), None
            owner_endpoint = endpoints.get(target)
            problems += _consumer_problems(facts, target, by_reference.get(target))
        elif reference in endpoints:
            output = _kv_store(facts)
            role, backend, allowed, owner_endpoint = OWNER, output.get("backend"), tuple(output.get("allowed_consumers", ())), own_endpoint
            worker_mib = store.shared_memory_size_mb if rules.BACKENDS[store.backend].node_workers else None
        else:
            role, backend, allowed, owner_endpoint, worker_mib = NO_POOL, None, (), None, None
        user_config = settings.user_config()
        stacks.append(FleetStack(
            reference=reference, name=stack_name(reference), role=role, cluster=settings.cluster,
            namespace=settings.namespace, backend=backend, target=target, allowed_consumers=allowed,
            compatibility_key=compatibility(settings)["key"], engines=_engines(settings, user_config, owner_endpoint, role),
            node_worker_mib=worker_mib, unrendered=facts.unrendered, uses_pool=rules.uses_pool(rules.kv_transfer_configs(user_config)),
        ))
    problems += [Problem(clash.kind, clash.first, clash.second, clash.message)
                 for clash in clashes([facts.footprint() for facts in all_facts])]
    order = {kind: index for index, kind in enumerate(PROBLEM_KINDS)}
    problems.sort(key=lambda p: (order[p.kind], p.consumer, p.owner))
    warnings = [
        warning
        for cluster in nodes if cluster.context is not None
        for warning in capacity_warnings(cluster.cluster, [
            pods for facts in all_facts if facts.settings.cluster == cluster.cluster
            for pods in engine_pods(stack_name(facts.reference), facts.settings)
        ], cluster.nodes)
    ]
    fleet = Fleet(tuple(stacks), tuple(problems), tuple(nodes), tuple(warnings),
                  None if readiness is None else tuple(readiness))
    return dataclasses.replace(fleet, stacks=tuple(_with_sizing(fleet, stack, by_reference) for stack in fleet.stacks))


def _with_sizing(fleet: Fleet, stack: FleetStack, by_reference: Mapping[str, StackFacts]) -> FleetStack:
    """An owner's sizing row counts the writers of the consumers that pass their checks (Fleet.pool_bytes' rule)."""
    consumers = [by_reference[c.reference].settings for c in fleet.consumers_of(stack.reference) if fleet.is_healthy(c)]
    settings = by_reference[stack.reference].settings
    shared = sizing.shared_pool_sizing(settings, consumers) if stack.role == OWNER else None
    return dataclasses.replace(stack, sizing=sizing.row(stack.name, settings, shared))


def _consumer_problems(consumer: StackFacts, target: str, owner: StackFacts | None) -> list[Problem]:
    if owner is None:
        return [Problem(MISSING_STACK, target, consumer.reference, (
            f"kv_cache_store_config.target_stack: {consumer.reference} reads the KV store of {target}, which is not a "
            f"stack of the fleet; point target_stack at a stack that owns a store, or create {target}."
        ))]
    return [
        Problem(finding.kind, target, consumer.reference, finding.message)
        for finding in contract_findings(consumer.settings, consumer.reference, target, _kv_store(owner))
    ]


def destroy_problems(owner: str, consumers: list[str]) -> list[Problem]:
    """What `pulumi destroy` of `owner` would break: every consumer that reads its store."""
    return [
        Problem(DESTROY, owner, consumer, (
            f"`pulumi destroy` of {owner} would leave {consumer} without a KV pool: its "
            f"kv_cache_store_config.target_stack reads {stack_name(owner)}'s store; point {stack_name(consumer)} at "
            f"another store or destroy it first."
        ))
        for consumer in consumers
    ]
