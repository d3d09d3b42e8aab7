"""A consumer reads its owner's store Service from the cluster (kv_store/shared.py store_serves): `pulumi up` refuses
a store with no ready pod behind it and `pulumi preview` warns; the offline preview says that it did not look (issue
44 item 4). The engine answers the reads here through pulumi's mocks, as a cluster answers them;
tests/e2e/test_stack_reference.py scales the real owner's store to 0 on the e2e cluster."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import Any

import pulumi
import pytest

from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.shared import SharedStoreError, store_serves
from tests.program_runs import render, stack_values

OWNER = "organization/motor-kvpool/service-a"
CONSUMER = "organization/motor-kvpool/service-b"
ENDPOINT = KVStoreEndpoint(backend="memcache", host="mindie-motor-kvs-master.service-a.svc.cluster.local", port=50088,
                           metrics_port=50090, namespace="service-a", deploy_mode="multi_deployment")
YUANRONG = replace(ENDPOINT, backend="yuanrong", host="mindie-motor-kv-store-etcd-peers.service-a.svc.cluster.local")
ENDPOINTS = "kubernetes:core/v1:Endpoints"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
METADATA = {"name": "mindie-motor-kvs-master", "namespace": "service-a"}
BACK = (f"Bring it back (`pulumi up` on {OWNER}; kubectl -n service-a get pods), then run `pulumi up` again.")


def no_ready_pod(service: str, waiting: int) -> str:
    return (f"{OWNER}'s store Service service-a/{service} has no ready pod behind it ({waiting} not ready): the "
            f"store is scaled to 0, crash-looping or still starting")


class Cluster(pulumi.runtime.Mocks):
    """Answers each read with the state given for its type (what the API server holds), and records what was read."""

    def __init__(self, states: dict[str, dict[str, Any]]) -> None:
        self.states = states
        self.read: list[tuple[str, str]] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        self.read.append((args.typ, args.resource_id))
        return args.resource_id, self.states[args.typ]

    def call(self, args: pulumi.runtime.MockCallArgs) -> dict:
        return {}


def serves(states: dict[str, dict[str, Any]], endpoint: KVStoreEndpoint = ENDPOINT, preview: bool = False
           ) -> tuple[Cluster, BaseException | None, list[str]]:
    """What store_serves made of the cluster's answers: the reads, its refusal, and its log as `level: message`."""
    cluster = Cluster(states)
    logged: list[str] = []
    logger = logging.getLogger(f"{__name__}.serves")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    handler = logging.Handler()
    handler.emit = lambda record: logged.append(f"{record.levelname.lower()}: {record.getMessage()}")  # type: ignore
    logger.handlers = [handler]
    asyncio.set_event_loop(asyncio.new_event_loop())  # the SDK's test runner uses the current loop; give it its own
    pulumi.runtime.set_mocks(cluster, preview=preview, logger=logger)
    failure: list[BaseException] = []

    @pulumi.runtime.test
    def check() -> pulumi.Output:
        async def checked() -> None:
            try:
                await store_serves(endpoint, CONSUMER, OWNER)
            except SharedStoreError as error:
                failure.append(error)
        return pulumi.Output.from_input(checked())

    try:
        check()
    finally:  # a loop for whatever runs next (None would make asyncio.get_event_loop raise there)
        asyncio.get_event_loop().close()
        asyncio.set_event_loop(asyncio.new_event_loop())
    return cluster, failure[0] if failure else None, logged


