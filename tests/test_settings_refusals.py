"""Each refusal of the settings layer, with the exact line the user reads."""

from __future__ import annotations

import pytest

from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config
from tests.service_configs import memcache_pool, mooncake_pool, plain_pd, problems_of


def test_unknown_top_level_key_suggests_the_known_one():
    service = plain_pd()
    service["kv_cache_stor_config"] = {"backend": "memcache"}
    assert problems_of(service) == [
        "motor-kvpool:kv_cache_stor_config: unknown configuration key; did you mean motor-kvpool:kv_cache_store_config?"
    ]


def test_unknown_nested_key_suggests_the_known_one():
    service = plain_pd()
    service["motor_deploy_config"]["p_instance_num"] = 2
    assert problems_of(service) == [
        "motor_deploy_config.p_instance_num: unknown key; did you mean 'p_instances_num'?"
    ]


def test_unknown_key_in_a_list_entry_names_its_index():
    service = plain_pd()
    service["motor_deploy_config"]["storage"] = [{"type": "nfs", "server": "nfs1", "path": "/x", "mountpath": "/m"}]
    assert problems_of(service) == [
        "motor_deploy_config.storage[0].mountpath: unknown key; did you mean 'mount_path'?"
    ]


def test_unknown_key_in_a_connector():
    service = memcache_pool()
    connectors = service["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"]
    connectors["kv_connector_extra_config"]["connectors"][0]["kv_rol"] = "kv_consumer"
    assert problems_of(service) == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0].kv_rol: "
        "unknown key; did you mean 'kv_role'?"
    ]


def test_key_of_another_backend_says_which_backend_it_belongs_to():
    service = memcache_pool()
    service["kv_cache_store_config"]["eviction_ratio"] = 0.2
    assert problems_of(service) == [
        "kv_cache_store_config.eviction_ratio: unknown key; it is an option of backend mooncake: set backend "
        "accordingly or remove it"
    ]


def test_vllm_options_motor_kvpool_does_not_model_pass_through():
    service = plain_pd()
    service["motor_engine_prefill_config"]["engine_config"]["no-enable-prefix-caching"] = True
    settings = load_from_pulumi_config(service, "svc")
    assert settings.user_config()["motor_engine_prefill_config"]["engine_config"]["no-enable-prefix-caching"] is True


def test_target_job_id_is_refused_with_the_text_to_write():
    service = memcache_pool()
    service["kv_cache_store_config"]["target_job_id"] = "service-a"
    assert problems_of(service) == [
        "kv_cache_store_config.target_job_id: target_job_id is replaced by target_stack, which fails loudly instead "
        "of silently creating a new store; write `target_stack: organization/motor-kvpool/service-a` (the stack of "
        "the service that owns the store), or run `python -m kvpool import` to convert the file"
    ]


def test_both_store_names_at_once_are_refused():
    service = memcache_pool()
    service["kv_cache_pool_config"] = {"backend": "memcache"}
    assert problems_of(service) == [
        "kv_cache_pool_config and kv_cache_store_config are both set: kv_cache_pool_config is the older name of "
        "kv_cache_store_config; keep only kv_cache_store_config"
    ]


def test_older_store_name_alone_is_accepted():
    service = memcache_pool()
    service["kv_cache_pool_config"] = service.pop("kv_cache_store_config")
    assert load_from_pulumi_config(service, "svc").kv_cache_store_config.backend == "memcache"


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ("single_container",
         "motor_deploy_config.deploy_mode: single_container runs every role in one container (a single-node "
         "trial); motor-kvpool deploys each role as its own workload: write multi_deployment or infer_service_set"),
        ("kubernetes",
         "motor_deploy_config.deploy_mode: 'kubernetes' is not a deploy mode; write multi_deployment or "
         "infer_service_set"),
    ],
)
def test_unsupported_deploy_modes(mode, expected):
    service = plain_pd()
    service["motor_deploy_config"]["deploy_mode"] = mode
    assert problems_of(service) == [expected]


@pytest.mark.parametrize("count", [0, 17])
def test_instance_counts_outside_motor_limits(count):
    service = plain_pd()
    service["motor_deploy_config"]["d_instances_num"] = count
    assert problems_of(service) == [
        f"motor_deploy_config.d_instances_num: is {count}; Motor supports 1 to 16 instances per role."
    ]


