"""Sharing a KV store through a StackReference: the contract, the consumer's checks, and the provider's policy."""

from __future__ import annotations

import copy
import json

import pytest

from kvpool.cli.engine.mock_engine import ProgramError, StackReferenceError
from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import env_of, render, stack_values

A = "organization/motor-kvpool/service-a"
B = "organization/motor-kvpool/service-b"


@pytest.fixture(scope="module")
def provider_outputs() -> dict:
    return render(stack_values("service-a"), stack="service-a").run.outputs


def consume(outputs: dict | None, **changes) -> object:
    values = stack_values("service-b")
    for section, update in changes.items():
        values[section].update(update)
    references = {} if outputs is None else {A: outputs}
    return render(values, stack="service-b", stack_references=references)


def failure(outputs: dict | None, **changes) -> str:
    with pytest.raises(ProgramError) as caught:
        consume(outputs, **changes)
    return str(caught.value)


def test_contract_fields(provider_outputs):
    contract = provider_outputs["kv_store"]
    assert {key: contract[key] for key in ("schema", "stack", "cluster", "backend", "host", "port", "metrics_port",
                                           "namespace", "deploy_mode", "allowed_consumers", "standalone_store")} == {
        "schema": 2, "stack": A, "cluster": "default", "backend": "memcache",
        "host": "mindie-motor-kvs-master.service-a.svc.cluster.local", "port": 50088, "metrics_port": 50090,
        "namespace": "service-a", "deploy_mode": "multi_deployment", "allowed_consumers": ["service-b"],
        "standalone_store": False,
    }
    assert {k: v for k, v in contract["compatibility"].items() if k != "key"} == {
        "model": "/mnt/weight/qwen3_8B", "served_model_name": "qwen3-8B", "quantization": None, "dtype": None,
        "kv_cache_dtype": None, "block_size": 128, "tensor_parallel_size": 2, "pipeline_parallel_size": 1,
        "python_hash_seed": "0",
    }
    assert len(contract["compatibility"]["key"]) == 16


def test_consumer_creates_no_store_and_points_at_the_providers(provider_outputs):
    rendered = consume(provider_outputs)
    assert [key for key in rendered.objects if "kv-store" in key[1] or "kvs" in key[1]] == []
    assert rendered.names("NetworkPolicy") == ["mindie-motor-kv-client-egress"]  # its clients' rule, not the store's
    env = env_of(rendered.container("Deployment", "vllm-p0", "vllm"))
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.service-a.svc.cluster.local"
    conf = rendered.get("ConfigMap", "motor-config")["data"]["kv_store_backends.memcache.mmc-local.conf"]
    assert conf.startswith("ock.mmc.meta_service_url = tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50088\n")
    assert rendered.get("ConfigMap", "motor-config")["metadata"]["namespace"] == "service-b"
    assert rendered.run.outputs["kv_store_source"] == A and "kv_store" not in rendered.run.outputs


def test_provider_policy_admits_exactly_the_listed_consumers(provider_outputs):
    policy = render(stack_values("service-a"), stack="service-a").get("NetworkPolicy", "mindie-motor-kv-store")
    assert policy["spec"]["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": {"motor-kvpool.io/kv-client": "true"}}},
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "service-b"}},
         "podSelector": {"matchLabels": {"motor-kvpool.io/kv-client": "true"}}},
    ]


def test_provider_parameter_change_shows_up_in_the_consumer(provider_outputs):
    values = stack_values("service-a")
    values["kv_cache_store_config"].update(port=51000, config_store_port=51001)
    moved = render(values, stack="service-a").run.outputs
    conf = consume(moved).get("ConfigMap", "motor-config")["data"]["kv_store_backends.memcache.mmc-local.conf"]
    assert "service-a.svc.cluster.local:51000\n" in conf and "service-a.svc.cluster.local:51001\n" in conf


def test_missing_stack():
    with pytest.raises(StackReferenceError) as caught:
        consume(None)
    assert str(caught.value) == (
        f"the program references stack '{A}', but this preview has no outputs for it (known stacks: none)"
    )


