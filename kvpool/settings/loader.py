"""Load `ServiceSettings` and report every problem at once, one line each with its dotted path.

Two loaders give the same model: `load_from_pulumi_config` (the stack's `motor-kvpool:*` keys) and
`load_from_motor_files` (a deploy.py `user_config.json` + `env.json` pair). Unknown keys get the nearest known
key, renamed keys the text of what to write instead; then the consistency rules of `kvpool/policies/rules/` run
(the same functions the policy pack runs).
"""

from __future__ import annotations

import copy
import difflib
import json
import re
import types
import typing
from pathlib import Path
from typing import Annotated, Any, Mapping, Union

from pydantic import BaseModel, ValidationError

from kvpool.errors import SettingsError
from kvpool.internal.local_backend import local_stack_reference
from kvpool.internal.motor_env import unfollowed_message, unfollowed_references
from kvpool.policies import rules
from kvpool.settings.deploy import DEPLOY_PY_NODE_PORTS
from kvpool.settings.motor_classes import MotorClassesMissing
from kvpool.settings.passthrough import (
    BUNDLED,
    MotorSchema,
    check_passthrough_sections,
    deployed_motor,
)
from kvpool.settings.service import PROJECT, USER_CONFIG_VERSION, ServiceSettings
from kvpool.settings.store import STORE_CONFIGS, pool_config_as_store_config
from kvpool.settings.types import key_path

# Every top-level key is a ServiceSettings field (in its order); which of them Motor never reads, the field says.
PULUMI_CONFIG_KEYS = tuple(ServiceSettings.model_fields)

# Older names accepted in place of the current ones (seed 001 and env.json of the kv_cache_pool generation).
ALIASES = {"kv_cache_pool_config": "kv_cache_store_config", "env.motor_kv_cache_pool_env": "env.motor_kv_cache_store_env"}

# How an older name's value reads as the current one's, where the two differ beyond the name.
_OLDER_READINGS = {"kv_cache_pool_config": pool_config_as_store_config}

# Keys that used to exist, with the text of what to write instead (checked before "did you mean").
MIGRATIONS = {
    "kv_cache_store_config.target_job_id": lambda value, project: (
        f"target_job_id is replaced by target_stack, which fails loudly instead of silently creating a new "
        f"store; write `target_stack: {local_stack_reference(project, value)}` (the stack of the service that owns the "
        f"store), or run `python -m kvpool import` to convert the file"
    ),
    "motor_scripts_dir": lambda value, project: (
        "motor_scripts_dir is replaced by motor_deployer_dir: motor-config needs deploy.py's whole file set "
        "(startup/, startup/roles/, probe/, prestop/); point motor_deployer_dir at Motor's examples/deployer folder"
    ),
    "kv_cache_store_config.allowed_sidecar_images": lambda value, project: (
        "allowed_sidecar_images is gone with the store container it admitted: a standalone Mooncake store now runs "
        "in this service's own engine containers, started by Motor's node manager; remove it"
    ),
    "motor_deploy_config.env_path": lambda value, project: (
        "env_path pointed deploy.py at env.json; remove it: env.json's sections now live under the `env` key"
    ),
    **{
        f"env.{section}": lambda value, project, role=role: (
            f"motor-kvpool deploys no {role}, so this section has no reader; remove it"
            + ("" if value else " (it is empty: nothing is lost)")
        )
        for section, role in (
            ("motor_mf_store_env", "mf_store (sglang)"),
            ("motor_engine_union_env", "PD-hybrid (union) engine"),
            ("motor_engine_encode_env", "encode engine"),
        )
    },
    "motor_deploy_config.hybrid_instances_num": lambda value, project: (
        "PD-hybrid (union) instances are not deployed by motor-kvpool, which deploys disaggregated prefill and "
        "decode; use p_instances_num and d_instances_num"
    ),
    "motor_engine_union_config": lambda value, project: (
        "PD-hybrid (union) engines are not deployed by motor-kvpool; configure motor_engine_prefill_config and "
        "motor_engine_decode_config"
    ),
}