def test_hardware_type_outside_the_motor_list():
    service = plain_pd()
    service["motor_deploy_config"]["hardware_type"] = "910B"
    [problem] = problems_of(service)
    assert problem.startswith("motor_deploy_config.hardware_type: '910B' is not allowed; write one of '800I_A2', ")


def test_missing_required_fields_are_all_reported():
    service = plain_pd()
    del service["motor_deploy_config"]["image_name"]
    del service["motor_engine_decode_config"]
    assert problems_of(service) == [
        "motor_deploy_config.image_name: required; add it",
        "motor_engine_decode_config: required; add it",
    ]


def test_placeholder_image_is_refused():
    service = plain_pd()
    service["motor_deploy_config"]["image_name"] = "<请按实际情况填写镜像名称>"
    assert problems_of(service) == [
        "motor_deploy_config.image_name: '<请按实际情况填写镜像名称>' is not an image reference; write the Motor "
        "image, e.g. registry.local/mindie-motor-vllm:tag"
    ]


def test_stack_name_that_is_not_a_namespace_needs_job_id():
    assert problems_of(plain_pd(), stack="Prod.EU") == [
        "Value error, motor_deploy_config.job_id defaults to the stack name 'Prod.EU', which is not a valid "
        "namespace name; set motor_deploy_config.job_id".removeprefix("Value error, ")
    ]


def test_size_without_unit_is_refused():
    service = plain_pd()
    service["motor_deploy_config"]["dshm_size"] = "128"
    assert problems_of(service) == ["motor_deploy_config.dshm_size: '128' needs a unit, e.g. 4Gi or 200Gi"]


def test_pvc_needs_exactly_one_source():
    service = plain_pd()
    service["motor_deploy_config"]["storage"] = [{"type": "pvc", "storage_class_name": "sc", "claim_name": "c"}]
    assert problems_of(service) == [
        "motor_deploy_config.storage[0]: set exactly one of storage_class_name (create a new PVC) or claim_name "
        "(use an existing PVC)"
    ]


def test_memcache_ports_must_differ():
    service = memcache_pool()
    service["kv_cache_store_config"]["metrics_port"] = 50089
    assert problems_of(service) == [
        "kv_cache_store_config: config_store_port and metrics_port are the same port 50089; the MetaService binds "
        "each separately (seed FAQ 4), give each its own"
    ]


def test_hardware_without_a_seed_default_needs_local_service_mode():
    service = memcache_pool("950-SuperPod-Atlas-8")
    assert problems_of(service) == [
        "kv_cache_store_config.local_service_mode has no default for hardware_type '950-SuperPod-Atlas-8'; set "
        "inprocess or standalone"
    ]


def test_multiconnector_needs_two_connectors():
    service = memcache_pool()
    kv = service["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"]
    kv["kv_connector_extra_config"]["connectors"] = kv["kv_connector_extra_config"]["connectors"][:1]
    assert problems_of(service) == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config: MultiConnector needs "
        "kv_connector_extra_config.connectors with at least two entries: the P/D transfer connector first, the "
        "store connector second"
    ]


def test_non_vllm_engine_is_refused():
    service = plain_pd()
    service["motor_engine_decode_config"]["engine_type"] = "sglang"
    assert problems_of(service) == [
        "motor_engine_decode_config.engine_type: 'sglang' engines are not deployed by motor-kvpool (it targets "
        "vllm-ascend's KV pool); write vllm"
    ]


def test_every_problem_is_reported_at_once():
    service = mooncake_pool()
    service["motor_deploy_config"]["p_instances_num"] = 20
    service["kv_cache_store_config"]["protocl"] = "tcp"
    service["env"]["motor_engine_prefill_env"]["1BAD"] = "x"
    assert problems_of(service) == [
        "motor_deploy_config.p_instances_num: is 20; Motor supports 1 to 16 instances per role.",
        "kv_cache_store_config.protocl: unknown key; did you mean 'protocol'?",
        "env.motor_engine_prefill_env.1BAD: '1BAD' is not an environment variable name (letters, digits, _; not "
        "starting with a digit)",
    ]