def test_missing_kv_store_output(provider_outputs):
    outputs = {k: v for k, v in provider_outputs.items() if k != "kv_store"}
    assert failure(outputs) == (
        f"{B} cannot use the KV store of {A}:\n  - kv_cache_store_config.target_stack: stack {A} has no `kv_store` "
        f"output, so {B} has no store to use. {A} owns no KV store (it sets target_stack itself or has no pool), "
        f"or was last deployed before motor-kvpool exported one: point target_stack at the stack that owns the "
        f"store, or run `pulumi up` on {A}."
    )


def test_older_schema(provider_outputs):
    outputs = copy.deepcopy(provider_outputs)
    outputs["kv_store"]["schema"] = 0
    assert failure(outputs).endswith(
        f"kv_cache_store_config.target_stack: {A} exports kv_store schema 0, but {B} reads schema 2; run `pulumi up` "
        f"on {A} with this motor-kvpool."
    )


def test_backend_differs(provider_outputs):
    values = stack_values("service-b")
    values["kv_cache_store_config"] = {"backend": "mooncake", "target_stack": A, "eviction_high_watermark_ratio": 0.7,
                                       "eviction_ratio": 0.2}
    with pytest.raises(ProgramError) as caught:
        render(values, stack="service-b", stack_references={A: provider_outputs})
    message = str(caught.value)
    assert f"  - kv_cache_store_config.backend: {B} uses 'mooncake' but {A}'s store is 'memcache' (kv_store.backend); " \
           f"write backend: memcache." in message.splitlines()


def test_deploy_mode_differs(provider_outputs):
    message = failure(provider_outputs, motor_deploy_config={"deploy_mode": "infer_service_set"})
    assert message.splitlines()[1] == (
        f"  - motor_deploy_config.deploy_mode: {B} is infer_service_set but {A} is multi_deployment "
        f"(kv_store.deploy_mode); shared services use one mode, as Motor requires."
    )


def test_namespace_not_allowed(provider_outputs):
    message = failure(provider_outputs, motor_deploy_config={"job_id": "service-c"})
    assert message.splitlines()[1] == (
        f"  - kv_cache_store_config.target_stack: {A} does not allow namespace 'service-c' "
        f"(kv_store.allowed_consumers: ['service-b']); add it to {A}'s kv_cache_store_config.allowed_consumers and "
        f"run `pulumi up` there, so that its NetworkPolicy admits {B}'s engines."
    )



def consume_in(outputs: dict, cluster: str) -> object:
    """The consumer service-b with its own `cluster` setting."""
    return render({**stack_values("service-b"), "cluster": cluster}, stack="service-b", stack_references={A: outputs})


def test_a_consumer_in_another_cluster_than_its_owner_is_refused(provider_outputs):
    """Issue 45 §7: service-b in cluster east read service-a's store of cluster default and dialled a Service that
    does not exist in east."""
    with pytest.raises(ProgramError) as caught:
        consume_in(provider_outputs, "east")
    assert str(caught.value).splitlines()[1:] == [
        f"  - cluster: {B} deploys to cluster 'east' but {A}'s store is in cluster 'default' (kv_store.cluster), so "
        f"the store Service mindie-motor-kvs-master.service-a.svc.cluster.local that {B}'s client file dials does "
        f"not exist where {B}'s engines run; point target_stack at a store of cluster 'east', or, if the two stacks "
        f"deploy to one cluster, give both the same cluster setting."
    ]


def test_a_consumer_in_its_owners_cluster_is_taken(provider_outputs):
    owner = render({**stack_values("service-a"), "cluster": "east"}, stack="service-a").run.outputs
    assert owner["kv_store"]["cluster"] == "east"
    env = env_of(consume_in(owner, "east").container("Deployment", "vllm-p0", "vllm"))
    assert env["KVS_MASTER_SERVICE"] == "mindie-motor-kvs-master.service-a.svc.cluster.local"
    with pytest.raises(ProgramError, match="deploys to cluster 'default' but"):
        consume(owner)


def test_an_owner_output_without_a_cluster_is_refused(provider_outputs):
    """Schema 2 outputs carry the owner's cluster (older owners are asked for an up by the schema check)."""
    message = forged(provider_outputs, lambda kv: kv.pop("cluster"))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.cluster: is not a cluster name (one line of letters, digits and -_.:@/)"
    ]