_UNION_TAGS = {"pvc", "nfs", "hostpath", *rules.BACKENDS}
# pydantic's names for the members of a plain union (`int | str`): they appear in an error's location but are
# not keys the user wrote.
_MEMBER_TAG = re.compile(r"^(int|str|float|bool|none|bytes|constrained-\w+|[a-z-]+\[.*\])$")


def _apply_aliases(raw: dict[str, Any]) -> list[str]:
    """Rename older keys in place; both names at once is an error, since one would silently win."""
    problems = []
    for old, new in ALIASES.items():
        *parents, old_key = old.split(".")
        new_key = new.split(".")[-1]
        holder = raw
        for parent in parents:
            holder = holder.get(parent) if isinstance(holder, dict) else None
        if not isinstance(holder, dict) or old_key not in holder:
            continue
        value = holder.pop(old_key)
        if new_key in holder:
            problems.append(f"{old} and {new} are both set: {old} is the older name of {new}; keep only {new}")
        else:
            holder[new_key] = _OLDER_READINGS.get(old, lambda kept: kept)(value)
    return problems


def _format_loc(loc: tuple[Any, ...]) -> str:
    path = ""
    for element in loc:
        if isinstance(element, int):
            path = f"{path}[{element}]"
        elif not (element in _UNION_TAGS or element == "[key]" or _MEMBER_TAG.fullmatch(str(element))):
            path = key_path(path, element)
    return path


