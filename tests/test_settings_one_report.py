"""Every problem of a stack in one run: a refused value, a top-level typo or a pass-through key hides no other
problem of the file (issue 22 item 3)."""

from __future__ import annotations

import pytest

from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_motor_files, load_from_pulumi_config
from tests.program_runs import stack_values
from tests.service_configs import as_motor_files, mooncake_pool, problems_of

QUOTED_RATIO = (
    'kv_cache_store_config.eviction_ratio: "0.4" is not a number; write one without quotes, e.g. 0.4 '
    "(`pulumi config set --path` needs `--type float`)"
)
WATERMARK_OUT_OF_RANGE = (
    "kv_cache_store_config.eviction_high_watermark_ratio: is 1.5; it must be in (0, 1] (a fraction of the pool), e.g. 0.6."
)


def test_a_quoted_number_does_not_hide_an_out_of_range_value_beside_it():
    service = mooncake_pool()
    service["kv_cache_store_config"].update(eviction_ratio="0.4", eviction_high_watermark_ratio=1.5)
    assert problems_of(service) == [QUOTED_RATIO, WATERMARK_OUT_OF_RANGE]


def test_a_top_level_typo_hides_no_other_problem():
    service = mooncake_pool()
    service["kv_cache_stor_config"] = {"backend": "mooncake"}
    service["motor_deploy_config"]["p_instance_num"] = 2
    service["motor_coordinator_config"] = {"scheduler_config": {"scheduler_typ": "load_balance"}}
    service["motor_engine_decode_config"]["engine_config"]["enforce-eager"] = "yes"
    service["kv_cache_store_config"].update(eviction_ratio="0.4", eviction_high_watermark_ratio=1.5)
    assert problems_of(service) == [
        "motor-kvpool:kv_cache_stor_config: unknown configuration key; did you mean motor-kvpool:kv_cache_store_config?",
        "motor_deploy_config.p_instance_num: unknown key; did you mean 'p_instances_num'?",
        QUOTED_RATIO,
        "motor_coordinator_config.scheduler_config.scheduler_typ: unknown key; SchedulerConfig of Motor 8919e55 has no such field; did you mean 'scheduler_type'?",
        'motor_engine_decode_config.engine_config.enforce-eager: "yes" is a string, but vLLM 0.17.0\'s '
        "--enforce-eager takes true or false",
        WATERMARK_OUT_OF_RANGE,
    ]


def test_a_refusal_no_default_can_replace_still_reports_the_pass_through_sections():
    """A missing required field leaves no model to run the rules on; the pass-through sections are checked anyway."""
    service = mooncake_pool()
    del service["motor_deploy_config"]["image_name"]
    service["motor_controller_config"] = {"fault_tolerance_config": {"enable_fault_toleranc": False}}
    assert problems_of(service) == [
        "motor_deploy_config.image_name: required; add it",
        "motor_controller_config.fault_tolerance_config.enable_fault_toleranc: unknown key; FaultToleranceConfig of Motor 8919e55 has no such field; did you mean "
        "'enable_fault_tolerance'?",
    ]


def test_an_unknown_hardware_type_hides_no_instance_that_cannot_fit():
    """Issue 37 §4: the hardware error and the rank error in one report, not one after the other's fix."""
    service = mooncake_pool()
    service["motor_deploy_config"].update(hardware_type="800I_A4", p_pod_npu_num=2, d_instances_num=17)
    service["motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 4
    assert problems_of(service) == [
        "motor_deploy_config.d_instances_num: is 17; Motor supports 1 to 16 instances per role.",
        "motor_deploy_config.hardware_type: '800I_A4' is not allowed; write one of '800I_A2', '800T_A2', '800I_A3', "
        "'800T_A3', '350-Atlas-8', '350-Atlas-16', '350-Atlas-4p-8', '350-Atlas-4p-16', '850-Atlas-8p-8', "
        "'850-SuperPod-Atlas-8' or '950-SuperPod-Atlas-8'",
        "motor_engine_prefill_config.engine_config: data_parallel_size x tensor_parallel_size x pipeline_parallel_size "
        "is 1 x 4 x 1 = 4 ranks, but an instance has 1 pod(s) x 2 NPUs (p_pod_npu_num) = 2 NPUs and vLLM places one "
        "rank per NPU; lower the sizes or raise p_pod_npu_num / single_p_instance_pod_num.",
    ]


def test_the_files_loader_reports_them_all_too():
    service = mooncake_pool()
    service["kv_cache_store_config"].update(eviction_ratio="0.4", eviction_high_watermark_ratio=1.5)
    with pytest.raises(SettingsError) as caught:
        load_from_motor_files(*as_motor_files(service), "svc")
    assert caught.value.problems == [QUOTED_RATIO, WATERMARK_OUT_OF_RANGE]


def test_a_section_key_indented_too_little_is_named_with_its_section():
    """Issue 37 §3: engine_config dedented out of motor_engine_prefill_config becomes a configuration key of its own
    (the CLI gives it the project's namespace); the report says where it belongs."""
    values = stack_values("dev")
    values["engine_config"] = values["motor_engine_prefill_config"].pop("engine_config")
    values["hardware_type"] = values["motor_deploy_config"].pop("hardware_type")
    assert stack_problems(values) == [
        "motor-kvpool:engine_config: unknown configuration key; engine_config is a key of motor_engine_prefill_config "
        "and motor_engine_decode_config: it is indented too little, so YAML reads it as a configuration key of its "
        "own; indent it under its section",
        "motor-kvpool:hardware_type: unknown configuration key; hardware_type is a key of motor_deploy_config: it is "
        "indented too little, so YAML reads it as a configuration key of its own; indent it under its section",
        "motor_deploy_config.hardware_type: required; add it",
        "motor_engine_prefill_config.engine_config: required; add it",
    ]


def test_a_section_nested_one_level_too_deep_is_said_in_one_line():
    """Issue 37 §3: an env section under motor_common_env failed once per type an env value may have."""
    values = stack_values("dev")
    values["env"]["motor_common_env"]["motor_engine_prefill_env"] = values["env"].pop("motor_engine_prefill_env")
    values["env"]["motor_common_env"]["PATHS"] = ["/a", "/b"]
    assert stack_problems(values) == [
        "env.motor_common_env.motor_engine_prefill_env: is a section, but a value (text, a number or true/false) goes "
        "here; motor_engine_prefill_env is a section of env, indented one level too deep: indent it one level less",
        "env.motor_common_env.PATHS: is a list, but a value (text, a number or true/false) goes here",
    ]


def stack_problems(values: dict) -> list[str]:
    """The problems of the dev stack's values changed as a test writes them, as the program's loader reports them."""
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(values, "dev")
    return caught.value.problems
