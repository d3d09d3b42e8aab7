"""Use another stack's KV store through a StackReference (what deploy.py's target_job_id did by namespace name,
silently creating a new store when the name was wrong). Every mismatch fails loudly, naming both stacks. The owner's
output is read as data by kvpool/components/kv_store/contract.py, and whether its store serves from the cluster by
kvpool/components/kv_store/shared.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pulumi

from kvpool.components.kv_store.contract import OUTPUT, sanitized_endpoint
from kvpool.components.kv_store.endpoint import SCHEMA, KVStoreEndpoint
from kvpool.components.kv_store.registry import renderer
from kvpool.components.kv_store.shared import SharedStoreError, store_serves
from kvpool.internal.units import integral_floats_to_ints
from kvpool.policies import rules
from kvpool.program.compatibility import COMPATIBILITY_FIELDS, compatibility
from kvpool.settings.service import ServiceSettings

# What a contract problem is about, for readers that sort them (the fleet names revoked consumers and key
# mismatches apart from the rest); the program only prints the messages.
NO_STORE = "no-store"
NOT_ADMITTED = "not-admitted"
COMPATIBILITY = "compatibility"
CONTRACT = "contract"


@dataclass(frozen=True)
class ContractProblem:
    kind: str  # NO_STORE, NOT_ADMITTED, COMPATIBILITY or CONTRACT
    message: str


def contract_problems(settings: ServiceSettings, own: str, target: str, output: Any) -> list[str]:
    """Everything that stops this service from using the store `target` exports as `output`."""
    return [problem.message for problem in contract_findings(settings, own, target, output)]


def contract_findings(settings: ServiceSettings, own: str, target: str, output: Any) -> list[ContractProblem]:
    """contract_problems, each with its kind."""
    field = "kv_cache_store_config.target_stack"
    if not isinstance(output, dict):
        return [ContractProblem(NO_STORE,
            f"{field}: stack {target} has no `{OUTPUT}` output, so {own} has no store to use. {target} owns no KV "
            f"store (it sets target_stack itself or has no pool), or was last deployed before motor-kvpool exported "
            f"one: point target_stack at the stack that owns the store, or run `pulumi up` on {target}."
        )]
    schema = output.get("schema")
    if schema != SCHEMA:
        older = schema is None or isinstance(schema, int) and schema < SCHEMA
        fix = f"run `pulumi up` on {target} with this motor-kvpool" if older else f"upgrade motor-kvpool in {own}"
        return [ContractProblem(CONTRACT, f"{field}: {target} exports {OUTPUT} schema {schema}, but {own} reads schema {SCHEMA}; {fix}.")]
    endpoint, output_problems = sanitized_endpoint(settings.cluster_domain, target, output)
    if endpoint is None:
        # the owner's output is not what a store exports: compare nothing else with it
        return [ContractProblem(CONTRACT, problem) for problem in output_problems]
    store = settings.kv_cache_store_config
    deploy = settings.motor_deploy_config
    mismatches: list[str] = []
    if output["cluster"] != settings.cluster:
        mismatches.append(
            f"cluster: {own} deploys to cluster {settings.cluster!r} but {target}'s store is in cluster "
            f"{output['cluster']!r} ({OUTPUT}.cluster), so the store Service {output['host']} that {own}'s client "
            f"file dials does not exist where {own}'s engines run; point target_stack at a store of cluster "
            f"{settings.cluster!r}, or, if the two stacks deploy to one cluster, give both the same cluster setting."
        )
    if store.backend != output["backend"]:
        mismatches.append(
            f"kv_cache_store_config.backend: {own} uses {store.backend!r} but {target}'s store is "
            f"{output['backend']!r} ({OUTPUT}.backend); write backend: {output['backend']}."
        )
    kv_configs = rules.kv_transfer_configs(settings.user_config())
    mismatches += [
        f"{finding.path}: {own}'s connector names a backend {target}'s store ({output['backend']!r}) does not run"
        for finding in rules.check_backend_consistency(output["backend"], kv_configs)
    ]
    if endpoint.lease_ttl_ms:  # only a backend with a lease carries one (contract.py)
        lease = {"backend": endpoint.backend, "default_kv_lease_ttl": endpoint.lease_ttl_ms}
        mismatches += [
            f"{target}'s {finding.path} (its lease, which {own}'s engines read under): {finding.message}"
            for finding in rules.check_lease_exceeds_timeouts(lease, rules.engine_envs(settings.env_sections()), kv_configs)
        ]
    if deploy.deploy_mode != output["deploy_mode"]:
        mismatches.append(
            f"motor_deploy_config.deploy_mode: {own} is {deploy.deploy_mode} but {target} is "
            f"{output['deploy_mode']} ({OUTPUT}.deploy_mode); shared services use one mode, as Motor requires."
        )
    if store.backend == endpoint.backend:  # another backend: said above
        mismatches += renderer(store.backend).consumer_problems(
            store, deploy.hardware_type, own, target, endpoint)
    problems = [ContractProblem(CONTRACT, mismatch) for mismatch in mismatches]
    if settings.namespace not in output.get("allowed_consumers", []):
        problems.append(ContractProblem(NOT_ADMITTED,
            f"{field}: {target} does not allow namespace {settings.namespace!r} ({OUTPUT}.allowed_consumers: "
            f"{output.get('allowed_consumers', [])}); add it to {target}'s kv_cache_store_config.allowed_consumers "
            f"and run `pulumi up` there, so that its NetworkPolicy admits {own}'s engines."
        ))
    ours, theirs = compatibility(settings), output.get("compatibility", {})
    # An owner with no engines (a pool of its own, kvpool.program.args.pool_store_args) has no record to agree with.
    for name, value in ours.items() if theirs else ():
        if name != "key" and theirs.get(name) != value:
            problems.append(ContractProblem(COMPATIBILITY,
                f"{COMPATIBILITY_FIELDS[name]}: {own} has {value!r} but {target} has {theirs.get(name)!r} "
                f"({OUTPUT}.compatibility.{name}); cached blocks are only shared between services that agree on it."
            ))
    return problems


def check_contract(settings: ServiceSettings, own: str, target: str, output: Any) -> KVStoreEndpoint:
    output = integral_floats_to_ints(output)  # stack outputs cross the engine as floats: 50088.0 is 50088
    problems = contract_problems(settings, own, target, output)
    if problems:
        raise SharedStoreError(
            f"{own} cannot use the KV store of {target}:\n" + "\n".join(f"  - {p}" for p in problems)
        )
    # What the consumer renders is built from the owner's data fields, never copied (kvpool/components/kv_store/contract.py).
    endpoint, _ = sanitized_endpoint(settings.cluster_domain, target, output)
    assert endpoint is not None
    return endpoint


async def shared_store(settings: ServiceSettings, own: str) -> KVStoreEndpoint:
    """The target stack's `kv_store` output as a plain value, checked. Awaited from the program's `pulumi.run`
    entry point, so the consumer's resources are built at top level, never inside an apply."""
    target = str(settings.kv_cache_store_config.target_stack)
    reference = pulumi.StackReference(target)
    # A stack the backend does not know fails the engine's read of the reference before the program resumes: the
    # engine's own message (`unknown stack "<name>"`) is what the user sees, so there is nothing to catch here.
    details = await reference.get_output_details(OUTPUT)
    if details.secret_value is not None:
        raise SharedStoreError(
            f"{own} cannot use the KV store of {target}:\n  - kv_cache_store_config.target_stack: {target}'s "
            f"`{OUTPUT}` output is a secret; the store contract holds no secret, so {own} refuses to render it in "
            f"plain. Export it unsecret from {target}."
        )
    endpoint = check_contract(settings, own, target, details.value)
    await store_serves(endpoint, own, target)
    return endpoint
