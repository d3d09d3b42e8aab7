"""The sections motor-kvpool passes through untouched, checked against the schemas of the code that reads them.

Motor copies motor_controller_config, motor_coordinator_config and motor_nodemanger_config (top level and an
engine section's) and an engine section's health_check_config into its config dataclasses with hasattr/setattr,
so an unknown key is silently ignored; engine_config becomes `--key value` arguments of vLLM's serve parser
(Motor's motor/engine_server/core/vllm/vllm_config.py, `_get_param_list`), and additional_config's keys are read by
vllm-ascend. The schemas are data (passthrough_schema.json), generated from Motor's and vLLM's sources by
tools/passthrough-schema/generate.py. kv_conductor_config is a closed model of its own (kvpool/settings/service.py).
The Motor sections are checked against the Motor the stack deploys: the classes of the checkout motor_deployer_dir
lies in (kvpool/settings/motor_classes.py), else the bundled schema's, which describes BUNDLED_MOTOR.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path
from typing import Any, Mapping, NamedTuple

from kvpool.policies import rules
from kvpool.settings.motor_classes import (
    CONFIG_DIR,
    MotorClassesMissing,
    config_sources,
    motor_schema,
    store_services,
)
from kvpool.settings.types import key_path

SCHEMA = json.loads(Path(__file__).with_name("passthrough_schema.json").read_text(encoding="utf-8"))
BUNDLED_MOTOR = f"Motor {SCHEMA['sources']['motor']['checkout'].removeprefix('motor-')}"
VLLM = f"vLLM {SCHEMA['sources']['vllm']['version']}"
VLLM_ASCEND = f"vllm-ascend {SCHEMA['sources']['vllm_ascend']['version']}"
MOTOR_TOP_LEVEL = ("motor_controller_config", "motor_coordinator_config", "motor_nodemanger_config")
MOTOR_IN_ENGINE_SECTION = ("motor_nodemanger_config", "health_check_config")
ADDITIONAL_CONFIG = "additional-config"
# A null host_log_dir is absent to deploy.py and to us (rules.host_log_dir), at any level; Motor only prints it.
ABSENT_WHEN_NULL = "host_log_dir"

_EXPECTED = {
    "integer": "a whole number", "number": "a number", "boolean": "true or false", "string": "a string",
    "array": "a list", "object": "a mapping", "null": "null",
}


class MotorSchema(NamedTuple):
    """Motor's sections and classes (passthrough_schema.json's "motor" part), which Motor they describe, and the KV
    store backends its node manager starts a service for (None: not known, for the bundled schema)."""

    schema: Mapping[str, Any]
    name: str
    store_services: frozenset[str] | None = None


BUNDLED = MotorSchema(SCHEMA["motor"], BUNDLED_MOTOR)


def deployed_motor(motor_deployer_dir: str | None, project_dir: Path) -> MotorSchema:
    """The schema of the Motor a stack deploys: motor_deployer_dir is its examples/deployer folder, so the checkout
    is the folder's grandparent (holding motor/config/). Unset: the bundled schema."""
    if motor_deployer_dir is None:
        return BUNDLED
    checkout = (project_dir / motor_deployer_dir).resolve().parent.parent
    try:
        return MotorSchema(motor_schema(config_sources(checkout)), f"Motor at {checkout}", store_services(checkout))
    except MotorClassesMissing as error:
        raise MotorClassesMissing(
            f"motor_deployer_dir: the pass-through sections are checked against the config classes of the Motor "
            f"checkout it lies in, {CONFIG_DIR}/ of {checkout} (two folders above examples/deployer), but {error}; "
            f"point motor_deployer_dir at a Motor checkout's examples/deployer folder"
        ) from None


def check_passthrough_sections(user_config: Mapping[str, Any], motor: MotorSchema | None = BUNDLED) -> list[str]:
    """One line per problem, `<dotted path>: <what is wrong and what to write>`, over an effective user_config;
    the Motor sections checked against `motor` (None: not checked, the Motor deployed is unknown)."""
    problems = []
    for section in MOTOR_TOP_LEVEL if motor else ():
        problems += _motor_section(motor, section, section, user_config.get(section))
    for side in rules.SIDES:
        engine = user_config.get(rules.engine_section(side))
        if not isinstance(engine, Mapping):
            continue
        for section in MOTOR_IN_ENGINE_SECTION if motor else ():
            problems += _motor_section(motor, f"{rules.engine_section(side)}.{section}", section, engine.get(section))
        engine_config = engine.get("engine_config")
        if isinstance(engine_config, Mapping):
            problems += _engine_config(f"{rules.engine_section(side)}.engine_config", engine_config)
    return problems


def _motor_section(motor: MotorSchema, path: str, section: str, data: Any) -> list[str]:
    if not isinstance(data, Mapping):
        return []
    spec = motor.schema["sections"][section]
    return _motor_class(motor, path, data, spec["class"], spec["also_reads"])


def _motor_class(
    motor: MotorSchema, path: str, data: Mapping[str, Any], class_key: str, also_reads: list[str] = ()
) -> list[str]:
    fields = motor.schema["classes"][class_key]["fields"]
    name = class_key.split(":")[1]
    reader = f"Motor's {name}"
    problems = []
    for key, value in data.items():
        where = key_path(path, key)
        if key in also_reads or (key, value) == (ABSENT_WHEN_NULL, None):
            continue
        if key not in fields:
            fix = _nearest(key, [*fields, *also_reads], "leave it out")
            problems.append(f"{where}: unknown key; {name} of {motor.name} has no such field; {fix}")
            continue
        spec = fields[key]
        problem = _value_problem(value, spec, f"{reader}.{key}")
        if problem:
            problems.append(f"{where}: {problem}")
        elif "class" in spec and isinstance(value, Mapping):
            problems += _motor_class(motor, where, value, spec["class"])
    return problems


