"""A consumer computes where the owner's store is (issue 27): an owner's `kv_store` output whose fields all agree with
one another but name another host is refused, naming the owner stack and the field; the consumer's KV clients may
reach the store's ports in the owner's namespace only; the cluster domain is the consumer's setting."""

from __future__ import annotations

import copy
import json

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from kvpool.components.kv_store.contract import sanitized_endpoint
from kvpool.errors import SettingsError
from kvpool.internal.units import integral_floats_to_ints
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import env_of, render, stack_values
from tests.test_shared_store import A, B, mooncake_pair

OWN_HOST = "mindie-motor-kvs-master.service-a.svc.cluster.local"


def relocated(output: dict, old: str, new: str) -> dict:
    """The owner's outputs with every mention of `old` (host, engine env, client files) changed to `new` together:
    a forgery that agrees with itself."""
    return json.loads(json.dumps(output).replace(old, new))


def refusal(outputs: dict, values: dict | None = None) -> list[str]:
    with pytest.raises(ProgramError) as caught:
        render(values or stack_values("service-b"), stack="service-b", stack_references={A: outputs})
    return str(caught.value).splitlines()


@pytest.fixture(scope="module")
def memcache_owner() -> dict:
    return render(stack_values("service-a"), stack="service-a").run.outputs


@pytest.mark.parametrize("host", [
    "kv.evil.example",  # outside the cluster
    "mindie-motor-kvs-master.attacker.svc.cluster.local",  # another namespace's Service
    f"{OWN_HOST}.evil.example",  # the real name as a prefix of an outside one
    "mindie-motor-kvs-master.service-a.svc.evil.example",  # another cluster domain
    "mindie-motor-coordinator-infer.service-a.svc.cluster.local",  # another Service of the owner's namespace
])
def test_a_consistent_forgery_naming_another_host_is_refused(memcache_owner: dict, host: str) -> None:
    forged = relocated(memcache_owner, OWN_HOST, host)
    assert forged["kv_store"]["engine_env"]["KVS_MASTER_SERVICE"] == host
    assert f"tcp://{host}:50088" in forged["kv_store"]["client_files"]["mmc-local.conf"]
    assert refusal(forged) == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.host: is {host!r}, but the memcache store of namespace service-a is {OWN_HOST!r} (its "
        f"Service in cluster domain cluster.local); a consumer dials no other host",
    ]


def test_a_forged_deploy_mode_cannot_rename_the_service(memcache_owner: dict) -> None:
    forged = copy.deepcopy(memcache_owner)
    forged["kv_store"]["deploy_mode"] = "sideways"
    assert refusal(forged)[1:] == [
        f"  - {A}'s kv_store.deploy_mode: is not a deploy mode (multi_deployment, infer_service_set)"
    ]


@pytest.fixture(scope="module")
def mooncake_ha_owner() -> tuple[dict, dict]:
    provider, consumer = mooncake_pair(lease=11000)
    provider["kv_cache_store_config"]["ha"] = {"master_replicas": 2, "etcd": {"replicas": 3}}
    return render(provider, stack="service-a").run.outputs, consumer


def test_mooncake_ha_etcd_members_are_the_owners_own(mooncake_ha_owner: tuple[dict, dict]) -> None:
    outputs, consumer = mooncake_ha_owner
    address = json.loads(outputs["kv_store"]["client_files"]["mooncake.json"])["master_server_address"]
    peers = "mindie-motor-kv-store-etcd-peers.service-a.svc.cluster.local"
    assert address == "etcd://" + ";".join(f"mindie-motor-kv-store-etcd-{i}.{peers}:2379" for i in range(3))
    rendered = render(consumer, stack="service-b", stack_references={A: outputs})
    assert json.loads(rendered.get("ConfigMap", "mindie-motor-kv-client")["data"]["mooncake.json"])[
        "master_server_address"] == address
    for forged_members in (
        address.replace(peers, "etcd.evil.example"),  # consistent: every member moved outside
        address.replace("etcd-2.", "etcd-7."),  # a member the owner's etcd does not have
        address.replace(";mindie-motor-kv-store-etcd-2." + peers + ":2379", ""),  # 2 members: not an etcd size
    ):
        forged = relocated(outputs, address, forged_members)
        assert refusal(forged, consumer)[1:] == [
            f"  - {A}'s kv_store.client_files['mooncake.json'].master_server_address: is neither {OWN_HOST}:50088 "
            f"(kv_store.host:port) nor etcd:// endpoints of the store's etcd in namespace service-a"
        ]


