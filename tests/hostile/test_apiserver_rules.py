"""Issue 13 §2: what a real API server refuses is refused offline, at the settings field that causes it.

Two layers: a corpus of one-mistake stacks (an example stack with one value changed), each refused by the settings
with the exact field-named line; and the manifest checks of kvpool/cli/apiserver/checks.py (the safety net behind the
settings) on hand-written manifests, one per rule, each with the reason the API server gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kvpool.cli.apiserver import checks
from kvpool.cli.apiserver.workloads import parse_quantity
from kvpool.cli.views.manifests import (
    KubernetesObject,
    ManifestValidationError,
    kubernetes_objects,
    validate_objects,
)
from kvpool.errors import SettingsError
from kvpool.settings.from_stack import settings_from_config
from tests.hostile.apiserver_manifests import MANIFESTS
from tests.program_runs import PROJECT, stack_values

REPOSITORY = Path(__file__).resolve().parents[2]
K8S = "1.30"
CONNECTOR0 = ("motor_engine_prefill_config", "engine_config", "kv_transfer_config", "kv_connector_extra_config",
              "connectors", 0)
KV_PORT = "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[0].kv_port"
OTHER_PORT = "give each its own"


def one_mistake(stack: str, path: tuple, value: Any) -> dict[str, Any]:
    values = stack_values(stack)
    *parents, last = path
    holder: Any = values
    for step in parents:
        holder = holder[step]
    holder[last] = value
    return values


def problems_of(values: dict[str, Any], stack: str = "svc") -> list[str]:
    texts = {f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in values.items()}
    with pytest.raises(SettingsError) as raised:
        settings_from_config(texts, set(), stack)
    return raised.value.problems


# (case, stack, path of the one value changed, value, the exact problem line)
CORPUS = [
    # int32 and strict numbers: no 1e20 replicas, no `true` as a count or port, no non-ASCII digits
    ("replicas-beyond-int32", "dev", ("motor_deploy_config", "single_p_instance_pod_num"), 10**20,
     "motor_deploy_config.single_p_instance_pod_num: 100000000000000000000 does not fit a Kubernetes replica count "
     "(int32, at most 2147483647)"),
    ("replicas-1e20", "dev", ("motor_deploy_config", "single_d_instance_pod_num"), 1e20,
     "motor_deploy_config.single_d_instance_pod_num: 1e+20 is a decimal number; write a whole number without quotes, "
     "e.g. 1"),
    ("count-true", "dev", ("motor_deploy_config", "p_instances_num"), True,
     "motor_deploy_config.p_instances_num: true is not a whole number; write a whole number without quotes, e.g. 1"),
    ("count-string", "dev", ("motor_deploy_config", "d_pod_npu_num"), "2",
     'motor_deploy_config.d_pod_npu_num: "2" is not a whole number; write a whole number without quotes, e.g. 2'),
    ("port-true", "dev", ("kv_cache_store_config", "port"), True,
     "kv_cache_store_config.port: true is not a whole number; write a whole number without quotes, e.g. 50088"),
    ("port-fullwidth-digits", "dev", ("kv_cache_store_config", "port"), "５００８８",
     'kv_cache_store_config.port: "５００８８" is not a whole number; write a whole number without quotes, e.g. 50088'),
    ("node-port-true", "dev", ("motor_deploy_config", "coordinator_infer_node_port"), True,
     "motor_deploy_config.coordinator_infer_node_port: true is not a whole number; write a whole number without "
     "quotes, e.g. 31015"),
    ("kv-port-true", "dev", (*CONNECTOR0, "kv_port"), True, f"{KV_PORT}: true is a boolean; write a number"),
    ("kv-port-arabic-indic-digits", "dev", (*CONNECTOR0, "kv_port"), "٣٠٠٠١",
     f"{KV_PORT}: '٣٠٠٠١' is not a port number (1-65535)"),
    ("etcd-replicas-true", "mooncake-ha", ("kv_cache_store_config", "ha", "etcd", "replicas"), True,
     "kv_cache_store_config.ha.etcd.replicas: true is a boolean; write a number"),
    ("ratio-string", "mooncake-ha", ("kv_cache_store_config", "eviction_ratio"), "0.1",
     'kv_cache_store_config.eviction_ratio: "0.1" is not a number; write one without quotes, e.g. 0.4 '
     '(`pulumi config set --path` needs `--type float`)'),
    ("bool-yes", "ucm", ("motor_deploy_config", "storage", 0, "read_only"), "yes",
     'motor_deploy_config.storage[0].read_only: "yes" is not a boolean; write true or false'),
    ("bool-one", "dev", ("kv_cache_store_config", "protect"), 1,
     "kv_cache_store_config.protect: 1 is not a boolean; write true or false"),
    # hostPath with '..' (core validatePathNoBacksteps)
    ("weight-path-backstep", "dev", ("motor_deploy_config", "weight_mount_path"), "/mnt/models/../weights",
     "motor_deploy_config.weight_mount_path: '/mnt/models/../weights' contains '..'; Kubernetes refuses it in a "
     "hostPath: write the path without it"),
    ("storage-hostpath-backstep", "ucm", ("motor_deploy_config", "storage", 0),
     {"type": "hostpath", "path": "/data/../cache", "mount_path": "/mnt/ucm"},
     "motor_deploy_config.storage[0].path: '/data/../cache' contains '..'; Kubernetes refuses it in a hostPath: "
     "write the path without it"),
    # one mountPath twice in the engine container (core ValidateVolumeMounts)
    ("weight-on-dshm", "dev", ("motor_deploy_config", "weight_mount_path"), "/dev/shm",
     "motor_deploy_config.weight_mount_path: '/dev/shm' is where engine pods already mount the shared-memory volume "
     "(dshm_size); choose another path"),
    ("weight-on-configmap", "dev", ("motor_deploy_config", "weight_mount_path"), "/mnt/configmap/",
     "motor_deploy_config.weight_mount_path: '/mnt/configmap/' is where engine pods already mount ConfigMap "
     "motor-config; choose another path"),
    ("weight-on-client-config", "mooncake-ha", ("motor_deploy_config", "weight_mount_path"),
     "/etc/motor-kvpool/kv-client/mooncake.json",
     "motor_deploy_config.weight_mount_path: '/etc/motor-kvpool/kv-client/mooncake.json' is where engine pods "
     "already mount the KV store's client configuration; choose another path"),
    ("weight-on-host-file", "dev", ("motor_deploy_config", "weight_mount_path"),
     "/usr/local/Ascend/driver/tools/hccn_tool",
     "motor_deploy_config.weight_mount_path: '/usr/local/Ascend/driver/tools/hccn_tool' is where engine pods "
     "already mount the host file /usr/local/Ascend/driver/tools/hccn_tool; choose another path"),
    ("storage-on-dshm", "ucm", ("motor_deploy_config", "storage", 0, "mount_path"), "/dev/shm",
     "motor_deploy_config.storage[0].mount_path: '/dev/shm' is where engine pods already mount the shared-memory "
     "volume (dshm_size); choose another path"),
    ("storage-on-weights", "ucm", ("motor_deploy_config", "storage", 0, "mount_path"), "/mnt/weight",
     "motor_deploy_config.storage[0].mount_path: '/mnt/weight' is weight_mount_path, where engine pods mount the "
     "weights; choose another path"),
    ("storage-on-worker-sockets", "yuanrong", ("motor_deploy_config", "storage"),
     [{"type": "hostpath", "path": "/data/cache", "mount_path": "/var/run/datasystem"}],
     "motor_deploy_config.storage[0].mount_path: '/var/run/datasystem' is where engine pods already mount the "
     "openYuanrong worker sockets; choose another path"),
    # labels and annotations (apimachinery ValidateLabels, ValidateAnnotations)
    ("job-id-label-too-long", "dev", ("motor_deploy_config", "job_id"), "a" * 63,
     f"motor_deploy_config.job_id: {'a' * 63!r} is 63 characters: the label job-name=<job_id>-p0 would be 66 "
     "characters (max 63); use at most 60"),
    ("job-id-label-too-long-service-set", "service-set", ("motor_deploy_config", "job_id"), "b" * 62,
     f"motor_deploy_config.job_id: {'b' * 62!r} is 62 characters: the label job-name=<job_id>-p would be 64 "
     "characters (max 63); use at most 61"),
    ("node-selector-key", "dev", ("motor_deploy_config", "prefill_node_selector"), {"bad key!": "x"},
     "motor_deploy_config.prefill_node_selector['bad key!']: 'bad key!' is not a label or annotation key: the name "
     "(after any prefix/) must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
    ("node-selector-value-64", "dev", ("motor_deploy_config", "decode_node_selector"), {"example.com/zone": "z" * 64},
     f"motor_deploy_config.decode_node_selector['example.com/zone']: {'z' * 64!r} is not a label value: at most 63 "
     "letters, digits, '-', '_' or '.', starting and ending with a letter or digit (or empty)"),
    ("label-value-chars", "dev", ("kv_cache_store_config", "additional_labels"), {"team": "a b"},
     "kv_cache_store_config.additional_labels.team: 'a b' is not a label value: at most 63 letters, digits, '-', "
     "'_' or '.', starting and ending with a letter or digit (or empty)"),
    ("label-key-prefix", "dev", ("kv_cache_store_config", "additional_labels"), {"Bad_Prefix.com/x": "v"},
     "kv_cache_store_config.additional_labels['Bad_Prefix.com/x']: 'Bad_Prefix.com/x' is not a label or annotation "
     "key: its prefix before '/' must be a DNS subdomain such as example.com"),
    ("annotation-key", "dev", ("kv_cache_store_config", "additional_annotations"), {"-bad": "any value at all"},
     "kv_cache_store_config.additional_annotations.-bad: '-bad' is not a label or annotation key: the name (after "
     "any prefix/) must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"),
    # one port twice in a container and a Service (core ValidateService; server-side apply's list keys)
    ("mooncake-metrics-is-port", "mooncake-ha", ("kv_cache_store_config", "metrics_port"), 50088,
     f"kv_cache_store_config.metrics_port: 50088 is also port; mooncake_master binds each separately (and the "
     f"Service would list one port twice), {OTHER_PORT}"),
    ("etcd-peer-is-client-port", "mooncake-ha", ("kv_cache_store_config", "ha", "etcd", "peer_port"), 2379,
     f"kv_cache_store_config.ha.etcd.peer_port: 2379 is also port; etcd listens on each separately (and the Service "
     f"would list one port twice), {OTHER_PORT}"),
    ("yuanrong-etcd-peer-is-client-port", "yuanrong", ("kv_cache_store_config", "etcd"), {"port": 2400, "peer_port": 2400},
     f"kv_cache_store_config.etcd.peer_port: 2400 is also port; etcd listens on each separately (and the Service "
     f"would list one port twice), {OTHER_PORT}"),
    # requests above limits (core ValidateResourceRequirements)
    ("cpu-request-above-limit", "dev", ("kv_cache_store_config", "resources"),
     {"requests": {"cpu": "16"}, "limits": {"cpu": "8000m"}},
     "kv_cache_store_config.resources.requests.cpu: 16 is more than limits.cpu 8000m; Kubernetes refuses a request "
     "above its limit"),
    ("memory-request-above-default-limit", "dev", ("kv_cache_store_config", "resources"), {"requests": {"memory": "8Gi"}},
     "kv_cache_store_config.resources.requests.memory: 8Gi is more than limits.memory 4Gi; Kubernetes refuses a "
     "request above its limit"),
    # object names (core ValidateClassName; a PVC's name)
    ("storage-class-name", "ucm", ("motor_deploy_config", "storage", 0, "storage_class_name"), "Fast_SSD",
     "motor_deploy_config.storage[0].storage_class_name: 'Fast_SSD' is not a Kubernetes object name: lower-case "
     "letters, digits, '-' and '.', starting and ending with a letter or digit"),
    ("claim-name", "ucm", ("motor_deploy_config", "storage", 0), {"type": "pvc", "claim_name": "My.Claim"},
     "motor_deploy_config.storage[0].claim_name: 'My.Claim' is not a Kubernetes object name: lower-case letters, "
     "digits, '-' and '.', starting and ending with a letter or digit"),
]


@pytest.mark.parametrize(("stack", "path", "value", "line"), [case[1:] for case in CORPUS], ids=[c[0] for c in CORPUS])
def test_a_one_mistake_stack_is_refused_at_its_field(stack: str, path: tuple, value: Any, line: str) -> None:
    assert problems_of(one_mistake(stack, path, value)) == [line]


@pytest.mark.parametrize(("first", "second", "line"), [
    ("coordinator_infer_node_port", "coordinator_obs_node_port",
     "motor_deploy_config.coordinator_obs_node_port: 31015 is already coordinator_infer_node_port; a NodePort serves "
     "one Service, give each its own"),
    ("coordinator_obs_node_port", "controller_observability_node_port",
     "motor_deploy_config.controller_observability_node_port: 31015 is already coordinator_obs_node_port; a NodePort "
     "serves one Service, give each its own"),
])
def test_one_node_port_for_two_services_is_refused(first: str, second: str, line: str) -> None:
    """A NodePort is allocated once (the API server's NodePort allocator); none is asked for unless written."""
    values = stack_values("dev")
    values["motor_deploy_config"].update({first: 31015, second: 31015})
    assert problems_of(values) == [line]


@pytest.mark.parametrize(
    ("stack", "path", "value"),
    [
        ("dev", (*CONNECTOR0, "kv_port"), "30001"),  # Motor's user_config.json examples write kv_port as a string
        ("dev", (*CONNECTOR0, "kv_port"), 30001),
        ("dev", ("motor_deploy_config", "job_id"), "a" * 60),  # job-name=<60>-p0 is 63 characters
        ("service-set", ("motor_deploy_config", "job_id"), "a" * 61),
        ("dev", ("motor_deploy_config", "single_p_instance_pod_num"), 16),  # the most pods one instance spans
        ("mooncake-ha", ("kv_cache_store_config", "eviction_ratio"), 1),  # an integral ratio is still a number
        ("dev", ("kv_cache_store_config", "additional_labels"), {"example.com/team": "", "a_b.c-d": "X.y_z-1"}),
        ("dev", ("kv_cache_store_config", "additional_annotations"), {"example.com/note": "any text: at all!"}),
        ("dev", ("kv_cache_store_config", "resources"), {"requests": {"cpu": "8", "memory": "4096Mi"}}),
    ],
)
def test_values_the_api_server_takes_still_load(stack: str, path: tuple, value: Any) -> None:
    values = one_mistake(stack, path, value)
    texts = {f"{PROJECT}:{key}": v if isinstance(v, str) else json.dumps(v) for key, v in values.items()}
    loaded: Any = settings_from_config(texts, set(), "svc").model_dump(mode="json")
    for step in path:
        loaded = loaded[step]
    # The settings hold the value as written (a mapping: its keys among the defaults the settings add, e.g. limits).
    assert ({key: loaded[key] for key in value} if isinstance(value, dict) else loaded) == value
    assert type(loaded) is type(value) or isinstance(value, int) and isinstance(loaded, float)


def test_the_cli_exits_1_naming_the_field(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "kvpool"):
        (project / name).symlink_to(REPOSITORY / name)
    text = (REPOSITORY / "stacks" / "Pulumi.dev.yaml").read_text()
    (project / "stacks" / "Pulumi.long.yaml").write_text(
        text.replace("    deploy_mode: multi_deployment\n", f"    deploy_mode: multi_deployment\n    job_id: {'j' * 63}\n")
    )
    result = subprocess.run(
        [sys.executable, "-m", "kvpool", "preview", "--stack", "long", "--project-dir", str(project), "--no-policy",
         "--out", str(tmp_path / "out")],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "motor_deploy_config.job_id: " in result.stderr and "would be 66 characters (max 63)" in result.stderr
    assert not (tmp_path / "out" / "long").exists()


# --- the manifest checks (kvpool/cli/apiserver/checks.py) on hand-written manifests ---------------------------


def found(body: dict[str, Any]) -> list[tuple[str, str]]:
    """(JSONPath, reason) of every problem of one object."""
    from kvpool.cli.engine.property_values import format_path

    return [(format_path(path), reason) for _, path, reason in checks.check_manifests([("o", body)], K8S)]


POD = "$.spec.template.spec"


def test_a_clean_object_has_no_problem() -> None:
    assert found(*MANIFESTS["clean-deployment"]) == []
    assert found(*MANIFESTS["clean-service"]) == []


def test_int32_fields_beyond_their_range() -> None:
    # Go's conversion: an integer keeps its low 32 bits; a float goes through int64 (one beyond int64 becomes int64's
    # lowest, 0 in an int32); validation then refuses the stored value. A fraction is refused while converting.
    assert found(*MANIFESTS["int32-beyond-range"]) == [  # replicas 10**20 is stored as 0, which is valid
        (f"{POD}.containers[0].ports[0].hostPort", "2147483648 becomes -2147483648 in the API server's Go integer "
                                                   "type; -2147483648: must be between 1 and 65535, inclusive"),
    ]
    assert found(*MANIFESTS["int32-fraction"]) == [
        ("$.spec.replicas", "1.5 is not a whole number: the API server cannot convert float64 to int32")]
    assert found(*MANIFESTS["int32-float-beyond"]) == [
        ("$.spec.replicas", "3000000000.0 becomes -1294967296 in the API server's Go integer type; -1294967296: must be "
                            "greater than or equal to 0")]
    assert found(*MANIFESTS["int32-wraps-to-one"]) == []  # stored as 1 replica: the settings refuse it (CORPUS above)


def test_host_path_with_backsteps() -> None:
    assert found(*MANIFESTS["host-path-backsteps"]) == [(f"{POD}.volumes[0].hostPath.path", "'/mnt/../etc': must not contain '..'")]


def test_duplicate_mount_paths_volumes_and_containers() -> None:
    assert found(*MANIFESTS["duplicate-mounts-volumes-containers"]) == [
        (f"{POD}.volumes[1].name", "Duplicate value: 'a'"),
        (f"{POD}.containers[0].volumeMounts[1].mountPath", "'/dev/shm': must be unique"),
        (f"{POD}.containers[0].volumeMounts[2].name", "Not found: 'missing'"),
        (f"{POD}.containers[1].name", "Duplicate value: 'c'"),
    ]


def test_a_stateful_set_mounts_its_claim_templates() -> None:
    assert found(*MANIFESTS["stateful-set-claim-template"]) == [("$.spec.volumeClaimTemplates[0].spec.storageClassName",
                            "'Bad_Class': a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                            "characters, '-' or '.', and must start and end with an alphanumeric character")]


def test_labels_and_annotations() -> None:
    assert found(*MANIFESTS["labels-and-annotations"]) == [
        ("$.metadata.labels['job-name']", f"label value {'j' * 63 + '-p0'!r}: must be no more than 63 characters (is 66)"),
        ("$.metadata.labels['bad key']", "label key 'bad key': name part must consist of alphanumeric characters, "
         "'-', '_' or '.', and must start and end with an alphanumeric character"),
        ("$.metadata.annotations['a/b/c']", "annotation key 'a/b/c': a qualified name must consist of an optional DNS "
         "subdomain prefix and '/' and a name"),
        ("$.metadata.annotations", "annotations total 262173 bytes, must have at most 262144 bytes"),
        (f"{POD}.nodeSelector.accelerator", f"label value {'a' * 64!r}: must be no more than 63 characters (is 64)"),
    ]


def test_selector_must_match_the_template() -> None:
    assert found(*MANIFESTS["selector-not-matching"]) == [("$.spec.template.metadata.labels", "`selector` does not match template `labels`")]


def test_container_ports_env_and_host_ports() -> None:
    assert found(*MANIFESTS["container-ports-env-host-ports"]) == [
        (f"{POD}.containers[0].env[1].name",
         "duplicate entries for key [name='POD_IP']: server-side apply refuses two env entries of one name"),
        (f"{POD}.containers[0].env[2].name", "'1X': a valid environment variable name must consist of alphabetic "
         "characters, digits, '_', '-', or '.', and must not start with a digit"),
        (f"{POD}.containers[0].ports[1].containerPort",
         "duplicate entries for key [containerPort=50088,protocol=TCP]: server-side apply refuses two ports of one number"),
        (f"{POD}.containers[0].ports[1].hostPort", 'Duplicate value: "50088/TCP"'),
        (f"{POD}.containers[0].ports[2].name", "Duplicate value: 'rpc'"),
        (f"{POD}.containers[0].ports[3].name", "'Bad_Name': must contain only alpha-numeric characters (a-z, 0-9), "
         "and hyphens (-)"),
    ]


def test_requests_and_limits() -> None:
    path = f"{POD}.containers[0].resources"
    assert found(*MANIFESTS["requests-and-limits"]) == [
        (f"{path}.requests.cpu", "'16': must be less than or equal to cpu limit of 8"),
        (f"{path}.requests['huawei.com/Ascend910']", "2: must be equal to huawei.com/Ascend910 limit of 4"),
        (f"{path}.limits", "Limit must be set for non overcommitable resources (example.com/dev)"),
    ]
    assert parse_quantity("1.5Gi") == 1.5 * 2**30 and parse_quantity("250m") * 4 == 1
    assert parse_quantity("1e3") == 1000 and parse_quantity("Gi") is None


def test_service_ports_and_node_ports() -> None:
    assert found(*MANIFESTS["service-port-clash"]) == [
        ("$.spec.ports[1]", "Duplicate value: {Protocol:TCP Port:50088}"),
        ("$.spec.ports[2].name", "Required value"),
        ("$.spec.ports[2].targetPort", "70000: must be between 1 and 65535, inclusive"),
    ]
    assert found(*MANIFESTS["node-port-on-cluster-ip"]) == [
        ("$.spec.ports[0].nodePort", "may not be used when `type` is 'ClusterIP'"),
    ]
    first, second = MANIFESTS["node-port-allocated-twice"]
    problems = checks.check_manifests([("Service ns/infer", first), ("Service ns/obs", second)], K8S)
    assert problems == [
        ("Service ns/obs", ("spec", "ports", 0, "nodePort"),
         "31015: provided port is already allocated (to Service ns/infer)"),
    ]  # the allocator stops at a Service's first refused port: the out-of-range 29999 after it goes unnamed
    out_of_range_first = {**second, "spec": {**second["spec"], "ports": second["spec"]["ports"][::-1]}}
    assert checks.check_manifests([("Service ns/infer", first), ("Service ns/obs", out_of_range_first)], K8S) == [
        ("Service ns/obs", ("spec", "ports", 0, "nodePort"),
         "29999: provided port is not in the valid range. The range of valid ports is 30000-32767"),
    ]
    assert found(*MANIFESTS["service-name"]) == [
        ("$.metadata.name", "'Svc1': a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
         "with an alphabetic character, and end with an alphanumeric character"),
    ]


def test_config_map_and_secret_keys() -> None:
    assert found(*MANIFESTS["config-map-keys"]) == [
        ("$.data['../../escape']", "'../../escape': a valid config key must consist of alphanumeric characters, '-', "
         "'_' or '.'"),
        ("$.data['ok.json']", "duplicate of key present in binaryData"),
        ("$.data['..hidden']", "'..hidden': must not start with '..'"),
    ]
    # stringData is merged into data before validation: the server names the key under data
    assert found(*MANIFESTS["secret-keys"]) == [("$.data['DB PASS']", "'DB PASS': a valid config key must consist of alphanumeric "
                              "characters, '-', '_' or '.'")]


def test_names_per_kind() -> None:
    assert found(*MANIFESTS["namespace-name"]) == [("$.metadata.name", "'a.b': a lowercase RFC 1123 label must consist of lower case "
                                 "alphanumeric characters or '-', and must start and end with an alphanumeric character")]
    assert found(*MANIFESTS["cluster-role-name"]) == [("$.metadata.name", "'x:y/z': may not contain '/' or '%'")]


def test_an_infer_service_set_role_is_checked_where_it_sits() -> None:
    assert found(*MANIFESTS["service-set-role"]) == [
        ("$.spec.template.roles[0].spec.template.spec.containers[0].volumeMounts[1].mountPath", "'/a': must be unique"),
        ("$.spec.template.roles[0].services[0].spec.ports[1]", "Duplicate value: {Protocol:TCP Port:1}"),
    ]


def test_the_preview_reports_file_object_and_field() -> None:
    obj = KubernetesObject("urn:x", MANIFESTS["int32-just-beyond"][0], (), ())
    with pytest.raises(ManifestValidationError) as raised:
        validate_objects([obj], K8S)
    assert raised.value.problems == [
        "manifests/deployment-ns-x.yaml: Deployment ns/x: $.spec.replicas: 2147483648 becomes -2147483648 in the API "
        "server's Go integer type; -2147483648: must be greater than or equal to 0"
    ]


@pytest.mark.parametrize("stack", sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (REPOSITORY / "stacks").glob("Pulumi.*.yaml")))
def test_every_example_stack_passes_the_api_server_checks(stack: str) -> None:
    from kvpool.cli.engine.mock_engine import run_program
    from kvpool.cli.engine.stack_config import load_stack_config
    from kvpool.cli.engine.stack_references import resolve

    config = load_stack_config(REPOSITORY, stack)
    run = run_program(REPOSITORY, config, stack_references=resolve(REPOSITORY, config, None))
    objects = kubernetes_objects(run.resources)
    assert checks.check_manifests([(o.label, o.body) for o in objects], K8S) == []
