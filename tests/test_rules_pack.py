"""The rules the policy pack adds, called directly: one passing and one failing case each."""

from __future__ import annotations

import pytest

from kvpool.policies import rules


def kv(first: str, store_extra: dict | None = None, first_extra: dict | None = None) -> dict:
    transfer = {"kv_connector": first, **({"kv_connector_extra_config": first_extra} if first_extra else {})}
    return {
        "kv_connector": "MultiConnector",
        "kv_connector_extra_config": {"connectors": [
            transfer,
            {"kv_connector": "AscendStoreConnector", "kv_connector_extra_config": store_extra or {}},
        ]},
    }


def sides(prefill_kv: dict | None, decode_kv: dict | None, **profiles: str) -> dict:
    """A user_config.json's engine sections with these kv_transfer_configs and dispatch_profile per side."""
    return {
        f"motor_engine_{side}_config": {
            "engine_config": {"kv_transfer_config": config} if config else {},
            **({"dispatch_profile": profiles[side]} if side in profiles else {}),
        }
        for side, config in (("prefill", prefill_kv), ("decode", decode_kv))
    }


def test_ucm_placement():
    ucm_second = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [
        {"kv_connector": "MooncakeConnectorV1"}, {"kv_connector": "UCMConnector"}]}}
    assert rules.check_ucm_placement({"prefill": ucm_second, "decode": {"kv_connector": "MooncakeConnectorV1"}}) == []
    ucm_first = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [
        {"kv_connector": "UCMConnector"}, {"kv_connector": "MooncakeConnectorV1"}]}}
    findings = rules.check_ucm_placement({"prefill": ucm_first, "decode": ucm_second})
    assert [str(f) for f in findings] == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0]."
        "kv_connector: UCMConnector must be connectors[1] of a MultiConnector whose connectors[0] is the Mooncake "
        "transfer connector (seed 000).",
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]."
        "kv_connector: UCMConnector on decode: in Motor's P/D scheme decode never loads UCM (seed 000); remove it "
        "and keep only the transfer connector.",
    ]


def ucm_prefill(storage_backends: str, cache_gb: int = 64, posix_gb: int = 400) -> dict:
    return {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [
        {"kv_connector": "MooncakeConnectorV1"},
        {"kv_connector": "UCMConnector", "kv_connector_extra_config": {"ucm_connectors": [{
            "ucm_connector_name": "UcmPipelineStore",
            "ucm_connector_config": {"storage_backends": storage_backends, "cache_buffer_capacity_gb": cache_gb,
                                     "posix_capacity_gb": posix_gb}}]}},
    ]}}


STORAGE = [{"type": "pvc", "mount_path": "/mnt/ucm", "size": "512Gi", "enable": True}]


def test_ucm_storage_holds():
    assert rules.check_ucm_storage(ucm_prefill("/mnt/ucm"), STORAGE, "128Gi") == []


def test_ucm_storage_on_an_unmounted_path():
    [finding] = rules.check_ucm_storage(ucm_prefill("/data/ucm"), STORAGE, "128Gi")
    assert finding.message.startswith("'/data/ucm' is not the mount_path of a motor_deploy_config.storage entry "
                                      "(mounted: /mnt/ucm)")


def test_ucm_cache_buffer_above_shm():
    [finding] = rules.check_ucm_storage(ucm_prefill("/mnt/ucm", cache_gb=64), STORAGE, "64Gi")
    assert str(finding) == (
        "motor_deploy_config.dshm_size: is 64Gi but UCM's cache_buffer_capacity_gb is 64 GiB and lives in /dev/shm; "
        "set dshm_size above it, e.g. 81Gi."
    )


def test_ucm_posix_budget_above_the_volume():
    [finding] = rules.check_ucm_storage(ucm_prefill("/mnt/ucm", posix_gb=1024), STORAGE, "128Gi")
    assert finding.path.endswith("ucm_connectors[0].ucm_connector_config.posix_capacity_gb")


def test_hybrid_attention_connector():
    hybrid = {"prefill": True, "decode": True}
    assert rules.check_hybrid_attention_connector(sides(kv("MooncakeHybridConnector"), kv("MooncakeHybridConnector")), hybrid) == []
    [finding] = rules.check_hybrid_attention_connector(sides(kv("MooncakeHybridConnector"), kv("MooncakeConnectorV1")), hybrid)
    assert str(finding) == (
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0]."
        "kv_connector: is 'MooncakeConnectorV1' but the model uses hybrid attention (motor_engine_prefill_config."
        "hybrid_attention is true); write 'MooncakeHybridConnector' on both sides (seed FAQ 7: decode crashes and "
        "restarts otherwise)."
    )


