"""At `pulumi up` a consumer reads its owner's store Service from the cluster (kv_store/shared.py store_serves)
and refuses a store with no ready pod behind it; a preview says that it did not look (issue 44 item 4). The engine
answers the read here through pulumi's mocks, as a cluster answers it; tests/e2e/test_stack_reference.py scales the
real owner's store to 0 on the e2e cluster."""

from __future__ import annotations

import asyncio
from typing import Any

import pulumi
import pytest

from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.shared import SharedStoreError, store_serves
from tests.program_runs import render, stack_values

OWNER = "organization/motor-kvpool/service-a"
ENDPOINT = KVStoreEndpoint(backend="memcache", host="mindie-motor-kvs-master.service-a.svc.cluster.local", port=50088,
                           metrics_port=50090, namespace="service-a", deploy_mode="multi_deployment")


class Cluster(pulumi.runtime.Mocks):
    """Answers the read of the owner's Endpoints with `subsets`, and records what was read."""

    def __init__(self, subsets: list[dict[str, Any]]) -> None:
        self.subsets = subsets
        self.read: list[tuple[str, str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.read.append((args.typ, args.resource_id))
        return args.resource_id, {"subsets": self.subsets}

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        return {}


def serves(subsets: list[dict[str, Any]]) -> tuple[Cluster, BaseException | None]:
    cluster = Cluster(subsets)
    asyncio.set_event_loop(asyncio.new_event_loop())  # the SDK's test runner uses the current loop; give it its own
    pulumi.runtime.set_mocks(cluster, preview=False)
    failure: list[BaseException] = []

    @pulumi.runtime.test
    def check() -> pulumi.Output:
        async def checked() -> None:
            try:
                await store_serves(ENDPOINT, "organization/motor-kvpool/service-b", OWNER)
            except SharedStoreError as error:
                failure.append(error)
        return pulumi.Output.from_input(checked())

    try:
        check()
    finally:  # a loop for whatever runs next (None would make asyncio.get_event_loop raise there)
        asyncio.get_event_loop().close()
        asyncio.set_event_loop(asyncio.new_event_loop())
    return cluster, failure[0] if failure else None


def test_a_store_with_a_ready_pod_is_used():
    cluster, failure = serves([{"addresses": [{"ip": "10.0.0.7"}]}])
    assert failure is None
    assert cluster.read == [("kubernetes:core/v1:Endpoints", "service-a/mindie-motor-kvs-master")]


@pytest.mark.parametrize(("subsets", "waiting"), [([], 0), ([{"notReadyAddresses": [{"ip": "10.0.0.7"}]}], 1)])
def test_a_store_with_no_ready_pod_is_refused_naming_the_owner(subsets, waiting):
    _, failure = serves(subsets)
    assert str(failure) == (
        f"organization/motor-kvpool/service-b cannot use the KV store of {OWNER}:\n"
        f"  - kv_cache_store_config.target_stack: {OWNER}'s store Service service-a/mindie-motor-kvs-master has no "
        f"ready pod behind it ({waiting} not ready): the store is scaled to 0, crash-looping or still starting. Bring "
        f"it back (`pulumi up` on {OWNER}; kubectl -n service-a get pods), then run `pulumi up` again."
    )


def test_a_preview_says_it_did_not_look():
    owner = render(stack_values("service-a"), stack="service-a")
    consumer = render(stack_values("service-b"), stack="service-b", stack_references={OWNER: owner.run.outputs})
    assert f"info: {OWNER}'s KV store is read from its outputs only: whether a pod of it is ready is checked at " \
           "`pulumi up`" in consumer.run.log_messages