def _unwrap(annotation: Any) -> list[Any]:
    """The model classes an annotation can hold (through Optional, Annotated, list, dict and unions)."""
    origin = typing.get_origin(annotation)
    if origin is Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType, list, dict):
        return [found for arg in typing.get_args(annotation) for found in _unwrap(arg)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return []


def _known_keys(loc: tuple[Any, ...]) -> list[str]:
    """Field names of the section that holds `loc`'s last key (all union members, e.g. every backend)."""
    candidates = _section_models(loc)
    tag = next((element for element in reversed(loc[:-1]) if element in _UNION_TAGS), None)
    return sorted({name for model in candidates for name in model.model_fields if tag is None or _has_tag(model, tag)})


def _section_models(loc: tuple[Any, ...]) -> list[type[BaseModel]]:
    """The models the section holding `loc`'s last key can be (every union member)."""
    candidates: list[type[BaseModel]] = [ServiceSettings]
    for element in loc[:-1]:
        if isinstance(element, int) or element in _UNION_TAGS:
            continue
        nested = [
            model
            for candidate in candidates
            if element in candidate.model_fields
            for model in _unwrap(candidate.model_fields[element].annotation)
        ]
        if not nested:
            return []
        candidates = nested
    return candidates


def _example(loc: tuple[Any, ...], kind: type) -> Any:
    """A value to suggest for the field at `loc` that passes every rule and policy: the rules' own value where
    they ask for more than the type, else the field's default, else a plain one."""
    path = _format_loc(loc)
    if path in _RULE_EXAMPLES:
        return _RULE_EXAMPLES[path]
    defaults = [
        model.model_fields[loc[-1]].default for model in _section_models(loc) if loc[-1] in model.model_fields
    ]
    return next((value for value in defaults if type(value) is kind), _PLAIN_EXAMPLES[kind])


# Fields without a default to show: values the advisory policy accepts (kvpool-configure-sustainable-mooncake-
# eviction), and deploy.py's NodePorts.
_RULE_EXAMPLES = {
    "kv_cache_store_config.eviction_high_watermark_ratio": rules.SUSTAINABLE_HIGH_WATERMARK,
    "kv_cache_store_config.eviction_ratio": rules.SUSTAINABLE_EVICTION_RATIO,
    **{f"motor_deploy_config.{key}": port for key, port in DEPLOY_PY_NODE_PORTS.items()},
}
_PLAIN_EXAMPLES = {int: 2, float: 0.5}


def _has_tag(model: type[BaseModel], tag: str) -> bool:
    field = model.model_fields.get("backend") or model.model_fields.get("type")
    return field is None or tag in typing.get_args(field.annotation)


def _other_backends_with(key: str) -> list[str]:
    return [
        model.model_fields["backend"].annotation.__args__[0]
        for model in STORE_CONFIGS
        if key in model.model_fields
    ]


def _describe(error: Mapping[str, Any], project: str) -> str:
    loc = tuple(error["loc"])
    path = _format_loc(loc)
    kind = error["type"]
    if kind == "extra_forbidden":
        plain = ".".join(str(e) for e in loc if not isinstance(e, int) and e not in _UNION_TAGS)
        if plain in MIGRATIONS:
            return f"{path}: {MIGRATIONS[plain](error.get('input'), project)}"
        key = str(loc[-1])
        known = _known_keys(loc)
        hint = ""
        backends = _other_backends_with(key) if loc[0] == "kv_cache_store_config" else []
        backend = next((e for e in loc if e in rules.BACKENDS), None)
        if backends and backend not in backends:
            hint = f"; it is an option of backend {' / '.join(backends)}: set backend accordingly or remove it"
        else:
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]!r}?" if close else f"; known keys here: {', '.join(known)}"
        return f"{path}: unknown key{hint}"
    if kind == "missing":
        return f"{path}: required; add it"
    if kind in ("union_tag_invalid", "literal_error") and path.endswith("backend") and error.get("input") == "ucm":
        return f"{path}: {rules.UCM_BACKEND_MESSAGE}"
    if kind == "union_tag_invalid":
        return f"{path}: {error['ctx']['tag']!r} is not one of {error['ctx']['expected_tags']}"
    if kind == "literal_error":
        return f"{path}: {error.get('input')!r} is not allowed; write one of {error['ctx']['expected']}"
    message = error["msg"].removeprefix("Value error, ")
    if kind == "string_pattern_mismatch":
        message = _pattern_message(path, error.get("input"), project)
    if kind in _TYPE_MESSAGES:
        message = _TYPE_MESSAGES[kind](error.get("input"), loc)
    if kind == "string_too_long":  # not the text itself: it may be a megabyte
        message = (f"is {len(error['input'])} characters long, more than the {error['ctx']['max_length']} this field "
                   f"takes; shorten it")
    if kind in _BOUND_MESSAGES:
        bound_key, text = _BOUND_MESSAGES[kind]
        message = f"{_written(error.get('input'))} " + text.format(bound=error["ctx"][bound_key])
    # A section's validator names the key it is about first (`port: ...`): that key belongs to the path.
    field, separator, rest = message.partition(": ")
    if path and separator and _DOTTED_KEY.fullmatch(field) and not field[0].isupper():
        return f"{path}.{field}: {rest}"
    return f"{path}: {message}" if path else message


