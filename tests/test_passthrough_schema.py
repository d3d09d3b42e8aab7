"""The pass-through sections are checked against Motor's and vLLM's own schemas (kvpool/settings/passthrough_schema.json):
an unknown key gets the nearest known one, a wrong type the expected one, an enum value the allowed ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.fleet.offline import stack_settings
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.namespace import PROJECT
from tests.service_configs import plain_pd, problems_of

PREFILL = "motor_engine_prefill_config"
DECODE = "motor_engine_decode_config"


@pytest.mark.parametrize(
    ("section", "typo", "expected"),
    [
        ("motor_controller_config", {"fault_tolerance_config": {"enable_fault_toleranc": False}},
         "motor_controller_config.fault_tolerance_config.enable_fault_toleranc: unknown key; FaultToleranceConfig of Motor 8919e55 has no such field; did you mean "
         "'enable_fault_tolerance'?"),
        ("motor_coordinator_config", {"scheduler_config": {"scheduler_typ": "kv_cache_affinity"}},
         "motor_coordinator_config.scheduler_config.scheduler_typ: unknown key; SchedulerConfig of Motor 8919e55 has no such field; did you mean 'scheduler_type'?"),
        ("motor_nodemanger_config", {"api_config": {"node_manager_prt": 1026}},
         "motor_nodemanger_config.api_config.node_manager_prt: unknown key; APIConfig of Motor 8919e55 has no such field; did you mean 'node_manager_port'?"),
        ("kv_conductor_config", {"http_server_prt": 13333},
         "kv_conductor_config.http_server_prt: unknown key; did you mean 'http_server_port'?"),
    ],
)
def test_a_typo_in_a_motor_section_is_refused_with_the_nearest_key(section, typo, expected):
    service = plain_pd()
    service[section] = typo
    if section == "kv_conductor_config":  # a conductor needs the prefill's KV events: reported in the same run
        service["motor_engine_prefill_config"]["engine_config"]["kv-events-config"] = {
            "publisher": "zmq", "enable_kv_cache_events": True, "endpoint": "tcp://*:5557", "topic": "kv-events",
        }
    assert problems_of(service) == [expected]


def test_a_typo_at_a_motor_sections_top_level_is_refused():
    service = plain_pd()
    service["motor_controller_config"] = {"instance_confg": {"instance_heartbeat_timeout": 10}}
    assert problems_of(service) == [
        "motor_controller_config.instance_confg: unknown key; ControllerConfig of Motor 8919e55 has no such field; did you mean 'instance_config'?"
    ]


@pytest.mark.parametrize("side", [PREFILL, DECODE])
def test_a_typo_in_engine_config_is_refused_in_the_users_spelling(side):
    service = plain_pd()
    service[side]["engine_config"]["served_model_nam"] = "qwen3-8B"
    service[side]["engine_config"]["max-num-seq"] = 16
    assert problems_of(service) == [
        f"{side}.engine_config.served_model_nam: unknown key; did you mean 'served_model_name'?",
        f"{side}.engine_config.max-num-seq: unknown key; did you mean 'max-num-seqs'?",
    ]


def test_an_engine_key_far_from_every_vllm_option_names_the_version():
    service = plain_pd()
    service[PREFILL]["engine_config"]["some-future-vllm-flag"] = True
    assert problems_of(service) == [
        f"{PREFILL}.engine_config.some-future-vllm-flag: unknown key; vLLM 0.17.0 serve has no option "
        "--some-future-vllm-flag"
    ]


def test_a_typo_in_vllm_ascends_additional_config_is_refused():
    service = plain_pd()
    service[DECODE]["engine_config"]["additional-config"] = {"enable_cpu_bindin": False}
    assert problems_of(service) == [
        f"{DECODE}.engine_config.additional-config.enable_cpu_bindin: unknown key; did you mean 'enable_cpu_binding'?"
    ]


@pytest.mark.parametrize("section", ["motor_nodemanger_config", "health_check_config"])
def test_motor_sections_inside_an_engine_section_are_checked(section):
    service = plain_pd()
    typo = {"motor_nodemanger_config": {"api_config": {"node_manager_prt": 1}},
            "health_check_config": {"max_failure_cont": 6}}[section]
    service[DECODE][section] = typo
    key = {"motor_nodemanger_config": "api_config.node_manager_prt", "health_check_config": "max_failure_cont"}[section]
    near = {"motor_nodemanger_config": "node_manager_port", "health_check_config": "max_failure_count"}[section]
    reader = {"motor_nodemanger_config": "APIConfig", "health_check_config": "HealthCheckConfig"}[section]
    assert problems_of(service) == [
        f"{DECODE}.{section}.{key}: unknown key; {reader} of Motor 8919e55 has no such field; did you mean '{near}'?"
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda s: s.update(motor_controller_config={"api_config": {"controller_api_port": "1026"}}),
         "motor_controller_config.api_config.controller_api_port: \"1026\" is a string, but Motor's "
         "ApiConfig.controller_api_port takes a whole number"),
        (lambda s: s.update(motor_coordinator_config={"scheduler_config": "kv_cache_affinity"}),
         "motor_coordinator_config.scheduler_config: \"kv_cache_affinity\" is a string, but Motor's "
         "CoordinatorConfig.scheduler_config takes a mapping"),
        (lambda s: s.update(motor_coordinator_config={"exception_config": {"retry_delay": True}}),
         "motor_coordinator_config.exception_config.retry_delay: true is true or false, but Motor's "
         "ExceptionConfig.retry_delay takes a number"),
        (lambda s: s[PREFILL]["engine_config"].update({"enforce-eager": "yes"}),
         f"{PREFILL}.engine_config.enforce-eager: \"yes\" is a string, but vLLM 0.17.0's --enforce-eager takes true "
         "or false"),
        (lambda s: s[DECODE]["engine_config"].update({"max-num-seqs": "sixteen"}),
         f"{DECODE}.engine_config.max-num-seqs: \"sixteen\" is a string, but vLLM 0.17.0's --max-num-seqs takes a "
         "whole number"),
        (lambda s: s[DECODE]["engine_config"].update({"max-num-seqs": 16.5}),
         f"{DECODE}.engine_config.max-num-seqs: 16.5 is a number, but vLLM 0.17.0's --max-num-seqs takes a whole "
         "number"),
        (lambda s: s[DECODE]["engine_config"].update({"gpu_memory_utilization": [0.9]}),
         f"{DECODE}.engine_config.gpu_memory_utilization: a list, but vLLM 0.17.0's --gpu-memory-utilization takes "
         "a number"),
        (lambda s: s.update(motor_coordinator_config={"scheduler_config": {"scheduler_type": "kv_affinity"}}),
         "motor_coordinator_config.scheduler_config.scheduler_type: 'kv_affinity' is not allowed; write one of "
         "'load_balance', 'round_robin' or 'kv_cache_affinity'"),
        (lambda s: s[PREFILL]["engine_config"].update({"block-size": 48}),
         f"{PREFILL}.engine_config.block-size: 48 is not allowed; write one of 1, 8, 16, 32, 64, 128 or 256"),
        (lambda s: s[PREFILL]["engine_config"].update({"dtype": "bf16"}),
         f"{PREFILL}.engine_config.dtype: 'bf16' is not allowed; write one of 'auto', 'half', 'float16', "
         "'bfloat16', 'float' or 'float32'"),
    ],
)
def test_a_wrong_type_or_enum_value_is_refused_with_what_to_write(change, expected):
    service = plain_pd()
    change(service)
    assert problems_of(service) == [expected]


def test_every_problem_of_the_pass_through_sections_is_reported_at_once():
    service = plain_pd()
    service["motor_coordinator_config"] = {"scheduler_config": {"scheduler_typ": "round_robin"}}
    service[PREFILL]["engine_config"]["served_model_nam"] = "x"
    assert problems_of(service) == [
        "motor_coordinator_config.scheduler_config.scheduler_typ: unknown key; SchedulerConfig of Motor 8919e55 has no such field; did you mean 'scheduler_type'?",
        f"{PREFILL}.engine_config.served_model_nam: unknown key; did you mean 'served_model_name'?",
    ]


def test_what_motor_and_vllm_read_is_accepted():
    service = plain_pd()
    service["motor_coordinator_config"] = {
        "scheduler_config": {"scheduler_type": "round_robin", "kv_affinity_load_weight": 2},  # an int for a float
        "aigw": {"slo_ttft": 1000},  # read by CoordinatorConfig.from_json beside its fields
    }
    service[PREFILL]["engine_config"].update({
        "max-model-len": "32k",  # vLLM reads it with human_readable_int_or_auto
        "compilation_config": {"cudagraph_mode": "FULL_DECODE_ONLY"},  # a config class: a mapping or JSON
        "served_model_name": "qwen3-8B",
        "additional-config": {"enable_cpu_binding": True, "enable_dsa_cp": True},  # the second: Motor's examples
        "block-size": "128",  # Motor writes `--block-size 128` either way
    })
    settings = load_from_pulumi_config(service, "svc")
    assert settings.user_config()["motor_coordinator_config"]["aigw"] == {"slo_ttft": 1000}


def newer_motor(motor_checkout: Path, checkout: Path) -> Path:
    """A copy at `checkout` of Motor's config classes whose CoordinatorConfig gains render_config (as the newer
    deployer's stacks write it), laid out as a checkout: motor/config/ and examples/deployer/, the folder
    motor_deployer_dir names, which is returned."""
    config = checkout / "motor" / "config"
    shutil.copytree(motor_checkout / "motor" / "config", config)
    coordinator = config / "coordinator.py"
    text = coordinator.read_text(encoding="utf-8")
    assert "render_config" not in text
    at = text.index("    logging_config: LoggingConfig", text.index("class CoordinatorConfig"))
    coordinator.write_text(text[:at] + "    render_config: dict = field(default_factory=dict)\n" + text[at:], encoding="utf-8")
    deployer = checkout / "examples" / "deployer"
    deployer.mkdir(parents=True)
    return deployer


def test_a_field_of_the_deployed_motors_config_class_is_accepted_and_typed(motor_checkout, tmp_path):
    service = plain_pd()
    service["motor_coordinator_config"] = {"render_config": {"enable": True}}
    assert problems_of(service) == [
        "motor_coordinator_config.render_config: unknown key; CoordinatorConfig of Motor 8919e55 has no such field; "
        "did you mean 'tracer_config'?"
    ]
    service["motor_deployer_dir"] = str(newer_motor(motor_checkout, tmp_path))
    assert load_from_pulumi_config(service, "svc").motor_coordinator_config == {"render_config": {"enable": True}}
    service["motor_coordinator_config"] = {"render_config": 5, "render_confg": {}}
    assert problems_of(service) == [
        "motor_coordinator_config.render_config: 5 is a whole number, but Motor's CoordinatorConfig.render_config "
        "takes a mapping",
        f"motor_coordinator_config.render_confg: unknown key; CoordinatorConfig of Motor at {tmp_path} has no such "
        "field; did you mean 'render_config'?",
    ]


def test_a_motor_deployer_dir_outside_a_motor_checkout_is_refused(tmp_path):
    deployer = tmp_path / "examples" / "deployer"
    deployer.mkdir(parents=True)
    service = plain_pd()
    service.update(motor_deployer_dir=str(deployer), motor_coordinator_config={"render_config": {}})
    assert problems_of(service) == [
        f"motor_deployer_dir: the pass-through sections are checked against the config classes of the Motor checkout "
        f"it lies in, motor/config/ of {tmp_path} (two folders above examples/deployer), but {tmp_path}/motor/config "
        f"is not a folder; point motor_deployer_dir at a Motor checkout's examples/deployer folder"
    ]


def test_a_relative_motor_deployer_dir_names_a_checkout_of_the_stacks_project(motor_checkout, tmp_path, monkeypatch):
    """The offline commands read a stack file from --project-dir, wherever they run: the checkout is found from the
    project's folder, as the program (run there) finds it."""
    newer_motor(motor_checkout, tmp_path / "motor-new")
    service = plain_pd()
    service.update(motor_deployer_dir="motor-new/examples/deployer", motor_coordinator_config={"render_config": {}})
    texts = {f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in service.items()}
    config = StackConfig(PROJECT, "svc", texts, project_dir=tmp_path)
    monkeypatch.chdir(tmp_path / "motor-new")
    assert stack_settings(config).motor_coordinator_config == {"render_config": {}}