def test_error_text_names_the_source_and_count():
    service = plain_pd()
    service["motor_deploy_config"]["p_pod_npu_num"] = 32
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, "svc")
    assert str(caught.value) == (
        "stack 'svc': 1 problem\n  - motor_deploy_config.p_pod_npu_num: 32 is above 16, the most this field takes; "
        "write 16 or less"
    )


def test_kv_parallel_size_is_at_least_one_on_every_connector():
    """Seed 000 FAQ 2 tunes kv_parallel_size upward; vLLM counts parallel transfers from 1."""
    service = mooncake_pool()
    service["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"]["kv_parallel_size"] = -3
    decode = service["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"]
    decode["kv_connector_extra_config"]["connectors"][0]["kv_parallel_size"] = 0
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, "svc")
    assert caught.value.problems == [
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_parallel_size: -3 is below 1, the least this "
        "field takes; write 1 or more",
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0]."
        "kv_parallel_size: 0 is below 1, the least this field takes; write 1 or more",
    ]


def test_target_stack_that_is_this_stack_is_refused():
    service = memcache_pool()
    service["kv_cache_store_config"]["target_stack"] = "organization/motor-kvpool/svc"
    assert problems_of(service) == [
        "kv_cache_store_config.target_stack 'organization/motor-kvpool/svc' is this stack itself; remove "
        "target_stack to own the store here, or name the stack that owns it"
    ]


def test_a_host_log_dir_that_is_no_safe_absolute_node_folder_is_refused():
    service = plain_pd()
    service["motor_controller_config"] = {"logging_config": {"host_log_dir": "/data/../logs"}}
    service["motor_coordinator_config"] = {"logging_config": {"log_level": "INFO", "host_log_dir": "motor-logs"}}
    service["motor_nodemanger_config"] = {"logging_config": {"host_log_dir": "/var/lib/kubelet/logs"}}
    assert problems_of(service) == [
        "motor_controller_config.logging_config.host_log_dir: '/data/../logs' contains '..'; Kubernetes refuses it in "
        "a hostPath: write the path without it",
        "motor_coordinator_config.logging_config.host_log_dir: is 'motor-logs'; give the absolute path of a folder on "
        "the node, as deploy.py mounts it (default /root/ascend/log).",
        "motor_nodemanger_config.logging_config.host_log_dir: '/var/lib/kubelet/logs' lies outside every folder a "
        "pod may mount from the node; keep it in a folder below /mnt, /data (or /data01, /data02 ...) or /srv and "
        "declare that folder once in motor_deploy_config.host_path_roots.logs, or leave host_log_dir out to log below "
        "Motor's /root/ascend/log.",
    ]
    service["motor_coordinator_config"]["logging_config"]["host_log_dir"] = 7
    assert problems_of(service)[1] == (
        "motor_coordinator_config.logging_config.host_log_dir: is 7; give the absolute path of a folder on the node, "
        "as deploy.py mounts it (default /root/ascend/log)."
    )


def test_target_stack_must_be_a_full_stack_reference():
    service = memcache_pool()
    service["kv_cache_store_config"]["target_stack"] = "motor-kvpool/service-a"
    assert problems_of(service) == [
        "kv_cache_store_config.target_stack: 'motor-kvpool/service-a' is not a stack reference; write "
        "<organization>/<project>/<stack>"
    ]


def test_a_short_target_stack_is_answered_with_the_reference_to_write():
    service = memcache_pool()
    service["kv_cache_store_config"]["target_stack"] = "service-a"
    assert problems_of(service) == [
        "kv_cache_store_config.target_stack: 'service-a' is a stack's short name; a stack reference names its "
        "organization and project: write organization/motor-kvpool/service-a for this project's stack service-a on "
        "the local backend (or <organization>/motor-kvpool/service-a on Pulumi Cloud)"
    ]


def test_plaintext_secret_in_env_json_is_refused():
    service = plain_pd()
    service["env"] = {"motor_engine_prefill_env": {"HF_TOKEN": "hf_abc123"}}
    assert problems_of(service) == [
        "env.motor_engine_prefill_env.HF_TOKEN: looks like a secret but is plain text; keep it as a Pulumi secret "
        "delivered through a Kubernetes Secret: `pulumi config set --secret --path secret_env.HF_TOKEN VALUE`."
    ]