# Strict numbers and booleans: the value is taken as written, never coerced (`true` as 1, "8080" as a port, "yes"
# as true), so the message says what to write instead.
def _written(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if isinstance(value, (bool, int, float, str)) else type(value).__name__


_TYPE_MESSAGES = {
    "int_type": lambda value, loc: (
        f"{_written(value)} is {'a decimal number' if isinstance(value, float) else 'not a whole number'}; write a "
        f"whole number without quotes, e.g. {_example(loc, int)}"
    ),
    # `pulumi config set --path` stores a decimal as a string unless told `--type float` (it reads integers itself).
    "float_type": lambda value, loc: (
        f"{_written(value)} is not a number; write one without quotes, e.g. {_example(loc, float)}"
        + (" (`pulumi config set --path` needs `--type float`)" if isinstance(value, str) else "")
    ),
    "bool_type": lambda value, loc: f"{_written(value)} is not a boolean; write true or false",
}
# A number out of its field's range: the value as written, the bound, and what to write.
_BOUND_MESSAGES = {
    "greater_than_equal": ("ge", "is below {bound}, the least this field takes; write {bound} or more"),
    "greater_than": ("gt", "must be above {bound}; write a number greater than {bound}"),
    "less_than_equal": ("le", "is above {bound}, the most this field takes; write {bound} or less"),
    "less_than": ("lt", "must be below {bound}; write a number less than {bound}"),
}
_DOTTED_KEY = re.compile(r"^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*)*$")


def _pattern_message(path: str, value: Any, project: str) -> str:
    if isinstance(value, str) and _PATH_BREAKER.search(value):
        return f"{value!a} holds a tab, line break or other control character; a path is one line: remove it"
    if path.endswith(("image_name", "image")):
        return f"{value!r} is not an image reference; write the Motor image, e.g. registry.local/mindie-motor-vllm:tag"
    if path.endswith("dram_size"):  # Motor's node manager reads whole GB only (LocalService._parse_dram_size_gb)
        return f"{value!r} is not a whole number of GB; write e.g. 40GB"
    if path.endswith(("size", ".memory")):
        return f"{value!r} needs a unit, e.g. 4Gi or 200Gi"
    if path.endswith(".cpu"):
        return f"{value!r} is not a CPU amount; write e.g. 4 or 500m"
    if path.endswith("scheduler_name"):
        return (f"{value!r} is not a scheduler name (a pod's schedulerName is a DNS subdomain): lower-case letters, "
                "digits, '-' and '.', starting and ending with a letter or digit, e.g. volcano")
    if path.endswith(("storage_class_name", "claim_name")):
        return (f"{value!r} is not a Kubernetes object name: lower-case letters, digits, '-' and '.', starting and "
                "ending with a letter or digit")
    if path.endswith("target_stack"):
        if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.-]+", value):  # a stack's short name
            return (f"{value!r} is a stack's short name; a stack reference names its organization and project: "
                    f"write {local_stack_reference(project, value)} for this project's stack {value} on the local "
                    f"backend (or <organization>/{project}/{value} on Pulumi Cloud)")
        return f"{value!r} is not a stack reference; write <organization>/<project>/<stack>"
    if isinstance(value, str) and path.endswith(("_path", ".path")) and not value.startswith("/"):
        return f"{value!r} is not an absolute path; write one starting with /"
    if path == "cluster":
        return (f"{value!r} is not a cluster name: one line of letters, digits and -_.:@/, starting with a letter or "
                "digit, e.g. your kubeconfig context's name")
    if path.startswith("env."):
        return f"{value!r} is not an environment variable name (letters, digits, _; not starting with a digit)"
    return f"{value!r} has the wrong form; see the field's description in kvpool/settings/service.py"


# Sections where an empty mapping means "not set": deploy.py enables a store only for a non-empty
# kv_cache_store_config, and the CLI hands Pulumi.yaml's `default: {}` for every stack that omits a key.
_EMPTY_MEANS_ABSENT = ("kv_cache_store_config", "kv_cache_pool_config", "motor_nodemanger_config", "env",
                      "kv_conductor_config", "rollout", "kv_pool_sizing")


_PATH_BREAKER = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# C0 controls but tab and newline (multi-line text such as a chat template passes through), DEL and C1 controls; and
# lone surrogates (a JSON or YAML "\\ud800" escape), which are no character: no file the preview writes can hold one.
# Bidirectional controls (Unicode's Bidi_Control: ALM, LRM, RLM, the embeddings, overrides and isolates) reorder
# what a reviewer sees of a name in a diff or a terminal ("Trojan Source"), as the others hide it.
_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# Zero-width characters (ZERO WIDTH SPACE, NON-JOINER, JOINER, WORD JOINER, and U+FEFF, the byte order mark or ZERO
# WIDTH NO-BREAK SPACE) show as nothing: `qwen\u200b3` reads as `qwen3` in a diff, a terminal and a review, yet is
# another name to every program that compares it.
_ZERO_WIDTH = "\u200b-\u200d\u2060\ufeff"
_CONTROL_CHARACTER = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI_CONTROLS}{_ZERO_WIDTH}]")


