"""Motor's instance-count limit and the size of one instance."""

from __future__ import annotations

from typing import Any, Mapping

from .sections import SIDES, Finding, engine_section

MOTOR_MAX_INSTANCES = 16  # deploy.py INSTANCE_NUM_MAX
# Pods of one instance: Motor's largest example spans 4 (GLM-5 on A2); 16 pods of 16 NPUs is a 256-NPU engine.
MAX_PODS_PER_INSTANCE = 16
PARALLEL_SIZES = ("data_parallel_size", "tensor_parallel_size", "pipeline_parallel_size")


def check_instance_shape(user_config: Mapping[str, Any]) -> list[Finding]:
    """The instance rules, which hold on user_config as written (they read no default the settings model fills in):
    the settings loader also runs them when the model refuses a field nothing can stand in for (an unknown
    hardware_type), so that one report still says every problem."""
    deploy = section_as_written(user_config, "motor_deploy_config")
    return check_instance_counts(deploy) + check_instance_sizes(user_config)


def section_as_written(user_config: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    """A section as written, or none where the file has something else there (reported by the settings model)."""
    section = user_config.get(name)
    return section if isinstance(section, Mapping) else {}


def check_instance_counts(deploy: Mapping[str, Any]) -> list[Finding]:
    """deploy.py refuses instance counts outside 1..16 (INSTANCE_NUM_MAX)."""
    findings = []
    for key in ("p_instances_num", "d_instances_num"):
        count = deploy.get(key, 1)
        if not isinstance(count, int) or not 1 <= count <= MOTOR_MAX_INSTANCES:
            findings.append(Finding(
                f"motor_deploy_config.{key}",
                f"is {count!r}; Motor supports 1 to {MOTOR_MAX_INSTANCES} instances per role.",
            ))
    return findings


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def check_instance_sizes(user_config: Mapping[str, Any]) -> list[Finding]:
    """An instance spans 1..MAX_PODS_PER_INSTANCE pods, and its vLLM world (DP x TP x PP ranks, one NPU each) fits the
    NPUs of its pods: a larger world never starts, and an unbounded one is no configuration (Motor's examples all
    fit, e.g. GLM-5 on A2: prefill DP 4 x TP 8 on 4 pods of 8 NPUs)."""
    deploy = section_as_written(user_config, "motor_deploy_config")
    findings = []
    for side in SIDES:
        letter = side[0]
        pods_key, npus_key = f"single_{letter}_instance_pod_num", f"{letter}_pod_npu_num"
        pods, npus = _int_or_none(deploy.get(pods_key, 1)), _int_or_none(deploy.get(npus_key))
        if pods is None or not 1 <= pods <= MAX_PODS_PER_INSTANCE:
            findings.append(Finding(
                f"motor_deploy_config.{pods_key}",
                f"is {pods if pods is not None else deploy.get(pods_key)!r}; one {side} instance spans 1 to "
                f"{MAX_PODS_PER_INSTANCE} pods.",
            ))
            continue
        engine = section_as_written(user_config, engine_section(side)).get("engine_config")
        if npus is None or not isinstance(engine, Mapping):
            continue
        sizes = {key: _int_or_none(engine.get(key, 1)) or 1 for key in PARALLEL_SIZES}
        world = sizes["data_parallel_size"] * sizes["tensor_parallel_size"] * sizes["pipeline_parallel_size"]
        if world > pods * npus:
            findings.append(Finding(
                f"{engine_section(side)}.engine_config",
                f"data_parallel_size x tensor_parallel_size x pipeline_parallel_size is "
                f"{' x '.join(str(size) for size in sizes.values())} = {world} ranks, but an instance has {pods} "
                f"pod(s) x {npus} NPUs ({npus_key}) = {pods * npus} NPUs and vLLM places one rank per NPU; lower the "
                f"sizes or raise {npus_key} / {pods_key}.",
            ))
    return findings