def test_hybrid_attention_declared_on_one_side_holds_for_both():
    findings = rules.check_hybrid_attention_connector(sides(kv("MooncakeConnectorV1"), kv("MooncakeConnectorV1")),
                                                      {"prefill": False, "decode": True})
    assert [f.path.split(".")[0] for f in findings] == ["motor_engine_prefill_config", "motor_engine_decode_config"]


def test_hybrid_attention_is_read_from_the_hybrid_kv_cache_manager_switch():
    config = sides(kv("MooncakeConnectorV1"), kv("MooncakeHybridConnector"))
    config["motor_engine_decode_config"]["engine_config"]["no_disable_hybrid_kv_cache_manager"] = True
    [finding] = rules.check_hybrid_attention_connector(config, {})
    assert finding.message == (
        "is 'MooncakeConnectorV1' but the model uses hybrid attention (motor_engine_decode_config.engine_config."
        "no_disable_hybrid_kv_cache_manager keeps vLLM's hybrid KV cache manager on); write 'MooncakeHybridConnector' "
        "on both sides (seed FAQ 7: decode crashes and restarts otherwise)."
    )
    assert finding.path.startswith("motor_engine_prefill_config.")


@pytest.mark.parametrize(("model_config", "reason"), [
    ({"compress_ratios": [0, 4, 128]}, "{model}/config.json lists compress_ratios, compressed attention layers"),
    ({"layer_types": ["linear_attention", "full_attention"]},
     "{model}/config.json mixes layer_types full_attention, linear_attention"),
    ({"layer_types": ["full_attention", "full_attention"]}, None),
    ({"num_hidden_layers": 36}, None),
])
def test_hybrid_attention_is_read_from_the_models_config(tmp_path, model_config, reason):
    import json

    (tmp_path / "config.json").write_text(json.dumps(model_config))
    config = sides(kv("MooncakeConnectorV1"), kv("MooncakeConnectorV1"))
    config["motor_engine_decode_config"]["engine_config"]["model"] = str(tmp_path)
    expected = reason and reason.format(model=tmp_path)
    assert rules.hybrid_attention_reason(config, {}) == expected
    assert len(rules.check_hybrid_attention_connector(config, {})) == (2 if reason else 0)


def test_dispatch_connector_whitelist_and_profile():
    assert rules.check_dispatch_connector(sides(kv("NixlConnector"), kv("NixlConnector"))) == []
    assert rules.check_dispatch_connector(sides(kv("P2pNcclConnector"), kv("P2pNcclConnector"),
                                                prefill="handoff", decode="prefill_handoff_decode")) == []
    findings = rules.check_dispatch_connector(sides(kv("P2pNcclConnector"), kv("P2pNcclConnector"), prefill="handoff"))
    assert [f.path for f in findings] == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0].kv_connector"]


def test_a_handoff_prefill_and_a_trigger_decode_are_never_paired():
    [finding] = rules.check_dispatch_connector(sides(kv("P2pNcclConnector"), kv("P2pNcclConnector"),
                                                     prefill="handoff", decode="bootstrap"))
    assert str(finding) == (
        "motor_engine_decode_config.dispatch_profile: decode dispatches as 'trigger' (its dispatch_profile is "
        "'bootstrap') but prefill as 'handoff' (its dispatch_profile is 'handoff'); Motor pairs a prefill with a "
        "decode only when both advertise one plan (motor/common/resources/dispatch.py), so no request would find a "
        "pair: give both sides the same transfer connector, or the same dispatch_profile."
    )
    # A profile overrides the connector's class: a layerwise decode told to hand off pairs with a handoff prefill.
    assert rules.check_dispatch_connector(sides(kv("MooncakeConnectorV1"), kv("MooncakeLayerwiseConnector"),
                                                decode="handoff")) == []


def test_a_dispatch_profile_motor_cannot_parse_is_named():
    [finding] = rules.check_dispatch_connector(sides(kv("NixlConnector"), kv("NixlConnector"), prefill="hand-off"))
    assert str(finding) == (
        "motor_engine_prefill_config.dispatch_profile: is 'hand-off'; Motor's node manager refuses it at start "
        "(motor/common/resources/dispatch.py): write one of handoff, prefill_handoff_decode, trigger, bootstrap, "
        "concurrent_engine_sync."
    )