def _which(character: str) -> str:
    kind = ("lone surrogate" if "\ud800" <= character <= "\udfff"
            else "bidirectional control" if re.fullmatch(f"[{_BIDI_CONTROLS}]", character)
            else "zero-width character" if re.fullmatch(f"[{_ZERO_WIDTH}]", character) else "control character")
    return f"the {kind} {character!a}"


def _control_characters(raw: Mapping[str, Any]) -> list[str]:
    """Every key and text value holding a control character (NUL, ESC, CR, ...): a NUL ends a C string inside
    Motor's scripts and the container runtime (which refuses it in env), and the others hide what a name, path or
    label says. Walked without recursion, so any depth the readers let through is fine."""
    problems = []
    pending: list[tuple[tuple[Any, ...], Any]] = [((), raw)]
    while pending:
        loc, value = pending.pop()
        if isinstance(value, Mapping):
            for key, child in value.items():
                if isinstance(key, str) and (found := _CONTROL_CHARACTER.search(key)):
                    problems.append(f"{_format_loc((*loc, key))}: the key holds {_which(found.group())}; remove it")
                pending.append(((*loc, key), child))
        elif isinstance(value, list):
            pending.extend(((*loc, index), child) for index, child in enumerate(value))
        elif isinstance(value, str) and (found := _CONTROL_CHARACTER.search(value)):
            problems.append(f"{_format_loc(loc)}: holds {_which(found.group())} (at offset {found.start()}); names, "
                            "paths, labels and values take none: remove it")
    return sorted(problems)


def _described(details: list[Mapping[str, Any]], project: str) -> list[str]:
    """The model's refusals in words; a section written where a value goes is said once, not once per type the
    value may have."""
    refused_types: dict[str, list[tuple[Any, ...]]] = {}
    for d in details:
        if isinstance(d.get("input"), (dict, list)) and d["type"] in _TYPE_MESSAGES:
            refused_types.setdefault(_format_loc(tuple(d["loc"])), []).append(tuple(d["loc"]))
    unions = {path for path, locs in refused_types.items() if len(locs) > 1}  # every scalar type refused it
    lines = []
    for d in details:
        path = _format_loc(tuple(d["loc"]))
        if path not in unions:
            lines.append(_describe(d, project))
        elif refused_types[path][0] == tuple(d["loc"]):
            lines.append(f"{path}: {_section_where_a_value_goes(tuple(d['loc']), d['input'])}")
    return lines


def _section_where_a_value_goes(loc: tuple[Any, ...], value: dict | list) -> str:
    said = f"is a {'section' if isinstance(value, dict) else 'list'}, but a value (text, a number or true/false) goes here"
    keys = tuple(e for e in loc if not (e in _UNION_TAGS or e == "[key]" or _MEMBER_TAG.fullmatch(str(e))))
    holders = _section_models(keys[:-1]) if len(keys) > 1 else []
    if any(keys[-1] in model.model_fields for model in holders):
        return (f"{said}; {keys[-1]} is a section of {_format_loc(keys[:-2]) or 'config'}, indented one level too "
                "deep: indent it one level less")
    return said


def _one_line_per_field(lines: list[str]) -> list[str]:
    """A value that fits no member of a union fails once per member: one line per field, the reasons joined."""
    merged: dict[str, list[str]] = {}
    for line in lines:
        path, separator, reason = line.partition(": ")
        key = path if separator and " " not in path else line
        merged.setdefault(key, []).append(reason if key == path else "")
    return [key if reasons == [""] else f"{key}: {'; or '.join(reasons)}" for key, reasons in merged.items()]