def test_a_reference_only_the_kubelet_resolves_is_refused_with_what_to_write():
    """Issue 45 §1: the kubelet fills in the control plane's $(POD_NAMESPACE) and the API server Service's variables
    where Motor's set_*_env functions re-export the text (tests/test_motor_env_shell.py shows both); an engine's
    $(POD_NAMESPACE) is text in both, and a variable env.json sets before the reference is one the functions follow."""
    service = plain_pd()
    service["env"] = {
        "motor_common_env": {"NS": "ns=$(POD_NAMESPACE)", "KUBERNETES_PORT_OWN": "1"},
        "motor_controller_env": {"API": "https://$(KUBERNETES_SERVICE_HOST):$(KUBERNETES_SERVICE_PORT)"},
        "motor_engine_prefill_env": {"NS": "$(POD_NAMESPACE)", "OWN": "$(KUBERNETES_PORT_OWN)"},
        "motor_kv_cache_store_env": {"API": "$(KUBERNETES_SERVICE_HOST)"},  # no Motor function: container env only
    }
    text = ("while Motor's set_*_env functions re-export the text `$({0})`, so Motor's processes would see that text; "
            "{1}.")
    assert problems_of(service) == [
        "env.motor_common_env.NS: references $(POD_NAMESPACE), the pod's namespace, which Kubernetes fills in in the "
        "controller's and the coordinator's containers, " + text.format("POD_NAMESPACE", "write the namespace itself: svc"),
        "env.motor_controller_env.API: references $(KUBERNETES_SERVICE_HOST), a variable of the API server's Service, "
        "which the kubelet defines in every container, " + text.format(
            "KUBERNETES_SERVICE_HOST", "write the API server's address itself (kubernetes.default.svc)"),
    ]


def test_a_bad_mooncake_size_is_one_problem_with_its_path():
    service = mooncake_pool()
    service["kv_cache_store_config"].update(global_segment_size="1 gig", local_buffer_size=-5)
    assert problems_of(service) == [
        "kv_cache_store_config.global_segment_size: '1 gig' is not a size such as 1GB, 512MB or a number of bytes",
        "kv_cache_store_config.local_buffer_size: -5 is not a size such as 1GB, 512MB or a number of bytes",
    ]


def test_store_image_and_resources_name_the_form_to_write():
    service = memcache_pool()
    service["kv_cache_store_config"].update(image="Bad Image", resources={"requests": {"cpu": "lots", "memory": "2"}})
    assert problems_of(service) == [
        "kv_cache_store_config.image: 'Bad Image' is not an image reference; write the Motor image, e.g. "
        "registry.local/mindie-motor-vllm:tag",
        "kv_cache_store_config.resources.requests.cpu: 'lots' is not a CPU amount; write e.g. 4 or 500m",
        "kv_cache_store_config.resources.requests.memory: '2' needs a unit, e.g. 4Gi or 200Gi",
    ]