@pytest.mark.parametrize("cluster", [7, ["east"], "", "east\nwest", "-east", "x" * 254])
def test_an_owner_cluster_that_is_no_cluster_name_is_refused(provider_outputs, cluster):
    message = forged(provider_outputs, lambda kv: kv.update(cluster=cluster))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.cluster: is not a cluster name (one line of letters, digits and -_.:@/)"
    ]


def test_compatibility_key_differs(provider_outputs):
    values_change = {"engine_config": {"served_model_name": "qwen3-8B", "model": "/mnt/weight/qwen3_32B",
                                       "tensor_parallel_size": 2, "block-size": 128,
                                       "kv_transfer_config": stack_values("service-b")["motor_engine_prefill_config"][
                                           "engine_config"]["kv_transfer_config"]}}
    message = failure(provider_outputs, motor_engine_prefill_config=values_change)
    assert message.splitlines()[1:] == [
        f"  - motor_engine_prefill_config.engine_config.model: {B} has '/mnt/weight/qwen3_32B' but {A} has "
        f"'/mnt/weight/qwen3_8B' (kv_store.compatibility.model); cached blocks are only shared between services that "
        f"agree on it."
    ]


def mooncake_pair(lease: int) -> tuple[dict, dict]:
    """service-a/service-b on a Mooncake store whose owner sets `lease`."""
    provider, consumer = stack_values("service-a"), stack_values("service-b")
    for values in (provider, consumer):
        for side in ("prefill", "decode"):
            connectors = values[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"][
                "kv_connector_extra_config"]["connectors"]
            connectors[1]["kv_connector_extra_config"] = {"backend": "mooncake"}
    provider["kv_cache_store_config"] = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.7,
                                         "eviction_ratio": 0.2, "default_kv_lease_ttl": lease,
                                         "allowed_consumers": ["service-b"]}
    consumer["kv_cache_store_config"] = {"backend": "mooncake", "target_stack": A}  # no eviction ratios: not its store
    return provider, consumer


def test_consumer_engines_are_checked_against_the_owners_lease():
    provider, consumer = mooncake_pair(lease=12000)
    provider["env"] = {"motor_common_env": {"ASCEND_TRANSFER_TIMEOUT": "5000"}}
    outputs = render(provider, stack="service-a").run.outputs
    assert outputs["kv_store"]["lease_ttl_ms"] == 12000
    consumer["env"] = {"motor_engine_decode_env": {"ASCEND_TRANSFER_TIMEOUT": "15000"}}
    with pytest.raises(ProgramError) as caught:
        render(consumer, stack="service-b", stack_references={A: outputs})
    assert str(caught.value).splitlines()[1] == (
        f"  - {A}'s kv_cache_store_config.default_kv_lease_ttl (its lease, which {B}'s engines read under): is "
        f"12000 ms but env.motor_engine_decode_env.ASCEND_TRANSFER_TIMEOUT is 15000 ms; the lease must be longer "
        f"than the timeout (seed FAQ 3). Set ASCEND_TRANSFER_TIMEOUT below 12000 (e.g. 11000) in "
        f"env.motor_engine_decode_env, or raise default_kv_lease_ttl above 15000."
    )
    del consumer["env"]
    rendered = render(consumer, stack="service-b", stack_references={A: outputs})
    assert rendered.names("Deployment") == ["mindie-motor-controller", "mindie-motor-coordinator", "vllm-d0", "vllm-p0"]


def test_a_consumer_on_other_hardware_is_refused(provider_outputs):
    message = failure(provider_outputs, motor_deploy_config={"hardware_type": "800I_A3"})
    assert message.splitlines()[1:] == [
        f"  - kv_cache_store_config.local_service_mode: {B} is 'standalone' but {A}'s engines run the LocalService "
        f"'inprocess'; write local_service_mode: inprocess.",
        f"  - motor_deploy_config.hardware_type: {B}'s 800I_A3 needs the MemCache transport device_sdma, but {A}'s "
        f"LocalService conf uses another; share the store only between services on the same hardware family.",
    ]


