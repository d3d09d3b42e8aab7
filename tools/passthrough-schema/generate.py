"""Generate kvpool/settings/passthrough_schema.json: the keys and value types of the sections motor-kvpool passes through.

Motor copies motor_controller_config, motor_coordinator_config, motor_nodemanger_config and an engine section's
health_check_config into its config dataclasses with hasattr/setattr, so an unknown key is silently ignored; an
engine section's engine_config becomes `--key value` arguments of vLLM's `serve` parser
(motor/engine_server/core/vllm/vllm_config.py), and `additional_config` is read key by key by vllm-ascend. This
script reads those schemas from their sources, never importing them:

- Motor: the dataclasses of motor/config/*.py in the Motor checkout (MOTOR_CHECKOUT), nested ones and enums
  included, plus the top-level keys each loader reads beside its fields (`"aigw" in cfg`).
- vLLM: the `serve` parser as make_arg_parser builds it (vllm/entrypoints/openai/cli_args.py: its own arguments,
  FrontendArgs, EngineArgs.add_cli_args and AsyncEngineArgs.add_cli_args), each option typed the way vLLM's
  get_kwargs types it from its config dataclass, read with `ast` from vLLM's source distribution on PyPI.
- vllm-ascend: the keys of `additional_config` that its code reads, from its source distribution.

Usage: generate.py [--check] [--motor-checkout DIR] [--sdist-dir DIR] [--out FILE]
--check compares with the committed file and exits 1 on drift. Exit 2: a source is missing.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import sys
import tarfile
import urllib.request
from pathlib import Path
from typing import Any

PROJECT_DIR = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT_DIR))  # the Motor reader is kvpool's own, which checks a user's Motor checkout too
from kvpool.settings.motor_classes import (  # noqa: E402
    MotorClassesMissing, Package, bases_of, config_sources, fields_of, hints, motor_schema, name_of,
)

OUT = PROJECT_DIR / "kvpool" / "settings" / "passthrough_schema.json"
# vllm-ascend v0.17.0rc1 is built for vLLM v0.17.0 (its docs/source/conf.py, `vllm_version`); it is the newest
# vllm-ascend on PyPI at or below the v0.17.0rc2 the project's layerwise rule names, and the release of Motor's
# example image (mindie-motor-vllm:r0.17.0rc1, examples/deployer/config_tool/vllm_to_motor.py).
VLLM = ("vllm", "0.17.0")
VLLM_ASCEND = ("vllm-ascend", "0.17.0rc1")
DEFAULT_SDIST_DIR = Path(os.environ.get("PASSTHROUGH_SDIST_DIR") or Path.home() / ".cache" / "motor-kvpool" / "sdists")
DEFAULT_MOTOR = Path(os.environ.get("MOTOR_CHECKOUT") or PROJECT_DIR.parent / "shared" / "reference" / "motor-8919e55")
class SourceMissing(Exception):
    pass


# --- fetching the source distributions -------------------------------------------------------------------------


def sdist_name(name: str, version: str) -> str:
    return f"{name.replace('-', '_') if name != 'vllm' else name}-{version}.tar.gz"


def fetch_sdist(name: str, version: str, folder: Path) -> Path:
    """The sdist from the cache folder, else from PyPI's simple index (PEP 691, the index pip reads), its sha256
    checked against the index's. `pip download --no-binary :all:` cannot fetch these two: it builds each sdist's
    metadata first, and both builds need torch (vllm-ascend's also torch-npu) installed."""
    path = folder / sdist_name(name, version)
    if path.exists():
        return path
    request = urllib.request.Request(
        f"https://pypi.org/simple/{name}/", headers={"Accept": "application/vnd.pypi.simple.v1+json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            files = json.load(response)["files"]
        [entry] = [entry for entry in files if entry["filename"] == path.name]
        with urllib.request.urlopen(entry["url"], timeout=600) as response:
            data = response.read()
    except (OSError, ValueError) as error:
        raise SourceMissing(f"{path.name}: not in {folder} and not downloadable ({error})") from error
    if hashlib.sha256(data).hexdigest() != entry["hashes"]["sha256"]:
        raise SourceMissing(f"{path.name}: the download does not match the index's sha256")
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def package_from_sdist(path: Path, top: str) -> Package:
    """The modules below `top` of an sdist, held in memory."""
    sources = {}
    with tarfile.open(path, "r:gz") as archive:
        for member in archive:
            parts = member.name.split("/", 1)
            if member.isfile() and len(parts) == 2 and parts[1].startswith(f"{top}/") and parts[1].endswith(".py"):
                sources[parts[1]] = archive.extractfile(member).read().decode("utf-8")
    return Package(sources)


def motor_part(checkout: Path) -> tuple[dict[str, Any], dict[str, str]]:
    try:
        sources = config_sources(checkout)
        schema = motor_schema(sources)
    except MotorClassesMissing as error:
        raise SourceMissing(f"no Motor checkout at {checkout} (set MOTOR_CHECKOUT): {error}") from None
    return schema, {path: sha256_of(checkout / path) for path in sources}


# --- vLLM ------------------------------------------------------------------------------------------------------------

# vLLM's get_kwargs reads these int fields with human-readable parsers ("32k", "1G"): a string is allowed too.
HUMAN_READABLE_INTS = {"max_model_len", "max_num_batched_tokens", "kv_cache_memory_bytes"}


def vllm_type(package: Package, module: str, field: str, annotation: ast.AST) -> dict[str, Any]:
    """The value an option takes, in get_kwargs' order of precedence (vllm/engine/arg_utils.py _compute_kwargs)."""
    found = list(hints(package, module, annotation))
    kinds = {kind for kind, _ in found}
    nullable = ["null"] if "null" in kinds else []
    literal = next((detail for kind, detail in found if kind == "literal"), None)
    if "dataclass" in kinds:  # a config class: JSON text or its keys (Motor writes a mapping as JSON)
        return {"types": ["object", "string", *nullable]}
    if ("builtin", "boolean") in found:
        return {"types": ["boolean"], "negatable": True}
    if literal is not None:
        if ("builtin", "string") in found:
            return {"types": ["string", *nullable]}
        return {"types": sorted({json_kind(value) for value in literal}) + nullable, "enum": literal}
    collection = next((detail for kind, detail in found if kind == "collection"), None)
    if collection is not None:
        element = sorted({detail for kind, detail in collection if kind == "builtin"}) or ["string"]
        return {"types": ["array", *element, *nullable], "items": element}
    if ("builtin", "integer") in found:
        return {"types": ["integer", *(["string"] if field in HUMAN_READABLE_INTS else []), *nullable]}
    if ("builtin", "number") in found:
        return {"types": ["integer", "number", *nullable]}
    if "mapping" in kinds:
        return {"types": ["object", "string", *nullable]}
    return {"types": ["string", *nullable]}


def json_kind(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number"}.get(type(value), "string")


def keyword_type(keywords: dict[str, ast.AST]) -> dict[str, Any] | None:
    """The value type that explicit add_argument keywords give (action=, type=, nargs=, const=)."""
    action = keywords.get("action")
    if action is not None and (ast.unparse(action).strip("'\"") in ("store_true", "store_false")
                               or "BooleanOptionalAction" in ast.unparse(action)):
        return {"types": ["boolean"], "negatable": "BooleanOptionalAction" in ast.unparse(action)}
    kind = keywords.get("type")
    if kind is None:
        return None
    text = ast.unparse(kind)
    if "json" in text or "dict" in text:
        types = ["object", "string"]
    elif text in ("int", "optional_type(int)"):
        types = ["integer"]
    elif text in ("float", "optional_type(float)"):
        types = ["integer", "number"]
    else:
        types = ["string"]
    const = keywords.get("const")
    if isinstance(const, ast.Constant) and isinstance(const.value, bool):
        types.append("boolean")
    if "nargs" in keywords and ast.unparse(keywords["nargs"]).strip("'\"") in ("+", "*"):
        return {"types": ["array", *types], "items": types}
    return {"types": sorted(set(types))}


class ParserReader:
    """Reads the options a function registers with add_argument, each typed from its config dataclass field."""

    def __init__(self, package: Package):
        self.package = package
        self.options: dict[str, dict[str, Any]] = {}

    def config_field(self, module: str, class_name: str, field: str) -> dict[str, Any] | None:
        found = self.package.lookup(module, class_name)
        if not found or not isinstance(found[1], ast.ClassDef):
            return None
        for owner, node in bases_of(self.package, found[0], found[1]):
            for name, annotation, _ in fields_of(node):
                if name == field:
                    return vllm_type(self.package, owner, name, annotation)
        return None

    def read_function(self, module: str, function: ast.FunctionDef, frontend_class: str | None = None) -> None:
        kwargs_of: dict[str, str] = {}  # local name -> config class (x_kwargs = get_kwargs(XConfig))
        picked: dict[str, tuple[str, str]] = {}  # local name -> (kwargs name, field) (y = x_kwargs["field"])
        overrides: dict[tuple[str, str], dict[str, ast.AST]] = {}  # (kwargs name, field) -> keywords set later
        for node in ast.walk(function):
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
                if isinstance(target, ast.Name) and isinstance(value, ast.Call) and name_of(value.func) == "get_kwargs":
                    argument = value.args[0]
                    kwargs_of[target.id] = frontend_class if name_of(argument) == "cls" else name_of(argument)
                elif isinstance(target, ast.Name) and (pick := self.pick(value)):
                    picked[target.id] = pick
                elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant):
                    if pick := self.pick(target.value):
                        overrides.setdefault(pick, {})[target.slice.value] = value
        for node in ast.walk(function):
            if isinstance(node, ast.Call) and name_of(node.func) == "add_argument":
                self.add(module, node, kwargs_of, picked, overrides)
        if frontend_class:  # FrontendArgs.add_cli_args: every field of the class, `--{field}`
            for field in self.frontend_fields(module, frontend_class):
                typed = overrides.get(("frontend_kwargs", field), {})
                self.options[field.replace("_", "-")] = (
                    keyword_type(typed) or self.config_field(module, frontend_class, field) or {"types": ["any"]}
                )

    def frontend_fields(self, module: str, class_name: str) -> list[str]:
        _, node = self.package.lookup(module, class_name)
        return [name for owner, base in bases_of(self.package, module, node) for name, _, _ in fields_of(base)]

    @staticmethod
    def pick(node: ast.AST) -> tuple[str, str] | None:
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and isinstance(node.slice, ast.Constant):
            return node.value.id, node.slice.value
        return None

    def add(self, module, node: ast.Call, kwargs_of, picked, overrides) -> None:
        flags = [arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
        longs = [flag for flag in flags if flag.startswith("--")]
        if not longs:
            return  # a positional (model_tag) or only the f"--{key}" of FrontendArgs, read by its fields
        keywords = {keyword.arg: keyword.value for keyword in node.keywords if keyword.arg}
        typed = keyword_type(keywords)
        splats = [keyword.value for keyword in node.keywords if keyword.arg is None]
        splats += [value for splat in splats if isinstance(splat, ast.Dict)  # **{**x_kwargs["field"], "default": None}
                   for key, value in zip(splat.keys, splat.values, strict=True) if key is None]
        for splat in splats:
            if pick := self.pick(splat) or picked.get(name_of(splat)):
                kwargs_name, field = pick
                typed = (keyword_type(overrides.get(pick, {})) or typed
                         or self.config_field(module, kwargs_of.get(kwargs_name, ""), field))
        typed = typed or {"types": ["string"]}
        for flag in longs:
            self.options[flag[2:]] = dict(typed)


def vllm_schema(package: Package) -> dict[str, Any]:
    reader = ParserReader(package)
    cli_args = "vllm.entrypoints.openai.cli_args"
    tree = package.tree(cli_args)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    reader.read_function(cli_args, functions["make_arg_parser"])
    _, frontend = package.lookup(cli_args, "BaseFrontendArgs")
    for node in frontend.body:
        if isinstance(node, ast.FunctionDef) and node.name == "_customize_cli_kwargs":
            reader.read_function(cli_args, node, frontend_class="BaseFrontendArgs")
    _, frontend = package.lookup(cli_args, "FrontendArgs")
    for node in frontend.body:
        if isinstance(node, ast.FunctionDef) and node.name == "_customize_cli_kwargs":
            reader.read_function(cli_args, node, frontend_class="FrontendArgs")
    for class_name in ("EngineArgs", "AsyncEngineArgs"):
        module, node = package.lookup("vllm.engine.arg_utils", class_name)
        for method in node.body:
            if isinstance(method, ast.FunctionDef) and method.name == "add_cli_args":
                reader.read_function(module, method)
    options = dict(reader.options)
    for option, typed in reader.options.items():
        if typed.pop("negatable", False):  # argparse.BooleanOptionalAction adds --no-<option>
            options[f"no-{option}"] = {"types": ["boolean"]}
    return dict(sorted(options.items()))


def additional_config_keys(package: Package) -> list[str]:
    """The keys vllm-ascend reads from vLLM's additional_config: `additional_config.get("key", ...)`,
    `.additional_config["key"]`, `.setdefault("key", ...)`, on a name or attribute called additional_config."""
    keys = set()
    for path in package.sources:
        for node in ast.walk(package.tree(path.removesuffix(".py").replace("/", ".").removesuffix(".__init__"))):
            holder, key = None, None
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("get", "setdefault", "pop") and node.args
                    and isinstance(node.args[0], ast.Constant)):
                holder, key = node.func.value, node.args[0].value
            elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
                holder, key = node.value, node.slice.value
            if holder is not None and name_of(holder) == "additional_config" and isinstance(key, str):
                keys.add(key)
    return sorted(keys)


# --- the file ----------------------------------------------------------------------------------------------------------


def generate(checkout: Path, sdist_dir: Path) -> dict[str, Any]:
    motor, motor_hashes = motor_part(checkout)
    vllm_path = fetch_sdist(*VLLM, sdist_dir)
    ascend_path = fetch_sdist(*VLLM_ASCEND, sdist_dir)
    return {
        "generated_by": "tools/passthrough-schema/generate.py",
        "sources": {
            "motor": {"checkout": checkout.name, "files": motor_hashes},
            "vllm": {"version": VLLM[1], "sdist": vllm_path.name, "sha256": sha256_of(vllm_path)},
            "vllm_ascend": {"version": VLLM_ASCEND[1], "sdist": ascend_path.name, "sha256": sha256_of(ascend_path)},
        },
        "motor": motor,
        "vllm_serve_options": vllm_schema(package_from_sdist(vllm_path, "vllm")),
        "vllm_ascend_additional_config": additional_config_keys(package_from_sdist(ascend_path, "vllm_ascend")),
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file; exit 1 on drift")
    parser.add_argument("--motor-checkout", type=Path, default=DEFAULT_MOTOR)
    parser.add_argument("--sdist-dir", type=Path, default=DEFAULT_SDIST_DIR)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    try:
        text = render(generate(args.motor_checkout, args.sdist_dir))
    except SourceMissing as error:
        print(f"generate.py: {error}", file=sys.stderr)
        return 2
    if args.check:
        if args.out.read_text(encoding="utf-8") != text:
            print(f"{args.out} differs from what its sources generate; run tools/passthrough-schema/generate.py",
                  file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