def test_decodes_transfer_connector_is_prefills():
    assert rules.check_transfer_connectors_match({"prefill": kv("MooncakeLayerwiseConnector"),
                                                  "decode": {"kv_connector": "MooncakeLayerwiseConnector"}}) == []
    [finding] = rules.check_transfer_connectors_match({"prefill": kv("MooncakeLayerwiseConnector"),
                                                       "decode": {"kv_connector": "MooncakeConnectorV1"}})
    assert str(finding) == (
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector: is 'MooncakeConnectorV1' but "
        "prefill's transfer connector (motor_engine_prefill_config.engine_config.kv_transfer_config."
        "kv_connector_extra_config.connectors[0].kv_connector) is 'MooncakeLayerwiseConnector': the two sides of one "
        "P/D transfer run the same connector, or decode never receives prefill's KV cache; write "
        "'MooncakeLayerwiseConnector' on both sides (or change both)."
    )
    assert finding.example == "MooncakeLayerwiseConnector"


def test_both_ends_of_one_transfer_take_the_same_options():
    prefill = kv("MooncakeConnectorV1", first_extra={"use_layerwise": True, "send_type": "PUT"})
    decode = {"kv_connector": "MooncakeConnectorV1", "kv_connector_extra_config": {"send_type": "GET"}}
    assert [str(f) for f in rules.check_transfer_connectors_match({"prefill": prefill, "decode": decode})] == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.use_layerwise: is not "
        "set but prefill's (motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config."
        "connectors[0].kv_connector_extra_config.use_layerwise) is True: both ends of one MooncakeConnectorV1 "
        "transfer need the same use_layerwise; write the same value on both sides.",
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.send_type: is 'GET' "
        "but prefill's (motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config."
        "connectors[0].kv_connector_extra_config.send_type) is 'PUT': both ends of one MooncakeConnectorV1 transfer "
        "need the same send_type; write the same value on both sides.",
    ]


def test_layerwise_pool_backend():
    configs = {"prefill": kv("MooncakeConnectorV1", {"use_layerwise": True}), "decode": None}
    assert rules.check_layerwise_pool_backend(configs, "memcache") == []
    [finding] = rules.check_layerwise_pool_backend(configs, "mooncake")
    assert finding.path.endswith("connectors[1].kv_connector_extra_config.use_layerwise")


POOL = {"prefill": kv("MooncakeConnectorV1"), "decode": kv("MooncakeConnectorV1")}


def test_hash_seed():
    same = rules.engine_envs({"motor_common_env": {"PYTHONHASHSEED": "0"}})
    assert rules.check_hash_seed(same, POOL) == []
    differs = {"prefill": {"PYTHONHASHSEED": "0"}, "decode": {"PYTHONHASHSEED": "1"}}
    assert rules.check_hash_seed(differs, {"prefill": {"kv_connector": "MooncakeConnectorV1"}}) == []  # no pool
    assert [str(f) for f in rules.check_hash_seed(differs, POOL)] == [
        "env.motor_engine_decode_env.PYTHONHASHSEED: is '1' but prefill uses '0'; pool lookups only hit with one seed "
        "on every engine."
    ]
    assert [f.path for f in rules.check_hash_seed({"prefill": {"PYTHONHASHSEED": "random"}}, POOL)] == [
        "env.motor_engine_prefill_env.PYTHONHASHSEED", "env.motor_engine_decode_env.PYTHONHASHSEED"
    ]


def test_instance_counts():
    assert rules.check_instance_counts({"p_instances_num": 16, "d_instances_num": 1}) == []
    assert [str(f) for f in rules.check_instance_counts({"p_instances_num": 17})] == [
        "motor_deploy_config.p_instances_num: is 17; Motor supports 1 to 16 instances per role."
    ]