def test_a_consistent_forgery_of_a_yuanrong_owner_is_refused() -> None:
    # Stack outputs cross the engine as floats; check_contract turns them back before it calls sanitized_endpoint.
    outputs = integral_floats_to_ints(render(stack_values("yuanrong"), stack="yuanrong").run.outputs["kv_store"])
    settings = load_from_pulumi_config(stack_values("service-b"), "service-b")
    target = "organization/motor-kvpool/yuanrong"
    endpoint, problems = sanitized_endpoint(settings.cluster_domain, target, outputs)
    assert problems == [] and endpoint.host == "mindie-motor-kv-store-etcd-peers.yuanrong.svc.cluster.local"
    forged = relocated(outputs, endpoint.host, "etcd.evil.example")
    assert sanitized_endpoint(settings.cluster_domain, target, forged) == (None, [
        f"{target}'s kv_store.host: is 'etcd.evil.example', but the yuanrong store of namespace yuanrong is "
        f"'mindie-motor-kv-store-etcd-peers.yuanrong.svc.cluster.local' (its Service in cluster domain "
        f"cluster.local); a consumer dials no other host"
    ])


# --- the cluster domain is the consumer's own setting -------------------------------------------------------------


def test_the_consumer_reads_the_store_in_its_own_cluster_domain(memcache_owner: dict) -> None:
    consumer = stack_values("service-b")
    consumer["cluster_domain"] = "corp.internal"
    # The owner's output names cluster.local: from a consumer in corp.internal that host is not the store's.
    assert refusal(memcache_owner, consumer)[1].startswith(
        f"  - {A}'s kv_store.host: is {OWN_HOST!r}, but the memcache store of namespace service-a is "
        f"'mindie-motor-kvs-master.service-a.svc.corp.internal' (its Service in cluster domain corp.internal)"
    )
    owner = stack_values("service-a")
    owner["cluster_domain"] = "corp.internal"
    outputs = render(owner, stack="service-a").run.outputs
    assert outputs["kv_store"]["host"] == "mindie-motor-kvs-master.service-a.svc.corp.internal"
    rendered = render(consumer, stack="service-b", stack_references={A: outputs})
    env = env_of(rendered.container("Deployment", "vllm-p0", "vllm"))
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.service-a.svc.corp.internal"
    assert env["CONTROLLER_SERVICE"] == "mindie-motor-controller-service.service-b.svc.corp.internal"


def test_the_cluster_domain_stays_out_of_motors_user_config() -> None:
    values = stack_values("service-a")
    values["cluster_domain"] = "corp.internal"
    rendered = render(values, stack="service-a")
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    assert "cluster_domain" not in user_config


def test_a_cluster_domain_that_is_not_a_dns_name_is_refused() -> None:
    values = stack_values("service-b")
    values["cluster_domain"] = "evil.example/x"
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "service-b")
    assert caught.value.problems == [
        "cluster_domain: 'evil.example/x' is not a DNS domain such as cluster.local (the kubelet's clusterDomain; "
        "lower-case labels joined by dots)"
    ]


def test_a_cluster_domain_label_longer_than_dns_allows_is_refused() -> None:
    label = "c" * 64
    values = stack_values("service-b")
    values["cluster_domain"] = f"{label}.local"
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "service-b")
    assert caught.value.problems == [
        f"cluster_domain: '{label}.local' has the label '{label}' of 64 characters; DNS allows at most 63 in a label, "
        "so no Service host name in it would resolve; shorten it to the kubelet's clusterDomain"
    ]
    values["cluster_domain"] = f"{label[1:]}.local"  # 63: DNS's limit itself is accepted
    assert load_from_pulumi_config(values, "service-b").cluster_domain == values["cluster_domain"]


# --- in the cluster: the consumer's KV clients reach the store's ports in the owner's namespace only --------------


def test_the_consumers_kv_clients_reach_the_store_ports_only_in_the_owners_namespace(memcache_owner: dict) -> None:
    rendered = render(stack_values("service-b"), stack="service-b", stack_references={A: memcache_owner})
    policy = rendered.get("NetworkPolicy", "mindie-motor-kv-client-egress")
    assert policy["metadata"]["namespace"] == "service-b"
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"motor-kvpool.io/kv-client": "true"}},
        "policyTypes": ["Egress"],
        "egress": [
            {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "service-a"}}}],
             "ports": [{"port": 50088, "protocol": "TCP"}, {"port": 50089, "protocol": "TCP"},
                       {"port": 50090, "protocol": "TCP"}]},
            {"ports": [{"port": 1, "endPort": 50087, "protocol": "TCP"}, {"port": 50091, "endPort": 65535, "protocol": "TCP"},
                       {"protocol": "UDP"}, {"protocol": "SCTP"}]},
        ],
    }
    pods = [rendered.get("Deployment", name)["spec"]["template"]["metadata"]["labels"] for name in ("vllm-p0", "vllm-d0")]
    assert all(labels["motor-kvpool.io/kv-client"] == "true" for labels in pods)