def endpoints(subsets: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {ENDPOINTS: {"metadata": METADATA, "subsets": subsets}}


READY = [{"addresses": [{"ip": "10.0.0.7"}]}]


def test_a_store_with_a_ready_pod_is_used():
    cluster, failure, logged = serves(endpoints(READY))
    assert failure is None
    assert logged == []
    assert cluster.read == [(ENDPOINTS, "service-a/mindie-motor-kvs-master")]


@pytest.mark.parametrize(("subsets", "waiting"), [([], 0), ([{"notReadyAddresses": [{"ip": "10.0.0.7"}]}], 1)])
def test_a_store_with_no_ready_pod_is_refused_naming_the_owner(subsets, waiting):
    _, failure, _ = serves(endpoints(subsets))
    assert str(failure) == (
        f"{CONSUMER} cannot use the KV store of {OWNER}:\n  - kv_cache_store_config.target_stack: "
        f"{no_ready_pod('mindie-motor-kvs-master', waiting)}. {BACK}"
    )


def test_a_real_preview_reads_the_store_and_warns_where_up_will_refuse():
    """An Endpoints object with no pod has no `subsets` at all, which a preview reads as unknown: still no pod."""
    cluster, failure, logged = serves({ENDPOINTS: {"metadata": METADATA}}, preview=True)
    assert failure is None
    assert cluster.read == [(ENDPOINTS, "service-a/mindie-motor-kvs-master")]
    assert logged == [f"warning: kv_cache_store_config.target_stack: {no_ready_pod('mindie-motor-kvs-master', 0)}; "
                      f"`pulumi up` of {CONSUMER} will refuse it. {BACK}"]


def test_a_real_preview_of_a_ready_store_says_nothing():
    _, failure, logged = serves(endpoints(READY), preview=True)
    assert (failure, logged) == (None, [])


def test_a_preview_that_read_nothing_says_it_did_not_look():
    """What the offline engine answers (kvpool/cli/engine/mock_engine.py): an object without properties."""
    _, failure, logged = serves({ENDPOINTS: {}}, preview=True)
    assert failure is None
    assert logged == [f"info: {OWNER}'s KV store is read from its outputs only, not from the cluster: whether a pod "
                      f"of it is ready is checked by `pulumi preview` (a warning) and `pulumi up` (a refusal)"]


WORKERS = "service-a/mindie-motor-ds-worker"


def test_a_yuanrong_store_is_refused_while_no_worker_is_ready():
    """Its etcd peers Service publishes not-ready addresses: the Endpoints list the ring's pods whether or not any
    datasystem worker serves, so the workers' DaemonSet says it."""
    cluster, failure, _ = serves({**endpoints(READY), DAEMON_SET: {"status": {
        "desiredNumberScheduled": 2, "numberReady": 0, "currentNumberScheduled": 2, "numberMisscheduled": 0}}},
        YUANRONG)
    assert cluster.read == [(ENDPOINTS, "service-a/mindie-motor-kv-store-etcd-peers"), (DAEMON_SET, WORKERS)]
    assert str(failure) == (
        f"{CONSUMER} cannot use the KV store of {OWNER}:\n  - kv_cache_store_config.target_stack: {OWNER}'s store "
        f"workers, DaemonSet {WORKERS}, have no ready pod (2 scheduled): no engine node has a worker to serve it. "
        f"{BACK}"
    )


def test_a_yuanrong_store_with_a_ready_worker_is_used():
    _, failure, logged = serves({**endpoints(READY), DAEMON_SET: {"status": {
        "desiredNumberScheduled": 2, "numberReady": 1, "currentNumberScheduled": 2, "numberMisscheduled": 0}}},
        YUANRONG)
    assert (failure, logged) == (None, [])


def test_the_offline_preview_records_the_read_and_says_it_did_not_look():
    owner = render(stack_values("service-a"), stack="service-a")
    consumer = render(stack_values("service-b"), stack="service-b", stack_references={OWNER: owner.run.outputs})
    assert f"info: {OWNER}'s KV store is read from its outputs only, not from the cluster: whether a pod of it is " \
           "ready is checked by `pulumi preview` (a warning) and `pulumi up` (a refusal)" in consumer.run.log_messages
    read = consumer.run.resource(ENDPOINTS, f"kv_store-of-{OWNER.replace('/', '-')}")
    assert (read.read, read.resource_id, read.inputs) == (True, "service-a/mindie-motor-kvs-master", {})
