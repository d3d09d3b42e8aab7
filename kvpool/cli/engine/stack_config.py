"""The configuration a Pulumi program receives for one stack, merged the way the Pulumi CLI merges it.

Sources: `Pulumi.yaml` (`name`, `stackConfigDir`, the project `config:` declarations) and
`<stackConfigDir>/Pulumi.<stack>.yaml`. Rules follow the CLI's `mergeConfig` / `validateStackConfigValues`:
a project key without a namespace belongs to the project; a declared default (or value) applies when the
stack omits the key; a project-namespace key with neither is missing; typed keys are type-checked;
undeclared stack keys are allowed. Values reach the program as strings, structured values as JSON.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kvpool.cli.engine.stack_yaml import (
    GoYamlLoader,
    as_go_json,
    go_json_float,
    json_problems,
)
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import (
    InputFileError,
    check_stack_name,
    compose_yaml,
    read_text,
)
from kvpool.settings.namespace import PROJECT

SECRET_PLACEHOLDER = "[secret]"
"""What a `secure:` value becomes: ciphertext cannot be decrypted offline."""

_DECLARATION_FIELDS = frozenset({"type", "description", "default", "value", "secret", "items"})
_SUPPORTED_TYPES = ("string", "integer", "boolean", "array")


class StackConfigError(KvpoolError):
    """Pulumi.yaml or the stack file is missing, unreadable or inconsistent."""


@dataclass(frozen=True)
class StackConfig:
    project: str
    stack: str
    values: dict[str, str]
    """Full key (`"motor-kvpool:env"`) -> the string the program reads."""
    secret_keys: list[str] = field(default_factory=list)
    project_dir: Path | None = None
    """The folder of Pulumi.yaml."""
    program: Path | None = None
    """The file the CLI's language host runs, from Pulumi.yaml's `main`; None: `<project_dir>/__main__.py`."""

    @property
    def program_dir(self) -> Path | None:
        """The folder the program runs in (the CLI's pwd: `main`'s folder, else the project's): relative settings
        paths (motor_deployer_dir) start there."""
        return self.program.parent if self.program is not None else self.project_dir


@dataclass(frozen=True)
class _Declaration:
    key: str
    """As written in Pulumi.yaml; the CLI's messages quote it this way."""
    full_key: str
    type: str | None = None
    items_type: str | None = None
    secret: bool = False
    fallback: Any = None
    """`default`, else `value` (the CLI prefers the default when both are given; null counts as absent)."""
    has_fallback: bool = False


def project_name(project_dir: Path) -> str:
    """Pulumi.yaml's `name`."""
    project_file = find_project_file(project_dir)
    return _name_of(project_file, _read_project(project_file))


def _read_project(project_file: Path) -> dict[str, Any]:
    """Pulumi.yaml, refused as the CLI refuses it (its name) and where the CLI would not run this Python program
    (its runtime); every reader of the project file reads it here."""
    project, _ = _read_yaml_mapping(project_file)
    _name_of(project_file, project)
    _check_runtime(project_file, project)
    if project.get("main") is not None and not isinstance(project["main"], str):
        raise StackConfigError(f"{project_file}: main: must be text, the program's folder (the Pulumi CLI refuses "
                               f"the file: #/main: expected string or null)")
    _check_field_types(project_file, project)
    return project


# The types pulumi 3.274.1's project schema (sdk/go/common/workspace/project.json) gives the top-level fields the
# offline reader does not check on its own; the CLI refuses the whole file when one is of another type, e.g.
# `stackConfigDir: 5` ("#/stackConfigDir: expected string or null, but got number"), which offline was read as a
# folder named "5".
_PROJECT_FIELD_TYPES = {
    "description": ("string", "null"), "author": ("string", "null"), "website": ("string", "null"),
    "license": ("string", "null"), "stackConfigDir": ("string", "null"), "config": ("object", "string", "null"),
    "backend": ("object", "null"), "options": ("object", "null"), "template": ("object", "null"),
    "plugins": ("object",),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", dict: "object", list: "array"}.get(type(value), type(value).__name__)


def _check_field_types(project_file: Path, project: dict[str, Any]) -> None:
    fields = [(f"#/{key}", project[key], types) for key, types in _PROJECT_FIELD_TYPES.items() if key in project]
    runtime = project.get("runtime")
    if isinstance(runtime, dict) and "options" in runtime:
        fields.append(("#/runtime/options", runtime["options"], ("object",)))
    if isinstance(project.get("backend"), dict) and "url" in project["backend"]:
        fields.append(("#/backend/url", project["backend"]["url"], ("string",)))
    for where, value, types in fields:
        if _json_type(value) not in types:
            raise StackConfigError(f"{project_file}: {where[2:].replace('/', '.')}: is {_json_type(value)}, which the "
                                   f"Pulumi CLI refuses (the file: {where}: expected {' or '.join(types)}, but got "
                                   f"{_json_type(value)})")
    # The mappings whose fields the schema closes (additionalProperties false).
    for key, allowed in (("runtime", ("name", "options")), ("backend", ("url",)), ("options", ("refresh",))):
        extra = sorted(map(str, set(project[key]) - set(allowed))) if isinstance(project.get(key), dict) else []
        if extra:
            raise StackConfigError(f"{project_file}: {key}.{extra[0]}: is no field of {key} (it takes "
                                   f"{', '.join(allowed)}), which the Pulumi CLI refuses (the file: #/{key}: "
                                   f"additionalProperties {extra[0]!r} not allowed)")
    options = project.get("options")
    if isinstance(options, dict) and "refresh" in options and options["refresh"] != "always":
        raise StackConfigError(f"{project_file}: options.refresh: is {options['refresh']!r}, which the Pulumi CLI "
                               f"refuses (the file: #/options/refresh: value must be \"always\")")


def _check_runtime(project_file: Path, project: dict[str, Any]) -> None:
    """The CLI runs the program with the language host `runtime` names (a name, or a mapping with `name`): without
    one it runs no program at all (pulumi's resource/deploy/program_source.go: the preview registers nothing, an
    update deletes what the stack has); with another it runs that language's program, not this one."""
    runtime = project.get("runtime")
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if "runtime" not in project or runtime is None:
        raise StackConfigError(f"{project_file}: runtime: is missing, and without it the Pulumi CLI runs no program "
                               f"(its preview registers nothing, `pulumi up` deletes what the stack has); add "
                               f"`runtime: python`")
    if not isinstance(name, str) or not name:
        raise StackConfigError(f"{project_file}: runtime: names no language (write a name, or a mapping with "
                               f"`name:`); write `runtime: python`")
    if name != "python":
        raise StackConfigError(f"{project_file}: runtime: is {name!r}, but this project is a Python program: the "
                               f"Pulumi CLI would run it with the language host of {name!r} (pulumi-language-{name}), "
                               f"not this program; write `runtime: python`")


def _program(project_file: Path, project: dict[str, Any]) -> Path | None:
    """The file the CLI's Python language host runs for Pulumi.yaml's `main` (pulumi's engine getPwdMain): a folder
    runs its __main__.py in that folder, a file runs itself in its own folder; None without `main`. It must stay
    inside the project: a program outside it is not part of what is reviewed with the project (the CLI runs it)."""
    main = project.get("main")
    if not main:
        return None
    where = f"{project_file}: main: {main!r}"
    root = project_file.parent.resolve()
    if os.path.isabs(main):
        raise StackConfigError(f"{where}: is an absolute path; write the program's folder relative to the project "
                               f"(e.g. `main: src/`)")
    target = Path(os.path.normpath(root / main))
    if not target.resolve().is_relative_to(root):
        raise StackConfigError(f"{where}: names {target.resolve()}, outside the project {root}; the program must be "
                               f"a folder inside the project (e.g. `main: src/`)")
    if not target.exists():
        raise StackConfigError(f"{where}: {target} does not exist (the Pulumi CLI refuses it: project 'main' could "
                               f"not be read); create the folder with the program's __main__.py, or remove `main`")
    return target / "__main__.py" if target.is_dir() else target


# The CLI's project name rule, checked in its order (pulumi's tokens.ValidateProjectName, as pulumi 3.274.1 answers).
_PROJECT_NAME = re.compile(r"[A-Za-z0-9_.-]+")
MAX_PROJECT_NAME = 100


def _name_of(project_file: Path, project: dict[str, Any]) -> str:
    name = project.get("name")
    if not isinstance(name, str) or not name:
        raise StackConfigError(f"{project_file}: 'name' (the project name) is required")
    if len(name.encode("utf-8")) > MAX_PROJECT_NAME:
        raise StackConfigError(f"{project_file}: name: project names are limited to {MAX_PROJECT_NAME} characters")
    if not _PROJECT_NAME.fullmatch(name):
        raise StackConfigError(
            f"{project_file}: name {name!r}: project names may only contain alphanumerics, hyphens, underscores, and "
            f"periods (the Pulumi CLI refuses it)"
        )
    return name


def load_stack_config(project_dir: Path, stack: str) -> StackConfig:
    """Merge Pulumi.yaml and Pulumi.<stack>.yaml into what `pulumi preview --stack <stack>` gives the program."""
    check_stack_name(stack)
    project_file = find_project_file(project_dir)
    project = _read_project(project_file)
    name = _name_of(project_file, project)

    declarations = _parse_declarations(project_file, name, project.get("config") or {})
    stack_file = _stack_file(project_file, project, stack)
    stack_values, secret_keys = _read_stack_values(stack_file, name)
    _refuse_plain_secret_env(stack_file, f"{PROJECT}:secret_env", stack_values, secret_keys)

    missing = sorted(d.key for d in declarations if _is_missing(d, name, stack_values))
    if missing:
        raise StackConfigError(_missing_message(stack, missing))
    for declaration in declarations:
        if declaration.full_key not in stack_values and declaration.has_fallback:
            stack_values[declaration.full_key] = declaration.fallback
    for declaration in declarations:
        _check_declared_type(stack, declaration, stack_values, secret_keys)

    return StackConfig(
        project=name,
        stack=stack,
        values={key: _config_text(stack_values[key]) for key in sorted(stack_values)},
        secret_keys=sorted(secret_keys),
        project_dir=project_file.parent,
        program=_program(project_file, project),
    )


def _read_yaml_mapping(path: Path) -> tuple[dict[str, Any], yaml.MappingNode | None]:
    """The document and its node tree: the tree keeps each scalar's text as written."""
    try:
        document, node = compose_yaml(read_text(path), str(path), GoYamlLoader)
    except InputFileError as error:
        raise StackConfigError(str(error)) from None
    if document is None:
        return {}, None
    if not isinstance(document, dict):
        raise StackConfigError(f"{path}: expected a mapping at the top level, found {type(document).__name__}")
    return document, node


def _parse_declarations(project_file: Path, project_name: str, config: Any) -> list[_Declaration]:
    if not isinstance(config, dict):
        raise StackConfigError(f"{project_file}: 'config' must be a mapping of keys to values or declarations")
    declarations = []
    for raw_key, spec in config.items():
        key = str(raw_key)
        full_key = key if ":" in key else f"{project_name}:{key}"
        where = f"{project_file}: config key '{key}'"
        if not isinstance(spec, dict):  # shorthand `key: value`; null means no value, as in the CLI
            declarations.append(_Declaration(key, full_key, fallback=spec, has_fallback=spec is not None))
            continue
        unknown = sorted(set(spec) - _DECLARATION_FIELDS)
        if unknown:
            raise StackConfigError(
                f"{where}: unknown declaration field(s) {', '.join(unknown)} (allowed: type, description, default, "
                "value, secret, items); an object value must be written under 'value:' or 'default:'"
            )
        type_name = spec.get("type")
        items_type = (spec.get("items") or {}).get("type") if isinstance(spec.get("items"), dict) else None
        if type_name is not None and type_name not in _SUPPORTED_TYPES:
            raise StackConfigError(
                f"{where}: type '{type_name}' is not supported (use {', '.join(_SUPPORTED_TYPES)}); "
                "declare an object without a type"
            )
        if type_name == "array" and items_type not in _SUPPORTED_TYPES:
            raise StackConfigError(f"{where}: type 'array' needs 'items: {{type: ...}}' with one of {_SUPPORTED_TYPES}")
        default, value = spec.get("default"), spec.get("value")
        declarations.append(
            _Declaration(
                key,
                full_key,
                type=type_name,
                items_type=items_type,
                secret=bool(spec.get("secret")),
                fallback=default if default is not None else value,
                has_fallback=default is not None or value is not None,
            )
        )
    return declarations


def stack_config_dir(project_dir: Path) -> Path | None:
    """The folder stack files of the project in `project_dir` are read from (Pulumi.yaml's stackConfigDir); None
    when `project_dir` holds no Pulumi.yaml."""
    project_file = Path(project_dir) / "Pulumi.yaml"
    if not project_file.exists():
        return None
    project = _read_project(project_file)
    return _stack_config_dir(project_file, project)


def stack_names(project_dir: Path) -> list[str]:
    """The stacks that have a stack file in the project's stackConfigDir, sorted."""
    project_file = find_project_file(project_dir)
    project = _read_project(project_file)
    return _stack_names(_stack_config_dir(project_file, project))


def has_stack(project_dir: Path, stack: str) -> bool:
    """Whether the project has a stack file for `stack` (in its stackConfigDir)."""
    project_file = find_project_file(project_dir)
    project = _read_project(project_file)
    return _stack_config_dir(project_file, project).joinpath(f"Pulumi.{check_stack_name(stack)}.yaml").is_file()


def find_project_file(project_dir: Path) -> Path:
    project_file = Path(project_dir) / "Pulumi.yaml"
    # exists(), not is_file(): a FIFO or device there is refused by the reader as not a regular file, not called absent.
    if not project_file.exists():
        raise StackConfigError(f"no Pulumi.yaml in {Path(project_dir).resolve()}: not a Pulumi project; run kvpool in "
                               "the project's folder or name it with --project-dir DIR")
    return project_file


def _stack_config_dir(project_file: Path, project: dict[str, Any]) -> Path:
    # The CLI joins stackConfigDir under the project folder whatever it holds (filepath.Join, then Clean: an
    # absolute path too, and `..` by text), so `/etc` names <project>/etc, never /etc itself.
    return Path(os.path.normpath(f"{project_file.parent}/{project.get('stackConfigDir') or '.'}"))


def _stack_names(config_dir: Path) -> list[str]:
    return sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in config_dir.glob("Pulumi.*.yaml"))


def _stack_file(project_file: Path, project: dict[str, Any], stack: str) -> Path:
    config_dir = _stack_config_dir(project_file, project)
    stack_file = config_dir / f"Pulumi.{stack}.yaml"
    if not stack_file.is_symlink() and not stack_file.exists():  # anything else there: read_text says what it is
        existing = _stack_names(config_dir)
        known = ", ".join(existing) if existing else "none"
        raise StackConfigError(f"no stack file {stack_file} for stack '{stack}' (stacks in {config_dir}: {known})")
    return stack_file


_STACK_TEXT_FIELDS = ("secretsprovider", "encryptedkey", "encryptionsalt")


def _read_stack_values(stack_file: Path, project: str) -> tuple[dict[str, Any], set[str]]:
    """Every value as yaml.v3 reads it (kvpool/cli/engine/stack_yaml.py): a number is a number, also at the top level (the CLI
    hands `0x10` to the program as "16"). A key without a namespace is the project's, as the CLI namespaces it
    (stackConfigNamespacedWithProject)."""
    document, root = _read_yaml_mapping(stack_file)
    for key in _STACK_TEXT_FIELDS:  # Go strings of the CLI's ProjectStack: yaml.v3 refuses a list or mapping there
        if isinstance(document.get(key), (list, dict)):
            shape, tag = ("list", "!!seq") if isinstance(document[key], list) else ("mapping", "!!map")
            raise StackConfigError(f"{stack_file}: {key}: is a {shape}, but the Pulumi CLI reads it as text and refuses "
                                   f"the file (cannot unmarshal {tag} into string)")
    if document.get("environment"):
        raise StackConfigError(f"{stack_file}: 'environment' (Pulumi ESC) cannot be resolved offline")
    config = document.get("config") or {}
    if not isinstance(config, dict):
        raise StackConfigError(f"{stack_file}: 'config' must be a mapping of '<namespace>:<key>' to values")
    values: dict[str, Any] = {}
    secret_keys: set[str] = set()
    problems: list[str] = []
    written = [key for key, _ in _config_value_nodes(root)]
    for key, value_node in _config_value_nodes(root):
        if ":" not in key:
            if f"{project}:{key}" in written:  # the CLI keeps one of the two, in Go's random map order
                raise StackConfigError(f"{stack_file}: config has both {key!r} and {project}:{key}, which the Pulumi "
                                       f"CLI reads as one key and keeps either at random; remove one")
            key = f"{project}:{key}"
        if value_node.tag == "tag:yaml.org,2002:null":  # yaml.v3 leaves a null key's Value empty
            values[key] = ""
            continue
        value, has_secret = _replace_secure_values(GoYamlLoader("").construct_document(value_node))
        problems += [f"{stack_file}: {problem}" for problem in json_problems(value, key)]
        values[key] = value
        if has_secret:
            secret_keys.add(key)
    if problems:
        raise StackConfigError("\n".join(problems))
    return values, secret_keys


def _config_value_nodes(root: yaml.MappingNode | None) -> list[tuple[str, yaml.Node]]:
    """(key, value node) of `config`, with `<<` merge keys merged in as yaml.v3 merges them (a key written beside
    them wins; the first merged mapping wins over later ones)."""
    for key_node, value_node in root.value if root is not None else []:
        if key_node.value == "config" and isinstance(value_node, yaml.MappingNode):
            GoYamlLoader("").flatten_mapping(value_node)
            merged = {str(k.value): v for k, v in value_node.value}  # later pairs (written beside `<<`) win
            return list(merged.items())
    return []


def _refuse_plain_secret_env(stack_file: Path, key: str, values: dict[str, Any], secret_keys: set[str]) -> None:
    """secret_env holds only `secure:` values: a plain one beside them makes the whole key secret for the CLI, so
    nothing downstream can tell it was never encrypted, yet it sits in plain text in the stack file."""
    value = values.get(key)
    if key not in secret_keys or not isinstance(value, dict):
        return
    # Lists and mappings are refused later as not one value (kvpool/settings/from_stack.py).
    plain = sorted(name for name, item in value.items() if item != SECRET_PLACEHOLDER and not isinstance(item, (dict, list)))
    if plain:
        raise StackConfigError("\n".join(
            f"{stack_file}: {key}.{name}: is plain text beside secure values; every secret_env value must be "
            f"encrypted: `pulumi config set --secret --path {key}.{name} VALUE`"
            for name in plain
        ))


def _replace_secure_values(value: Any) -> tuple[Any, bool]:
    """Swap every `{secure: ciphertext}` for the placeholder; say whether there was one (the key is then secret)."""
    if isinstance(value, dict):
        if set(value) == {"secure"} and isinstance(value["secure"], str):
            return SECRET_PLACEHOLDER, True
        replaced = {k: _replace_secure_values(v) for k, v in value.items()}
        return {k: v for k, (v, _) in replaced.items()}, any(s for _, s in replaced.values())
    if isinstance(value, list):
        replaced_items = [_replace_secure_values(v) for v in value]
        return [v for v, _ in replaced_items], any(s for _, s in replaced_items)
    return value, False


def _is_missing(declaration: _Declaration, project_name: str, stack_values: dict[str, Any]) -> bool:
    in_project_namespace = declaration.full_key.split(":", 1)[0] == project_name
    return in_project_namespace and not declaration.has_fallback and declaration.full_key not in stack_values


def _missing_message(stack: str, missing: list[str]) -> str:
    if len(missing) == 1:
        return f"Stack '{stack}' is missing configuration value '{missing[0]}'"
    quoted = [f"'{key}'" for key in missing]
    return f"Stack '{stack}' is missing configuration values {', '.join(quoted[:-1])} and {quoted[-1]}"


def _check_declared_type(stack: str, declaration: _Declaration, values: dict[str, Any], secret_keys: set[str]) -> None:
    if declaration.full_key not in values:
        return
    is_secret = declaration.full_key in secret_keys
    if declaration.secret and not is_secret:
        raise StackConfigError(
            f"Stack '{stack}' with configuration key '{declaration.key}' must be encrypted as it's secret"
        )
    if declaration.type is None or is_secret:  # ciphertext cannot be type-checked offline
        return
    if not _has_type(values[declaration.full_key], declaration.type, declaration.items_type):
        type_name = f"array<{declaration.items_type}>" if declaration.type == "array" else declaration.type
        raise StackConfigError(
            f"Stack '{stack}' with configuration key '{declaration.key}' must be of type '{type_name}' "
            f"(found {_config_text(values[declaration.full_key])!r})"
        )


def _has_type(value: Any, type_name: str, items_type: str | None) -> bool:
    """The CLI checks the text a scalar is handed over as; array items are checked by their parsed type."""
    if type_name == "array":
        return isinstance(value, list) and all(_item_has_type(item, items_type) for item in value)
    if isinstance(value, (dict, list)):
        return False
    text = _config_text(value)
    if type_name == "integer":
        return re.fullmatch(r"[+-]?[0-9]+", text) is not None
    if type_name == "boolean":
        return text in ("true", "false")
    return True  # string: every scalar reaches the program as a string


def _item_has_type(item: Any, items_type: str | None) -> bool:
    if items_type == "integer":
        return isinstance(item, int) and not isinstance(item, bool)
    if items_type == "boolean":
        return isinstance(item, bool)
    return isinstance(item, str)


def _config_text(value: Any) -> str:
    """The string the program receives (the CLI's config.object MarshalString): text as it is, numbers and booleans
    as Go's encoding/json writes them, objects and arrays as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return go_json_float(value)
    if isinstance(value, (dict, list)):
        # Sorted keys: the CLI marshals with Go's encoding/json, which sorts map keys, so a program sees them so; it
        # writes text as UTF-8 but escapes <, >, & and the two Unicode line separators (its HTML-safe default).
        text = json.dumps(as_go_json(value), separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        return text.translate(GO_JSON_ESCAPES)
    return json.dumps(value)


GO_JSON_ESCAPES = str.maketrans({char: f"\\u{ord(char):04x}" for char in "<>&\u2028\u2029"})