# Errors of one field's value: the field can be left out to check the rest (its default takes its place).
_FIELD_VALUE_ERRORS = {"extra_forbidden", "literal_error", "union_tag_invalid", "string_pattern_mismatch",
                       "greater_than", "greater_than_equal", "less_than", "less_than_equal", "string_too_long",
                       *_TYPE_MESSAGES}


def _validate(
    raw: Mapping[str, Any], source: str, stack: str, project: str, problems: list[str] | None = None,
    project_dir: Path | None = None,
) -> ServiceSettings:
    """Every problem of the file in one report: the model's, then, with the fields the model refused left out,
    the pass-through sections' and the rules' (none about a field left out: it was already reported)."""
    data = {key: value for key, value in raw.items() if not (key in _EMPTY_MEANS_ABSENT and value == {})}
    if isinstance(data.get("env"), Mapping):
        data["env"] = dict(data["env"])
    problems = [*(problems or []), *_apply_aliases(data), *_control_characters(data)]
    settings, left_out = _model(data, stack, project, problems)
    motor: MotorSchema | None = BUNDLED
    deployer_dir = data.get("motor_deployer_dir")
    if isinstance(deployer_dir, str) and "motor_deployer_dir" not in left_out:
        try:
            motor = deployed_motor(deployer_dir, project_dir or Path.cwd())
        except MotorClassesMissing as error:
            problems.append(str(error))
            motor = None  # another Motor's classes would refuse the keys of the one deployed
    if settings is None:  # a refusal no default can stand in for: what holds on the file as written is still checked
        problems += _unreported(check_passthrough_sections(data, motor), problems)
        problems += _unreported([str(finding) for finding in rules.check_instance_shape(data)], problems)
        raise SettingsError(problems, source)
    hybrid = {side: getattr(settings, rules.engine_section(side)).hybrid_attention for side in rules.SIDES}
    owns_store = settings.kv_cache_store_config is None or settings.kv_cache_store_config.target_stack is None
    user_config, env_sections = settings.user_config(), settings.env_sections()
    passthrough = check_passthrough_sections(user_config, motor)
    findings = rules.check_service(
        user_config, env_sections, hybrid, owns_store, settings.kv_pool_sizing.as_rule_input(),
        engine_resources=settings.pods.engine_resources(),
    )
    if motor is not None:
        findings += rules.check_standalone_store_motor(user_config.get("kv_cache_store_config") or {},
                                                       motor.store_services, motor.name)
    for section, values in env_sections.items():
        findings += rules.check_plaintext_secrets(values, f"env.{section}")
    findings += [rules.Finding(f"env.{section}.{variable}", unfollowed_message(name, settings.namespace))
                 for section, variable, name in unfollowed_references(env_sections)]
    findings += rules.check_plaintext_config_secrets(user_config)
    findings = [finding for finding in findings if not _under(finding.path, left_out)]
    # A field a rule speaks about gets the rule's words only (one line per field).
    passthrough = [problem for problem in passthrough if problem.partition(": ")[0] not in {f.path for f in findings}]
    problems += _unreported(passthrough, problems) + [str(finding) for finding in findings]
    if problems:
        fixes = {finding.path: finding.example for finding in findings if finding.example is not None}
        raise SettingsError(problems, source, fixes)
    return settings


def _model(
    data: dict[str, Any], stack: str, project: str, problems: list[str]
) -> tuple[ServiceSettings | None, list[str]]:
    """The model of `data`; when it refuses fields' values, their problems join `problems` and the model is made
    again without those fields (the paths left out come back). None when that is not enough."""
    context = {"stack": stack, "project": project}
    try:
        return ServiceSettings.model_validate(data, context=context), []
    except ValidationError as error:
        details = error.errors()
    # A field already reported (a control character in it) is said once.
    problems += _unreported(_one_line_per_field(_described(details, project)), problems)
    if any(detail["type"] not in _FIELD_VALUE_ERRORS for detail in details):
        return None, []
    pruned = copy.deepcopy(data)
    for detail in details:
        _drop(pruned, detail["loc"])
    try:
        return ServiceSettings.model_validate(pruned, context=context), [_format_loc(d["loc"]) for d in details]
    except ValidationError:
        return None, []