# Issue 33 class 3: a trailing newline is refused where the value without it is accepted (checks are full matches:
# `$` in re.match accepts a final "\n"), each naming the dotted field.
@pytest.mark.parametrize(("change", "expected"), [
    (lambda s: s["motor_deploy_config"].__setitem__("job_id", "dev\n"),
     "motor_deploy_config.job_id: 'dev\\n' is not a valid namespace name: use at most 63 lower-case letters, digits "
     "and '-', starting and ending with a letter or digit"),
    (lambda s: s["motor_deploy_config"].__setitem__("prefill_node_selector", {"disk": "ssd\n"}),
     "motor_deploy_config.prefill_node_selector.disk: 'ssd\\n' is not a label value: at most 63 letters, digits, "
     "'-', '_' or '.', starting and ending with a letter or digit (or empty)"),
    (lambda s: s["motor_deploy_config"].__setitem__("decode_node_selector", {"pool\n": "kv"}),
     "motor_deploy_config.decode_node_selector['pool\\n']: 'pool\\n' is not a label or annotation key: the name "
     "(after any prefix/) must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
    (lambda s: s["kv_cache_store_config"].__setitem__("additional_labels", {"tier": "kv\n"}),
     "kv_cache_store_config.additional_labels.tier: 'kv\\n' is not a label value: at most 63 letters, digits, '-', "
     "'_' or '.', starting and ending with a letter or digit (or empty)"),
    (lambda s: s["env"]["motor_engine_prefill_env"].__setitem__("ASCEND_CONNECT_TIMEOUT", "10000\n"),
     "env.motor_engine_prefill_env.ASCEND_CONNECT_TIMEOUT: '10000\\n' is not a whole number: Mooncake's "
     "ascend_direct transport reads it as milliseconds and fails to start; write digits only, e.g. \"10000\"."),
    (lambda s: s.__setitem__("rollout", {"prefill": {"max_unavailable_instances": "50%\n"}}),
     "rollout.prefill.max_unavailable_instances: '50%\\n' is not allowed: an instance is updated by stopping it "
     "(strategy Recreate: its NPUs are exclusive), so at least 1 is unavailable; write a whole number from 1, or a "
     "percentage from 1% to 100% such as \"50%\""),
], ids=["job_id", "node-selector-value", "node-selector-key", "store-label", "numeric-env", "rollout-percent"])
def test_a_trailing_newline_is_refused_naming_the_field(change, expected):
    service = mooncake_pool()
    change(service)
    assert problems_of(service) == [expected]


# --- host paths come from an allow-list (issue 33 class 2) ---------------------------------------------------------

NODE_FOLDERS = ["/etc/cron.d", "/root/.kube", "/usr/local/bin", "/etc/systemd/system", "/var/lib/rancher",
                "/opt/cni/bin", "/home/alice/.ssh"]


def _outside(field: str, path: str, kind: str, alternative: str = "") -> str:
    return (f"{field}: {path!r} lies outside every folder a pod may mount from the node; keep it in a folder below "
            f"/mnt, /data (or /data01, /data02 ...) or /srv and declare that folder once in "
            f"motor_deploy_config.host_path_roots.{kind}{alternative}.")


@pytest.mark.parametrize("path", NODE_FOLDERS)
def test_a_storage_hostpath_on_a_node_folder_is_refused(path):
    service = plain_pd()
    service["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": path, "mount_path": "/mnt/ucm"}]
    assert problems_of(service) == [_outside("motor_deploy_config.storage[0].path", path, "storage")]


@pytest.mark.parametrize("section", ["motor_controller_config", "motor_coordinator_config", "motor_nodemanger_config"])
@pytest.mark.parametrize("path", NODE_FOLDERS)
def test_a_host_log_dir_on_a_node_folder_is_refused_for_each_role(section, path):
    service = plain_pd()
    service[section] = {"logging_config": {"host_log_dir": path}}
    assert problems_of(service) == [_outside(f"{section}.logging_config.host_log_dir", path, "logs",
                                             ", or leave host_log_dir out to log below Motor's /root/ascend/log")]


def test_declaring_a_node_folder_as_a_root_is_refused_and_allows_nothing():
    service = plain_pd()
    service["motor_deploy_config"]["host_path_roots"] = {"storage": ["/etc/cron.d"], "logs": ["/root/.kube"]}
    service["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": "/etc/cron.d", "mount_path": "/mnt/u"}]
    service["motor_deploy_config"]["weight_mount_path"] = "/usr/local/bin"
    refused_root = ("is no folder below /mnt, /data (or /data01, /data02 ...) or /srv, where a node keeps a service's "
                    "data; keep the data in a folder of its own there (e.g. /mnt/<service>).")
    assert problems_of(service) == [
        f"motor_deploy_config.host_path_roots.logs[0]: '/root/.kube' {refused_root}",
        f"motor_deploy_config.host_path_roots.storage[0]: '/etc/cron.d' {refused_root}",
        f"motor_deploy_config.weight_mount_path: '/usr/local/bin' {refused_root}",
        _outside("motor_deploy_config.storage[0].path", "/etc/cron.d", "storage"),
    ]


def test_host_paths_below_declared_roots_pass():
    service = plain_pd()
    service["motor_deploy_config"]["host_path_roots"] = {"storage": ["/data/ucm"], "logs": ["/mnt/logs/"]}
    service["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": "/data/ucm/p", "mount_path": "/mnt/u"}]
    service["motor_deploy_config"]["weight_mount_path"] = "/data01/models/"
    service["motor_controller_config"] = {"logging_config": {"host_log_dir": "/mnt/logs/controller"}}
    service["motor_coordinator_config"] = {"logging_config": {"host_log_dir": "/root/ascend/log/coordinator"}}
    settings = load_from_pulumi_config(service, "svc")
    assert settings.user_config()["motor_deploy_config"]["host_path_roots"] == {
        "storage": ["/data/ucm"], "logs": ["/mnt/logs/"]
    }


