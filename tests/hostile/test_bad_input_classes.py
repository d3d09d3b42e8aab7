"""Classes of bad input a held-out corpus found accepted (issue 21 §5), each refused as a class with the field named:
port collisions in one pod or on one node, control characters, counts and sizes without an upper bound, non-numbers
where a process parses numbers, nesting deep enough to recurse, and secrets inside a file the stack passes through.

Settings refusals run the settings loader in-process on an example stack's values; what only the CLI shows (exit
codes, a memory limit) runs `python -m kvpool` in a subprocess."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from kvpool.cli.engine.mock_engine import ProgramError
from kvpool.errors import SettingsError
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import PROJECT_DIR, render, stack_values

TIMEOUT = 120


def problems(stack: str, change: Callable[[dict[str, Any]], Any]) -> list[str]:
    """The settings loader's problems for the example stack's values after `change`."""
    values = stack_values(stack)
    change(values)
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "svc")
    return caught.value.problems


def kvpool(*args: str | Path, memory_limit: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if memory_limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
    return subprocess.run([sys.executable, "-m", "kvpool", *map(str, args)], cwd=PROJECT_DIR, capture_output=True,
                          text=True, timeout=TIMEOUT, preexec_fn=limit)


def stack_file(project: Path, name: str, stack: str, change: Callable[[dict[str, Any]], Any]) -> None:
    document = yaml.safe_load((PROJECT_DIR / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    change(document["config"])
    (project / "stacks" / f"Pulumi.{name}.yaml").write_text(yaml.safe_dump(document))


# --- ports of one pod, ports of one node -------------------------------------------------------------------------


def test_a_roles_infer_port_on_its_management_port():
    def change(values):
        values["motor_coordinator_config"] = {"api_config": {"coordinator_api_mgmt_port": 1025}}
    assert problems("dev", change) == [
        "motor_coordinator_config.api_config.coordinator_api_mgmt_port: is 1025, which the same pod already binds as "
        "motor_coordinator_config.api_config.coordinator_api_infer_port: one of them fails to bind; give each port of "
        "the role its own number."
    ]


def test_the_controllers_api_port_on_its_fixed_observability_port():
    def change(values):
        values["motor_controller_config"] = {"api_config": {"controller_api_port": 1027}}
    assert problems("dev", change) == [
        "motor_controller_config.api_config.controller_api_port: is 1027, which the same pod already binds as its obs "
        "port (fixed): one of them fails to bind; give each port of the role its own number."
    ]


@pytest.mark.parametrize("port, daemon", [(22, "sshd"), (10250, "the kubelet's API"),
                                          (2379, "etcd of the control plane"), (6443, "kube-apiserver")])
def test_a_host_network_worker_on_a_node_daemons_port(port, daemon):
    assert problems("yuanrong", lambda values: values["kv_cache_store_config"].update(port=port)) == [
        f"kv_cache_store_config.port: is {port}, where {daemon} listens on the node; the host-network pod cannot bind "
        f"it there: choose another port."
    ]


def test_a_host_network_worker_on_a_privileged_port():
    assert problems("yuanrong", lambda values: values["kv_cache_store_config"].update(port=80)) == [
        "kv_cache_store_config.port: is 80: binding a port below 1024 on the node needs NET_BIND_SERVICE, which the pod "
        "drops; choose one from 1024 up."
    ]


def test_a_host_network_worker_on_the_services_node_port():
    def worker_on_the_node_port(values: dict) -> None:
        values["motor_deploy_config"]["coordinator_infer_node_port"] = 31015
        values["kv_cache_store_config"].update(port=31015)

    assert problems("yuanrong", worker_on_the_node_port) == [
        "kv_cache_store_config.port: is 31015, the NodePort of motor_deploy_config.coordinator_infer_node_port: "
        "kube-proxy takes that port's traffic on every node, so the host-network pod would never receive it; choose "
        "another port."
    ]


def test_the_node_daemons_ports_are_the_kubernetes_ones():
    assert {22, 2379, 2380, 6443, 10250, 10255, 10256, 10257, 10259} <= set(rules.NODE_RESERVED_PORTS)


# --- control characters ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("character", ["\x00", "\x1b", "\r", "\x7f", "\x85"])
def test_a_control_character_in_a_name(character):
    def change(values):
        values["motor_engine_prefill_config"]["engine_config"]["served_model_name"] = f"qwen{character}"
    assert problems("dev", change) == [
        f"motor_engine_prefill_config.engine_config.served_model_name: holds the control character {character!a} (at "
        f"offset 4); names, paths, labels and values take none: remove it"
    ]


def test_a_nul_in_a_label_value_is_said_once():
    def change(values):
        values["motor_deploy_config"]["prefill_node_selector"] = {"pool": "a\x00"}
    assert problems("dev", change) == [
        "motor_deploy_config.prefill_node_selector.pool: holds the control character '\\x00' (at offset 1); names, "
        "paths, labels and values take none: remove it"
    ]


def test_a_nul_in_an_env_name_is_shown_escaped():
    def change(values):
        values["env"]["motor_common_env"]["A\x00B"] = "1"
    assert problems("dev", change)[0] == (
        "env.motor_common_env['A\\x00B']: the key holds the control character '\\x00'; remove it"
    )


@pytest.mark.parametrize("character", ["\n", "\t"])
def test_a_line_break_or_tab_in_a_path(character):
    def change(values):
        values["motor_deploy_config"]["weight_mount_path"] = f"/mnt/we{character}ight"
    assert problems("dev", change) == [
        f"motor_deploy_config.weight_mount_path: {'/mnt/we' + character + 'ight'!a} holds a tab, line break or other "
        "control character; a path is one line: remove it"
    ]


def test_a_line_break_in_pass_through_text_is_kept():
    """Multi-line text (a chat template) is what vLLM takes; only the controls that hide text are refused."""
    values = stack_values("dev")
    values["motor_engine_prefill_config"]["engine_config"]["chat_template"] = "{% for m in messages %}\n{% endfor %}"
    assert load_from_pulumi_config(values, "svc").motor_engine_prefill_config.engine_config.chat_template.count("\n") == 1


# --- counts and sizes --------------------------------------------------------------------------------------------


def test_pods_per_instance_above_sixteen():
    assert problems("dev", lambda values: values["motor_deploy_config"].update(single_d_instance_pod_num=17)) == [
        "motor_deploy_config.single_d_instance_pod_num: is 17; one decode instance spans 1 to 16 pods."
    ]


def test_a_parallel_world_larger_than_the_instances_npus():
    def change(values):
        values["motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 10**9
    assert problems("dev", change) == [
        "motor_engine_prefill_config.engine_config: data_parallel_size x tensor_parallel_size x pipeline_parallel_size "
        "is 1 x 1000000000 x 1 = 1000000000 ranks, but an instance has 1 pod(s) x 2 NPUs (p_pod_npu_num) = 2 NPUs and "
        "vLLM places one rank per NPU; lower the sizes or raise p_pod_npu_num / single_p_instance_pod_num."
    ]


def test_every_motor_example_world_fits_its_instance(motor_examples: Path):
    """The instance-size rule refuses nothing Motor ships: every example's DP x TP x PP fits its pods' NPUs."""
    for path in sorted(motor_examples.glob("**/user_config.json")):
        user_config = json.loads(path.read_text())
        if "motor_engine_prefill_config" in user_config:
            assert rules.check_instance_sizes(user_config) == [], path


@pytest.mark.parametrize("field, value, expected", [
    ("dshm_size", "1000000000000Mi", "'1000000000000Mi' is more than one node's memory (16Ti); check the unit"),
    ("dshm_size", "9" * 400 + "Gi", f"'{'9' * 400}Gi' is more than one node's memory (16Ti); check the unit"),
])
def test_an_absurd_deploy_size(field, value, expected):
    assert problems("dev", lambda values: values["motor_deploy_config"].update({field: value})) == [
        f"motor_deploy_config.{field}: {expected}"
    ]


def test_an_absurd_pool_segment():
    change = lambda values: values["kv_cache_store_config"].update(global_segment_size="5000000GB")  # noqa: E731
    assert problems("mooncake-ha", change) == [
        "kv_cache_store_config.global_segment_size: '5000000GB' is more than one node's memory (16384GB); check the unit"
    ]


def test_an_absurd_shared_memory_size():
    change = lambda values: values["kv_cache_store_config"].update(shared_memory_size_mb=10**12)  # noqa: E731
    assert problems("yuanrong", change) == [
        "kv_cache_store_config.shared_memory_size_mb: 1000000000000 is above 16777216, the most this field takes; "
        "write 16777216 or less"
    ]


def test_an_absurd_volume():
    change = lambda values: values["motor_deploy_config"]["storage"][0].update(size="2Pi")  # noqa: E731
    assert problems("ucm", change) == [
        "motor_deploy_config.storage[0].size: '2Pi' is more than one volume holds (1Pi); check the unit"
    ]


def test_a_huge_parallel_size_is_refused_in_bounded_memory(project: Path):
    """The one-field mutation that grew pytest to 23 GiB: the KV-event port rule built a set of every port of a
    DP x TP x PP range. Now the settings refuse it within 500 MB of address space."""
    # Within 64 bits: the CLI reads a longer integer as a float (kvpool/cli/engine/stack_yaml.py does the same).
    def change(config):
        config["motor-kvpool:motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 2**62
    stack_file(project, "huge", "kv-affinity", change)
    result = kvpool("settings", "--stack", "huge", "--project-dir", project, memory_limit=500_000_000)
    assert (result.returncode, "MemoryError" in result.stderr) == (1, False), result.stderr
    assert f"is 2 x {2**62} x 1 = {2**63} ranks, but an instance has 1 pod(s) x 4 NPUs" in result.stderr


# --- numbers in env --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, value, reader", [
    ("ASCEND_TRANSFER_TIMEOUT", "10s",
     "vllm-ascend's connectors read it with int() (kv_transfer/utils/utils.py) and fail to start"),
    ("KV_STORE_METRICS_PORT", "metrics",
     "Motor's coordinator reads it with int() (motor/config/coordinator.py:118) and stops"),
    ("RATE_LIMIT_MAX_REQUESTS", 1.5, "Motor's coordinator reads it with int() and silently keeps its default "
     "(motor/coordinator/middleware/fastapi_middleware.py:100)"),
    ("HCCL_RDMA_RETRY_CNT", True, "vllm-ascend derives the transfer timeout from it with int() and fails to start"),
])
def test_a_non_number_where_a_process_parses_a_number(name, value, reader):
    assert problems("dev", lambda values: values["env"]["motor_engine_decode_env"].update({name: value})) == [
        f"env.motor_engine_decode_env.{name}: {value!r} is not a whole number: {reader}; write digits only, e.g. "
        "\"10000\"."
    ]


def test_a_hash_seed_python_refuses():
    assert problems("dev", lambda values: values["env"]["motor_common_env"].update(PYTHONHASHSEED="-1")) == [
        "env.motor_common_env.PYTHONHASHSEED: '-1' is neither \"random\" nor a whole number in 0..4294967295: Python "
        "refuses to start with it; write e.g. \"0\"."
    ]


def test_every_numeric_env_motor_parses_is_checked():
    """The names Motor's own code passes to int() (motor/, 8919e55) are all in the rule's list."""
    assert {"KV_CACHE_STORE_PORT", "KV_STORE_METRICS_PORT", "RATE_LIMIT_MAX_REQUESTS",
            "RATE_LIMIT_WINDOW_SIZE"} <= set(rules.NUMERIC_ENV)


# --- nesting -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("deep", ["[" * 3000 + "]" * 3000, '{"a":' * 3000 + "1" + "}" * 3000])
def test_import_set_nested_beyond_libyamls_limit(deep: str, tmp_path: Path):
    from tests.service_configs import as_motor_files, plain_pd

    user, env = as_motor_files(plain_pd())
    (tmp_path / "user_config.json").write_text(json.dumps(user))
    (tmp_path / "env.json").write_text(json.dumps(env))
    result = kvpool("import", "--user-config", tmp_path / "user_config.json", "--env-config", tmp_path / "env.json",
                    "--stack", "deep", "--stacks-dir", tmp_path / "stacks", "--set", f"motor_controller_config.x={deep}")
    assert result.returncode == 1, result.stderr
    assert result.stderr.endswith("': VALUE is read as YAML: 1: nested more than 64 levels deep\n"), result.stderr[-300:]


def test_stack_file_nested_beyond_libyamls_limit(project: Path):
    base = (PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text()
    deep = "[" * 3000 + "]" * 3000
    content = base.replace("config:\n", f"config:\n  motor-kvpool:motor_controller_config: {{x: {deep}}}\n", 1)
    (project / "stacks" / "Pulumi.deep.yaml").write_text(content)
    result = kvpool("settings", "--stack", "deep", "--project-dir", project)
    assert result.returncode == 1, result.stderr
    line = base.splitlines().index("config:") + 2
    assert f"Pulumi.deep.yaml:{line}: nested more than 64 levels deep" in result.stderr


# --- secrets inside a passed-through file ------------------------------------------------------------------------


def test_a_secret_in_the_memcache_local_service_conf():
    conf = "tests/fixtures/memcache/secret-in-mmc-local.conf"
    values = stack_values("dev")
    values["kv_cache_store_config"]["local_service_conf"] = conf
    with pytest.raises(ProgramError) as caught:
        render(values)
    assert str(caught.value) == (
        f"kv_cache_store_config.local_service_conf[{conf!r}].ock.mmc.tls.key.pass: looks like a secret but is plain "
        "text; keep it as a Pulumi secret delivered through a Kubernetes Secret: `pulumi config set --secret --path "
        "secret_env.OCK_MMC_TLS_KEY_PASS VALUE`."
    )


def test_the_policy_finds_a_secret_in_a_conf_entry_of_a_configmap():
    text = (PROJECT_DIR / "tests" / "fixtures" / "memcache" / "secret-in-mmc-local.conf").read_text()
    assert [str(finding) for finding in rules.check_plaintext_conf_secrets(text, "data[mmc-local.conf]")] == [
        "data[mmc-local.conf].ock.mmc.tls.key.pass: looks like a secret but is plain text; keep it as a Pulumi secret "
        "delivered through a Kubernetes Secret: `pulumi config set --secret --path secret_env.OCK_MMC_TLS_KEY_PASS "
        "VALUE`."
    ]


def test_a_megabyte_served_model_name_is_refused_naming_the_field_without_echoing_it():
    change = lambda values: values["motor_engine_prefill_config"]["engine_config"].update(  # noqa: E731
        served_model_name="x" * 10**6)
    assert problems("dev", change) == [
        "motor_engine_prefill_config.engine_config.served_model_name: is 1000000 characters long, more than the 255 "
        "this field takes; shorten it"
    ]


@pytest.mark.parametrize("character", ["\u202e", "\u2066", "\u200f", "\u061c"])
def test_a_bidirectional_control_is_refused_like_any_control_character(character):
    change = lambda values: values["motor_engine_decode_config"]["engine_config"].update(  # noqa: E731
        served_model_name=f"qwen{character}3")
    assert problems("dev", change) == [
        f"motor_engine_decode_config.engine_config.served_model_name: holds the bidirectional control "
        f"{character!a} (at offset 4); names, paths, labels and values take none: remove it"
    ]


@pytest.mark.parametrize("character", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_a_zero_width_character_is_refused_like_a_bidirectional_control(character):
    """`qwen\u200b3` shows as `qwen3` in a diff or a terminal, and is another name to the router and the clients."""
    change = lambda values: values["motor_engine_decode_config"]["engine_config"].update(  # noqa: E731
        served_model_name=f"qwen{character}3")
    assert problems("dev", change) == [
        f"motor_engine_decode_config.engine_config.served_model_name: holds the zero-width character "
        f"{character!a} (at offset 4); names, paths, labels and values take none: remove it"
    ]


@pytest.mark.parametrize(("mount_path", "problem"), [
    ("/", "is the container's root, which a volume would replace"),
    ("/proc/ucm", "lies in /proc, /sys, /dev, the kernel's filesystems, which a volume would hide"),
    ("/mnt/configmap/ucm", "lies inside /mnt/configmap, where engine pods mount ConfigMap motor-config"),
    ("/mnt", "holds /mnt/configmap, where engine pods mount ConfigMap motor-config: a volume here would hide it"),
    ("/usr/local/Ascend", "holds /usr/local/Ascend/driver/version.info, where engine pods mount the host file "
     "/usr/local/Ascend/driver/version.info: a volume here would hide it"),
    ("/mnt/" + "u" * 300, "has a component of 300 bytes, more than the 255 a file name takes"),
])
def test_a_storage_mount_path_that_collides_as_a_path_is_refused(mount_path, problem):
    """Issue 45 §7: mount paths were compared as strings with exact matches only."""
    change = lambda values: values["motor_deploy_config"]["storage"][0].update(mount_path=mount_path)  # noqa: E731
    assert problems("ucm", change) == [
        f"motor_deploy_config.storage[0].mount_path: {mount_path!r} {problem}; choose another path"
    ]


def test_storage_entries_are_compared_as_paths():
    def twin(values):
        entry = values["motor_deploy_config"]["storage"][0]
        values["motor_deploy_config"]["storage"] += [{**entry, "mount_path": "/mnt/ucm/"},
                                                     {**entry, "mount_path": "/mnt/ucm/cold"}]
    assert problems("ucm", twin) == [
        "motor_deploy_config: storage entries share mount_path /mnt/ucm; give each its own"
    ]
    def nested(values):
        entry = values["motor_deploy_config"]["storage"][0]
        values["motor_deploy_config"]["storage"].append({**entry, "mount_path": "/mnt/ucm/cold"})
    assert problems("ucm", nested) == [
        "motor_deploy_config: storage entries' mount_path lie one inside another (/mnt/ucm/cold inside /mnt/ucm); "
        "mount each at a path of its own"
    ]