def _drop(data: Any, loc: tuple[Any, ...]) -> None:
    """Remove the value at `loc` from the raw data, skipping the union members' tags pydantic adds to a location."""
    *parents, last = [element for element in loc if element not in _UNION_TAGS and element != "[key]"]
    holder = data
    for element in parents:
        if isinstance(holder, dict) and element in holder or isinstance(holder, list) and isinstance(element, int):
            holder = holder[element]
    if isinstance(holder, dict):
        holder.pop(last, None)


def _under(path: str, prefixes: list[str]) -> bool:
    return any(path == prefix or path.startswith((f"{prefix}.", f"{prefix}[")) for prefix in prefixes)


def _unreported(lines: list[str], reported: list[str]) -> list[str]:
    paths = {line.partition(": ")[0] for line in reported}
    return [line for line in lines if line.partition(": ")[0] not in paths]


def _sections_with_key(key: str) -> list[str]:
    """The configuration sections whose settings model has a field `key` (any backend's, for the store)."""
    return [section for section, field in ServiceSettings.model_fields.items()
            if any(key in model.model_fields for model in _unwrap(field.annotation))]


def load_from_pulumi_config(
    values: Mapping[str, Any], stack: str, source: str | None = None, project: str = PROJECT,
    project_dir: Path | None = None,
) -> ServiceSettings:
    """`values`: the stack's keys of the motor-kvpool namespace, without the prefix, as parsed objects, of stack
    `stack` of project `project` (whose other stacks target_stack names) in `project_dir` (None: the working folder,
    which is the project's inside the program, kvpool/program/__init__.py)."""
    unknown = [key for key in values if key not in PULUMI_CONFIG_KEYS and key not in ALIASES]
    problems = []
    for key in unknown:
        if key in MIGRATIONS:
            problems.append(f"{PROJECT}:{key}: {MIGRATIONS[key](values[key], project)}")
            continue
        homes = _sections_with_key(key)
        close = difflib.get_close_matches(key, [*PULUMI_CONFIG_KEYS, *ALIASES], n=1, cutoff=0.6)
        if homes:
            hint = (f"; {key} is a key of {' and '.join(homes)}: it is indented too little, so YAML reads it as a "
                    f"configuration key of its own; indent it under its section")
        elif close:
            hint = f"; did you mean {PROJECT}:{close[0]}?"
        else:
            hint = f"; known keys: {', '.join(PULUMI_CONFIG_KEYS)}"
        problems.append(f"{PROJECT}:{key}: unknown configuration key{hint}")
    source = source or f"stack {stack!r}"
    known = {key: value for key, value in values.items() if key not in unknown}
    return _validate(known, source, stack, project, problems, project_dir)


def load_from_motor_files(
    user_config: Mapping[str, Any], env_config: Mapping[str, Any], stack: str, source: str = "user_config.json",
    project: str = PROJECT,
) -> ServiceSettings:
    """A deploy.py pair as motor-kvpool accepts it (convert older files first with `python -m kvpool import`)."""
    problems = []
    raw = {key: value for key, value in user_config.items() if key != "version"}
    if user_config.get("version", USER_CONFIG_VERSION) != USER_CONFIG_VERSION:
        problems.append(f"version: {user_config['version']!r} is not supported; motor-kvpool reads {USER_CONFIG_VERSION}")
    env = {key: value for key, value in env_config.items() if key != "version"}
    if env:
        raw["env"] = env
    if problems:
        raise SettingsError(problems, source)
    return _validate(raw, source, stack, project)