def test_eviction_headroom_thresholds():
    store = {"backend": "mooncake", "eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1}
    [finding] = rules.check_mooncake_eviction_headroom(store, POOL)
    assert "kept 40-54% of their puts at 0.9/0.1, 79-100% at 0.7/0.2 and all of them at 0.6/0.4" in finding.message
    assert rules.check_mooncake_eviction_headroom(store, POOL, max_high_watermark=0.95, min_eviction_ratio=0.05) == []
    assert rules.check_mooncake_eviction_headroom({**store, "eviction_high_watermark_ratio": 0.6, "eviction_ratio": 0.4}, POOL) == []
    assert rules.check_mooncake_eviction_headroom({**store, "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2}, POOL) != []
    transfer_only = {"prefill": {"kv_connector": "MooncakeConnectorV1"}, "decode": None}
    assert rules.check_mooncake_eviction_headroom(store, transfer_only) == []


@pytest.mark.parametrize(("version", "flagged"), [("v0.17.0rc1", True), ("v0.16.0", True), ("v0.17.0rc2", False), ("0.17.0", False)])
def test_layerwise_pool_patch_by_version(version, flagged):
    layerwise = {"prefill": kv("MooncakeLayerwiseConnector"), "decode": kv("MooncakeLayerwiseConnector")}
    assert bool(rules.check_layerwise_pool_patch(version, layerwise)) is flagged
    assert rules.check_layerwise_pool_patch(version, {"prefill": kv("MooncakeConnectorV1"), "decode": None}) == []


def test_layerwise_pool_patch_without_a_version_asks_for_it():
    """Issue 44 item 7: the preview cannot tell whether seed 001's patch is needed, and says so."""
    layerwise = {"prefill": kv("MooncakeLayerwiseConnector"), "decode": kv("MooncakeLayerwiseConnector")}
    assert [str(f) for f in rules.check_layerwise_pool_patch(None, layerwise)] == [
        "vllm_ascend_version: is not set, and prefill and decode transfer layer by layer with a KV pool: vllm-ascend "
        "before v0.17.0rc2 needs Motor's vllm_multi_connector.patch for that (seed 001: otherwise inference is "
        "wrong); set vllm_ascend_version to the image's vllm-ascend (e.g. v0.17.0rc2) so the preview can tell."
    ]
    assert rules.check_layerwise_pool_patch(None, {"prefill": kv("MooncakeConnectorV1"), "decode": None}) == []
    transfer_only = {"prefill": {"kv_connector": "MooncakeLayerwiseConnector"}, "decode": None}
    assert rules.check_layerwise_pool_patch(None, transfer_only) == []


def test_layerwise_pool_patch_refuses_an_unreadable_version():
    assert [str(f) for f in rules.check_layerwise_pool_patch("latest", {})] == [
        "vllm_ascend_version: 'latest' is not a version such as v0.17.0rc2."
    ]


def test_not_ucm_store_backend():
    assert rules.check_not_ucm_store_backend({"backend": "mooncake"}, {"prefill": kv("MooncakeConnectorV1")}) == []
    findings = rules.check_not_ucm_store_backend({"backend": "ucm"}, {"prefill": kv("MooncakeConnectorV1", {"backend": "ucm"})})
    assert [f.path for f in findings] == [
        "kv_cache_store_config.backend",
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]"
        ".kv_connector_extra_config.backend",
    ]


def test_fabric_segment_alignment():
    fabric = {"prefill": {"ASCEND_ENABLE_USE_FABRIC_MEM": "1"}}
    assert rules.check_fabric_segment_alignment({"backend": "mooncake", "global_segment_size": "2GB"}, fabric) == []
    assert rules.check_fabric_segment_alignment({"backend": "mooncake", "global_segment_size": "1536MB"}, {}) == []
    [finding] = rules.check_fabric_segment_alignment({"backend": "mooncake", "global_segment_size": "1536MB"}, fabric)
    assert finding.message.startswith("is '1536MB', but ASCEND_ENABLE_USE_FABRIC_MEM=1")


def test_plaintext_secrets():
    assert rules.check_plaintext_secrets({"HCCL_BUFFSIZE": "200", "TOKEN_LIMIT_FILE": ""}, "env") == []
    assert [f.path for f in rules.check_plaintext_secrets({"HF_TOKEN": "hf_abc", "DB_PASSWORD": "x"}, "env")] == [
        "env.HF_TOKEN", "env.DB_PASSWORD"
    ]


@pytest.mark.parametrize("name", ["DB_PASS", "OPENAI_KEY", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "MY_PWD"])
def test_secret_looking_env_names(name):
    assert [f.path for f in rules.check_plaintext_secrets({name: "x"}, "env")] == [f"env.{name}"]


@pytest.mark.parametrize("name", ["TOKEN_LIMIT_FILE", "PASSWD_PATH", "MAX_TOKENS", "FIRST_TOKEN_TIMEOUT", "PASSAGE"])
def test_names_about_secrets_are_not_secrets(name):
    assert rules.check_plaintext_secrets({name: "x"}, "env") == []


def test_plaintext_config_secrets_walk_every_section():
    config = {"engine_config": {"hf_token": "hf_x", "max_tokens": "8"}, "tls_config": {"password": "p", "passwd_file": "/f",
              "label_key": "accelerator-type"}, "list": [{"apiKey": "k"}]}
    assert [f.path for f in rules.check_plaintext_config_secrets(config)] == [
        "engine_config.hf_token", "tls_config.password", "list[0].apiKey"
    ]


def test_system_namespaces():
    assert [str(f) for f in rules.check_system_namespace("kube-system", "motor_deploy_config.job_id")] == [
        "motor_deploy_config.job_id: is 'kube-system', a namespace Kubernetes itself uses; give the service a namespace "
        "of its own (job_id defaults to the stack name)."
    ]
    assert rules.check_system_namespace("dev", "x") == []


def test_read_only_configmap_role():
    read = {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list", "watch"]}
    assert rules.is_read_only_configmap_role([read])
    assert not rules.is_read_only_configmap_role([{**read, "verbs": ["list", "update"]}])
    assert not rules.is_read_only_configmap_role([{**read, "resources": ["secrets"]}])
    assert not rules.is_read_only_configmap_role([])


# --- the words of the messages the pack tests no longer assert (tests/test_policies_in_process.py asserts the
# policy, its level and the resource; each text is asserted here once) ---------------------------------------


def test_referenced_backend():
    assert rules.check_referenced_backend("memcache", "org/motor-kvpool/a", "memcache") == []
    assert [str(f) for f in rules.check_referenced_backend("memcache", "org/motor-kvpool/a", "mooncake")] == [
        "kv_cache_store_config.backend: is 'memcache' but the store of org/motor-kvpool/a (target_stack) runs "
        "'mooncake'; write backend: mooncake and the same in every AscendStoreConnector."
    ]


def test_ucm_as_store_backend_message():
    [finding] = rules.check_not_ucm_store_backend({"backend": "ucm"}, {})
    assert str(finding) == (
        "kv_cache_store_config.backend: is 'ucm', but UCM is not a KV store backend: configure UCMConnector as "
        "connectors[1] of prefill (its store_pipeline and storage_backends say where prefixes go). Motor's UCM sample "
        "keeps kv_cache_store_config.backend at mooncake only so that its deployer creates a Mooncake kv_store/master; "
        "it does not make UCM a Mooncake backend (seed FAQ 6)."
    )


def test_dispatch_connector_message():
    [finding] = rules.check_dispatch_connector(sides(kv("P2pNcclConnector"), kv("NixlConnector")))
    assert str(finding) == (
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0]."
        "kv_connector: 'P2pNcclConnector' is not in Motor's P/D dispatch whitelist (MooncakeConnectorV1, "
        "MooncakeHybridConnector, MooncakeLayerwiseConnector, NixlConnector), so Motor refuses to dispatch; use one "
        "of them, or set motor_engine_prefill_config.dispatch_profile and motor_engine_decode_config.dispatch_profile "
        "(handoff or trigger) alike."
    )


def test_layerwise_pool_backend_message():
    [finding] = rules.check_layerwise_pool_backend(
        {"prefill": kv("MooncakeConnectorV1", {"use_layerwise": True}), "decode": None}, "mooncake")
    assert finding.message == (
        "the layerwise KV pool works only with backend 'memcache' (vllm-ascend layerwise_kv_pool), not 'mooncake'; "
        "remove use_layerwise here or switch the store to memcache."
    )


def test_layerwise_pool_patch_message():
    layerwise = {"prefill": kv("MooncakeLayerwiseConnector"), "decode": None}
    assert [str(f) for f in rules.check_layerwise_pool_patch("v0.16.0", layerwise)] == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config: layerwise transfer with a KV pool on "
        "vllm-ascend v0.16.0 (before v0.17.0rc2) needs Motor's vllm_multi_connector.patch (seed 001); apply it in "
        "the image or upgrade."
    ]


def test_plaintext_secret_message():
    assert [str(f) for f in rules.check_plaintext_secrets({"HF_TOKEN": "hf_abc123"}, "containers[vllm].env")] == [
        "containers[vllm].env.HF_TOKEN: looks like a secret but is plain text; keep it as a Pulumi secret delivered "
        "through a Kubernetes Secret: `pulumi config set --secret --path secret_env.HF_TOKEN VALUE`."
    ]


def test_privileged_pod_messages():
    spec = {"hostPID": True, "containers": [
        {"name": "vllm", "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]},
                                             "allowPrivilegeEscalation": True}}]}
    assert [str(f) for f in rules.check_privileged_pod(spec, "spec")] == [
        "spec.hostPID: is true: the pod sees the node's processes; remove it.",
        "spec.containers[vllm].securityContext.privileged: is true: the container gets every device and capability "
        "of the node; remove it.",
        "spec.containers[vllm].securityContext.capabilities.add: adds SYS_ADMIN, which amount to root on the node; "
        "remove them.",
        "spec.containers[vllm].securityContext.allowPrivilegeEscalation: is true: a setuid binary can regain the "
        "capabilities the container dropped; set false.",
    ]