def test_user_errors_become_run_errors_and_other_errors_pass_unchanged():
    import pulumi

    from kvpool.errors import KvpoolError, user_errors_as_run_errors

    with pytest.raises(pulumi.RunError, match="^motor_deployer_dir is unset$") as raised:
        with user_errors_as_run_errors():
            raise KvpoolError("motor_deployer_dir is unset")
    assert raised.value.__cause__ is None and raised.value.__suppress_context__
    with pytest.raises(KeyError):
        with user_errors_as_run_errors():
            raise KeyError("a bug keeps its traceback")


# --- a forged or compromised owner: its output is data, checked field by field (kvpool/components/kv_store/contract.py) ---


def forged(provider_outputs: dict, change) -> str:
    outputs = copy.deepcopy(provider_outputs)
    change(outputs["kv_store"])
    return failure(outputs)


def test_forged_engine_env_is_refused_naming_the_owner_and_field(provider_outputs):
    message = forged(provider_outputs, lambda kv: kv["engine_env"].update(LD_PRELOAD="/tmp/evil.so"))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.engine_env.LD_PRELOAD: is not a variable a memcache store sets (it sets "
        f"KVS_MASTER_SERVICE, KV_STORE_BACKEND, MMC_LOCAL_CONFIG_PATH, MMC_LOCAL_SERVICE_MODE)"
    ]


def test_forged_engine_env_value_is_refused(provider_outputs):
    message = forged(provider_outputs, lambda kv: kv["engine_env"].update(MMC_LOCAL_CONFIG_PATH="/etc/passwd"))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.engine_env.MMC_LOCAL_CONFIG_PATH: must be '/usr/local/Ascend/pyMotor/conf/mmc-local.conf', "
        f"what kv_store.host and port give"
    ]


def test_forged_client_file_name_is_refused(provider_outputs):
    message = forged(provider_outputs, lambda kv: kv["client_files"].update({"../../escape": "x"}))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.client_files['../../escape']: is not a client file of a memcache store (mmc-local.conf)"
    ]


def test_forged_client_file_content_is_refused(provider_outputs):
    def point_elsewhere(kv: dict) -> None:
        kv["client_files"]["mmc-local.conf"] = kv["client_files"]["mmc-local.conf"].replace(
            "tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50088", "tcp://evil.example:50088")

    message = forged(provider_outputs, point_elsewhere)
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.client_files['mmc-local.conf'].ock.mmc.meta_service_url: must be "
        f"tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:50088 (kv_store.host and port)"
    ]


def test_forged_host_path_is_refused(provider_outputs):
    message = forged(provider_outputs, lambda kv: kv.update(host_paths={"root": {"path": "/", "mount_path": "/host"}}))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.host_paths: engines mount none for a memcache store; refusing any other host path"
    ]


@pytest.mark.parametrize("forgery", [True, "yes"])
def test_a_standalone_store_forged_on_a_memcache_store_is_refused(provider_outputs, forgery):
    message = forged(provider_outputs, lambda kv: kv.update(standalone_store=forgery))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.standalone_store: must be false for a memcache store, or true or false for a mooncake store"
    ]


def test_forged_host_is_refused(provider_outputs):
    message = forged(provider_outputs, lambda kv: kv.update(host="evil.example\n- name: x"))
    assert message.splitlines()[1:] == [
        f"  - {A}'s kv_store.host: is 'evil.example\\n- name: x', but the memcache store of namespace service-a is "
        f"'mindie-motor-kvs-master.service-a.svc.cluster.local' (its Service in cluster domain cluster.local); a "
        f"consumer dials no other host"
    ]


@pytest.fixture(scope="module")
def standalone_pair() -> tuple[dict, dict]:
    provider, consumer = mooncake_pair(lease=11000)
    for service in (provider, consumer):
        service["kv_cache_store_config"].update(store_mode="standalone")
    return render(provider, stack="service-a").run.outputs, consumer


def consume_standalone(pair: tuple[dict, dict], **store):
    outputs, consumer = copy.deepcopy(pair[0]), copy.deepcopy(pair[1])
    consumer["kv_cache_store_config"].update(store)
    return render(consumer, stack="service-b", stack_references={A: outputs})


def standalone_failure(pair, **store) -> list[str]:
    with pytest.raises(ProgramError) as caught:
        consume_standalone(pair, **store)
    return str(caught.value).splitlines()[1:]