def engine_option(key: Any) -> str:
    """The vLLM serve option an engine_config key sets: Motor writes `--` + the key with '_' as '-', and vLLM's parser
    reads `--option.field` into a JSON option."""
    return str(key).replace("_", "-").split(".")[0]


def _engine_config(path: str, engine_config: Mapping[str, Any]) -> list[str]:
    options = SCHEMA["vllm_serve_options"]
    problems = []
    for key, value in engine_config.items():
        where = key_path(path, key)
        option = engine_option(key)
        if option not in options:
            style = (lambda name: name.replace("-", "_")) if "_" in str(key) else (lambda name: name)
            known = {style(name): name for name in options}
            problems.append(f"{where}: unknown key; {_nearest(style(option), list(known), f'{VLLM} serve has no option --{option}')}")
            continue
        if "." in str(key):
            continue
        parsed = _as_parsed(value, options[option])
        problem = _value_problem(parsed, options[option], f"{VLLM}'s --{option}") or _range_problem(value, parsed, option)
        if problem:
            problems.append(f"{where}: {problem}")
        elif option == ADDITIONAL_CONFIG and isinstance(value, Mapping):
            keys = SCHEMA["vllm_ascend_additional_config"]
            for name in value:
                close = difflib.get_close_matches(str(name), keys, n=1, cutoff=ADDITIONAL_CONFIG_TYPO)
                if name not in keys and close:
                    problems.append(f"{where}.{name}: unknown key; did you mean {close[0]!r}?")
    return problems


class Range(NamedTuple):
    """The values a numeric vLLM option takes: from `least` (or strictly above it), up to `most`, and `auto`, a value
    outside the range that vLLM reads as "choose for me"."""

    least: float
    above: bool = False
    most: float | None = None
    auto: int | None = None

    def holds(self, value: float) -> bool:
        low = value > self.least if self.above else value >= self.least
        return value == self.auto or (low and (self.most is None or value <= self.most))

    def __str__(self) -> str:
        low = f"above {self.least}" if self.above else f"{self.least} or more"
        text = low if self.most is None else f"{low} and at most {self.most}"
        return text if self.auto is None else f"{self.auto} (auto) or {text}"

    def json_schema(self) -> dict[str, float]:
        """The range as JSON Schema keywords, for the reference pages of the options the settings models type."""
        most = {} if self.most is None else {"maximum": self.most}
        return {"exclusiveMinimum" if self.above else "minimum": self.least, **most}


# vLLM 0.17.0's config dataclasses, which EngineArgs builds from these options: out of range, the engine refuses them
# only when the pod starts, or (a parallel size, for which vLLM declares no bound) fails later.
ENGINE_RANGES = {
    "gpu-memory-utilization": Range(0, above=True, most=1),  # CacheConfig: Field(gt=0, le=1)
    # ModelConfig: Field(ge=-1), -1 fitting the longest context memory holds; 0 tokens serve no request.
    "max-model-len": Range(1, auto=-1),
    "max-num-batched-tokens": Range(1),  # SchedulerConfig: Field(ge=1)
    "max-num-seqs": Range(1),  # SchedulerConfig: Field(ge=1)
    # ParallelConfig: plain ints, each a count of groups of at least one rank.
    "tensor-parallel-size": Range(1),
    "data-parallel-size": Range(1),
    "pipeline-parallel-size": Range(1),
}


def _range_problem(written: Any, value: Any, option: str) -> str | None:
    bounds = ENGINE_RANGES.get(option)
    if bounds is None:
        return None
    if isinstance(value, str):  # an option taking text too (max-model-len: "1k", "auto"): vLLM reads "-5" as -5
        try:
            value = int(value.strip())
        except ValueError:
            return None
    if _kind(value) not in ("integer", "number") or bounds.holds(value):
        return None
    return f"{json.dumps(written)} is out of range: {VLLM}'s --{option} must be {bounds}; write a value in that range"


# Only a near miss of a key vllm-ascend reads is refused in additional_config: Motor's own examples carry keys that
# neither vllm-ascend 0.17.0rc1 nor 0.18.0 reads (enable_dsa_cp, enable_flashcomm1, ...; their images' build may).
ADDITIONAL_CONFIG_TYPO = 0.85


def _as_parsed(value: Any, spec: Mapping[str, Any]) -> Any:
    """The value as vLLM's parser gets it: Motor writes str(value), so "128" reaches an int option as 128."""
    if isinstance(value, str) and "string" not in spec["types"]:
        for kind, parse in (("integer", int), ("number", float)):
            if kind in spec["types"]:
                try:
                    return parse(value)
                except ValueError:
                    pass
    return value


def _nearest(key: str, known: list[str], otherwise: str) -> str:
    close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else otherwise


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, Mapping) else type(value).__name__


def _value_problem(value: Any, spec: Mapping[str, Any], reader: str) -> str | None:
    types = spec["types"]
    kind = _kind(value)
    if "any" in types:
        return None
    if kind not in types:
        named = [name for name in types if not (name == "integer" and "number" in types)]  # a number covers both
        expected = " or ".join(_EXPECTED[name] for name in named)
        found = _EXPECTED.get(kind, kind)
        if kind not in ("array", "object"):
            found = f"{json.dumps(value, ensure_ascii=False)} is {found}"
        return f"{found}, but {reader} takes {expected}"
    if "enum" in spec and kind != "null" and value not in spec["enum"]:
        allowed = [repr(choice) for choice in spec["enum"]]
        return f"{value!r} is not allowed; write one of {', '.join(allowed[:-1])} or {allowed[-1]}"
    return None