def test_an_unknown_key_of_host_path_roots_is_refused():
    service = plain_pd()
    service["motor_deploy_config"]["host_path_roots"] = {"weights": ["/mnt/weight"]}
    assert problems_of(service)[0].startswith("motor_deploy_config.host_path_roots.weights")


def test_max_num_batched_tokens_is_at_least_one():
    """Issue 45 §7: -8192 was taken, and the sizing advisory then advised a negative pool."""
    service = mooncake_pool()
    service["motor_engine_prefill_config"]["engine_config"]["max_num_batched_tokens"] = -8192
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, "svc")
    assert caught.value.problems == [
        "motor_engine_prefill_config.engine_config.max_num_batched_tokens: -8192 is out of range: vLLM 0.17.0's "
        "--max-num-batched-tokens must be 1 or more; write a value in that range"
    ]


def test_a_layerwise_prefill_with_a_whole_request_decode_is_refused():
    """Issue 44 item 2: the two ends of one transfer, prefill's connectors[0] and decode's connector, are one class."""
    service = mooncake_pool()
    prefill = service["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"]
    prefill["kv_connector_extra_config"]["connectors"][0]["kv_connector"] = "MooncakeLayerwiseConnector"
    assert problems_of(service) == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0]."
        "kv_connector: is 'MooncakeConnectorV1' but prefill's transfer connector (motor_engine_prefill_config."
        "engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0].kv_connector) is "
        "'MooncakeLayerwiseConnector': the two sides of one P/D transfer run the same connector, or decode never "
        "receives prefill's KV cache; write 'MooncakeLayerwiseConnector' on both sides (or change both)."
    ]


def test_dispatch_profile_inside_kv_transfer_config_is_moved_where_motor_reads_it():
    service = plain_pd()
    service["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"]["dispatch_profile"] = "handoff"
    assert problems_of(service) == [
        "motor_engine_decode_config.engine_config.kv_transfer_config.dispatch_profile: Motor never reads it inside "
        "kv_transfer_config, which vLLM receives whole; it reads motor_engine_<side>_config.dispatch_profile "
        "(motor/config/node_manager.py): move it there"
    ]
    del service["motor_engine_decode_config"]["engine_config"]["kv_transfer_config"]["dispatch_profile"]
    for side in ("prefill", "decode"):
        service[f"motor_engine_{side}_config"]["dispatch_profile"] = "handoff"
    settings = load_from_pulumi_config(service, "svc")
    assert settings.user_config()["motor_engine_decode_config"]["dispatch_profile"] == "handoff"


def test_an_engine_option_a_dotted_path_cannot_show_is_named_quoted():
    service = plain_pd()
    service["motor_engine_decode_config"]["engine_config"][":"] = "x"
    assert problems_of(service) == [
        "motor_engine_decode_config.engine_config[':']: unknown key; vLLM 0.17.0 serve has no option --:"]


def test_a_deepseek_v4_stack_keeping_the_hybrid_kv_cache_manager_on_needs_the_hybrid_connector():
    """Issue 44 item 3: Motor's DeepSeek-V4 examples set no_disable_hybrid_kv_cache_manager; with MooncakeConnectorV1
    on both sides (no hybrid_attention declared) both are refused."""
    service = plain_pd()
    service["motor_engine_decode_config"]["engine_config"]["no_disable_hybrid_kv_cache_manager"] = True
    reason = ("the model uses hybrid attention (motor_engine_decode_config.engine_config.no_disable_hybrid_kv_cache_manager "
              "keeps vLLM's hybrid KV cache manager on); write 'MooncakeHybridConnector' on both sides (seed FAQ 7: decode "
              "crashes and restarts otherwise).")
    assert problems_of(service) == [
        f"motor_engine_{side}_config.engine_config.kv_transfer_config.kv_connector: is 'MooncakeConnectorV1' but {reason}"
        for side in ("prefill", "decode")
    ]