def test_a_consumer_of_a_standalone_store_runs_the_store_process_in_its_own_engines(standalone_pair):
    """Motor's node manager in the consumer's engine container starts the store from the consumer's own
    user_config.json: nothing of the owner's runs in the consumer's pods but its client file."""
    assert standalone_pair[0]["kv_store"]["standalone_store"] is True
    rendered = consume_standalone(standalone_pair)
    spec = rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["vllm"]
    assert {"name": "kv-client-dir", "emptyDir": {}} in spec["volumes"]
    store = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])["kv_cache_store_config"]
    assert (store["store_mode"], store["protocol"]) == ("standalone", "ascend")


def test_a_consumer_in_another_store_mode_than_its_owner_is_refused(standalone_pair):
    assert standalone_failure(standalone_pair, store_mode="embedded") == [
        f"  - kv_cache_store_config.store_mode: {B} is 'embedded' but {A}'s store is 'standalone' "
        f"(kv_store.standalone_store), so {B}'s engines hold no segment (the owner's mooncake.json gives them 0), "
        f"and no store process would hold one; write store_mode: standalone."
    ]


def test_a_consumer_on_another_transport_than_its_owner_is_refused(standalone_pair):
    assert standalone_failure(standalone_pair, protocol="tcp") == [
        f"  - kv_cache_store_config.protocol: {B} is 'tcp' but {A}'s mooncake.json uses 'ascend'; one pool has one "
        f"transport, write protocol: ascend."
    ]


def test_an_older_owners_sidecar_is_not_run(standalone_pair):
    """Schema 1 owners exported the standalone store container; the consumer runs none and asks for an up there."""
    outputs, consumer = copy.deepcopy(standalone_pair)
    outputs["kv_store"].update(schema=1, sidecars=[{"name": "mooncake-store", "image": "evil/rootkit:1"}])
    with pytest.raises(ProgramError) as caught:
        render(consumer, stack="service-b", stack_references={A: outputs})
    assert str(caught.value).endswith(
        f"kv_cache_store_config.target_stack: {A} exports kv_store schema 1, but {B} reads schema 2; run `pulumi up` "
        f"on {A} with this motor-kvpool."
    )


def test_allowed_sidecar_images_is_refused_with_what_replaced_it():
    values = stack_values("service-b")
    values["kv_cache_store_config"]["allowed_sidecar_images"] = ["registry.example/mooncake:1"]
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "service-b")
    assert caught.value.problems == [
        "kv_cache_store_config.allowed_sidecar_images: allowed_sidecar_images is gone with the store container it "
        "admitted: a standalone Mooncake store now runs in this service's own engine containers, started by Motor's "
        "node manager; remove it"
    ]


@pytest.mark.parametrize(("written", "where", "them"), [
    ({"port": 50088}, "kv_cache_store_config.port", "it"),
    ({"allowed_consumers": ["service-c"]}, "kv_cache_store_config.allowed_consumers", "it"),
    ({"port": 50088, "allowed_consumers": []}, "kv_cache_store_config: port, allowed_consumers", "them"),
])
def test_a_consumer_refuses_what_only_the_owners_store_reads(written, where, them):
    """Issue 45 §7: a consumer's port made its user_config.json say one port and its client file dial another, and
    its allowed_consumers were dropped without a word."""
    values = stack_values("service-b")
    values["kv_cache_store_config"].update(written)
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "service-b")
    assert caught.value.problems == [
        f"{where}: the owner's to set: organization/motor-kvpool/service-a runs the store this service uses "
        f"(target_stack); remove {them} here (the client files dial the owner's port; list this namespace in the "
        f"owner's allowed_consumers)"
    ]


@pytest.mark.parametrize("namespace", ["kube-system", "kube-public", "kube-node-lease", "default"])
def test_allowed_consumers_refuse_a_system_namespace(namespace):
    values = stack_values("service-a")
    values["kv_cache_store_config"]["allowed_consumers"] = ["service-b", namespace]
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "service-a")
    assert caught.value.problems == [
        f"kv_cache_store_config.allowed_consumers: {namespace} is a namespace Kubernetes itself uses, where no "
        "service's engines run; admitting it opens the pool to the cluster's system pods: list the consumers' own "
        "namespaces"
    ]