def test_duplicate_names():
    deployment = ("kubernetes:apps/v1:Deployment", "dev", "vllm-p0")
    service = ("kubernetes:core/v1:Service", "dev", "vllm-p0")
    assert rules.check_duplicate_names([deployment, service]) == []
    assert rules.check_duplicate_names([deployment, service, deployment]) == [
        (2, "kubernetes:apps/v1:Deployment dev/vllm-p0 is declared twice; the second would overwrite the first in the "
            "cluster. Give one of them another name.")
    ]


def test_store_protection():
    production = r"(prod|production)([-_].*)?|.*[-_]prod"
    assert rules.store_protection_problem("kv-store", "dev", production, protected=False) is None
    assert rules.store_protection_problem("kv-store", "prod-eu", production, protected=True) is None
    assert rules.store_protection_problem("kv-store", "prod-eu", production, protected=False) == (
        "kv-store belongs to the KV store of production stack 'prod-eu' but is not protected: a `pulumi destroy` or a "
        "rename would delete the pool every service reads. Set kv_cache_store_config.protect: true."
    )


def test_a_standalone_store_needs_a_motor_whose_node_manager_starts_it():
    store = {"backend": "mooncake", "store_mode": "standalone"}
    assert rules.check_standalone_store_motor(store, frozenset({"memcache", "mooncake"}), "Motor at /m") == []
    assert rules.check_standalone_store_motor(store, None, "Motor 8919e55") == []  # not known: nothing to say
    assert rules.check_standalone_store_motor({**store, "store_mode": "embedded"}, frozenset(), "Motor at /m") == []
    [finding] = rules.check_standalone_store_motor(store, frozenset({"memcache"}), "Motor at /m")
    assert str(finding) == (
        "kv_cache_store_config.store_mode: is 'standalone', but the node manager of Motor at /m starts no Mooncake "
        "store process (its motor/node_manager/core/services/registry.py registers store services for: memcache), so "
        "the engines, whose mooncake.json contributes 0 bytes in this mode, would leave the pool empty; deploy a Motor "
        "whose node manager has the Mooncake store service (motor/node_manager/core/services/mooncake/lifecycle.py) "
        "and point motor_deployer_dir at its examples/deployer, or write store_mode: embedded."
    )


def test_a_mooncake_transport_vllm_ascend_refuses_is_advised_against():
    config = {"kv_cache_store_config": {"backend": "mooncake", "protocol": "tcp"}, **{
        f"motor_engine_{side}_config": {"engine_config": {"kv_transfer_config": {
            "kv_connector": "AscendStoreConnector", "kv_connector_extra_config": {"backend": "mooncake"}}}}
        for side in ("prefill", "decode")}}
    [finding] = rules.check_mooncake_protocol(config)
    assert str(finding) == (
        "kv_cache_store_config.protocol: is 'tcp', but vllm-ascend's MooncakeBackend accepts only 'ascend' "
        "(NotImplementedError otherwise), so the prefill and decode engines, which load the Mooncake store connector, "
        "will not start on an Ascend node; write protocol: ascend (the default) unless the engine image is not "
        "vllm-ascend."
    )
    config["kv_cache_store_config"]["protocol"] = "ascend"
    assert rules.check_mooncake_protocol(config) == []