def test_mooncake_ha_clients_reach_the_owners_etcd_too(mooncake_ha_owner: tuple[dict, dict]) -> None:
    outputs, consumer = mooncake_ha_owner
    policy = render(consumer, stack="service-b", stack_references={A: outputs}).get(
        "NetworkPolicy", "mindie-motor-kv-client-egress")
    assert [port["port"] for port in policy["spec"]["egress"][0]["ports"]] == [2379, 9003, 50088]
    assert policy["spec"]["egress"][1]["ports"][:4] == [
        {"port": 1, "endPort": 2378, "protocol": "TCP"}, {"port": 2380, "endPort": 9002, "protocol": "TCP"},
        {"port": 9004, "endPort": 50087, "protocol": "TCP"}, {"port": 50089, "endPort": 65535, "protocol": "TCP"},
    ]


def test_an_owner_renders_no_client_egress_rule() -> None:
    assert "mindie-motor-kv-client-egress" not in render(stack_values("service-a"), stack="service-a").names(
        "NetworkPolicy")


@pytest.fixture(scope="module")
def mooncake_owner() -> tuple[dict, dict]:
    provider, consumer = mooncake_pair(lease=11000)
    return render(provider, stack="service-a").run.outputs, consumer


def with_client_field(outputs: dict, key: str, value: object) -> dict:
    forged = copy.deepcopy(outputs)
    config = json.loads(forged["kv_store"]["client_files"]["mooncake.json"])
    config[key] = value
    forged["kv_store"]["client_files"]["mooncake.json"] = json.dumps(config)
    return forged


@pytest.mark.parametrize(("key", "value", "problem"), [
    ("metadata_server", "http://kv.evil.example/metadata",
     "is 'http://kv.evil.example/metadata'; a consumer dials no host the owner names, and P2PHANDSHAKE is the "
     "metadata mode that names none"),
    ("global_segment_size", "1PB", "'1PB' is not a size such as 1GB, 512MB or a number of bytes"),
    ("local_buffer_size", -1, "-1 is not a size such as 1GB, 512MB or a number of bytes"),
    ("protocol", "carrier-pigeon", "Input should be 'ascend', 'tcp' or 'rdma'"),
])
def test_an_owners_mooncake_client_field_is_held_to_the_owners_own_model(
    mooncake_owner: tuple[dict, dict], key: str, value: object, problem: str
) -> None:
    """Issue 33 class 7: what a consumer takes from an owner's client file is validated by the settings model that
    validates the owner's own stack, and a metadata server the owner names is refused."""
    outputs, consumer = mooncake_owner
    assert refusal(with_client_field(outputs, key, value), consumer) == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.client_files['mooncake.json'].{key}: {problem}",
    ]


def test_an_owners_lease_beyond_its_models_bound_is_refused(mooncake_owner: tuple[dict, dict]) -> None:
    outputs, consumer = mooncake_owner
    forged = copy.deepcopy(outputs)
    forged["kv_store"]["lease_ttl_ms"] = 10**30
    assert refusal(forged, consumer) == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.lease_ttl_ms: Input should be less than or equal to 9223372036854775807",
    ]


def test_a_lease_from_an_owner_whose_backend_has_none_is_refused(memcache_owner: dict) -> None:
    """Only a backend whose RENDERER has lease_problems (Mooncake) exports a lease; a MemCache owner's is a forgery
    that would otherwise reach the consumer's timeout checks."""
    assert memcache_owner["kv_store"]["lease_ttl_ms"] is None
    forged = copy.deepcopy(memcache_owner)
    forged["kv_store"]["lease_ttl_ms"] = 11000
    assert refusal(forged) == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.lease_ttl_ms: is 11000, but a memcache store has no lease",
    ]


def test_an_owner_in_a_system_namespace_is_refused(memcache_owner: dict) -> None:
    forged = relocated(memcache_owner, "service-a.svc", "kube-system.svc")
    forged["kv_store"]["namespace"] = "kube-system"
    lines = refusal(forged)
    assert f"  - {A}'s kv_store.namespace: is 'kube-system', a namespace Kubernetes itself uses; give the service a " \
           "namespace of its own (job_id defaults to the stack name)." in lines


def test_a_secret_in_the_owners_memcache_conf_is_refused_as_the_owner_would(memcache_owner: dict) -> None:
    forged = copy.deepcopy(memcache_owner)
    forged["kv_store"]["client_files"]["mmc-local.conf"] += "ock.mmc.tls.key.password = hunter2\n"
    assert refusal(forged) == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.client_files['mmc-local.conf'].ock.mmc.tls.key.password: looks like a secret but is "
        "plain text; keep it as a Pulumi secret delivered through a Kubernetes Secret: `pulumi config set --secret "
        "--path secret_env.OCK_MMC_TLS_KEY_PASSWORD VALUE`.",
    ]
