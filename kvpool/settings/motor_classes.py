"""Motor's config classes read statically: the keys and value types its loaders copy from user_config.json.

Motor copies a section into its config dataclass with hasattr/setattr (motor/config/*.py), so what a section may hold
is the dataclass's fields, nested dataclasses and enums included. The classes are parsed with `ast`, never imported:
a Motor checkout's code does not run at preview or deploy time. tools/passthrough-schema/generate.py writes the
bundled schema (passthrough_schema.json) with these functions; kvpool/settings/passthrough.py derives one from the
checkout motor_deployer_dir names.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CONFIG_DIR = "motor/config"
# user_config.json section -> Motor's dataclass that receives it.
MOTOR_SECTIONS = {
    "motor_controller_config": ("motor/config/controller.py", "ControllerConfig"),
    "motor_coordinator_config": ("motor/config/coordinator.py", "CoordinatorConfig"),
    "motor_nodemanger_config": ("motor/config/node_manager.py", "NodeManagerConfig"),
    "health_check_config": ("motor/config/endpoint.py", "HealthCheckConfig"),
}
# Motor 8919e55 has 13 files of at most 40 kB there; the bounds keep a wrong folder from being read whole.
MAX_CONFIG_FILES = 64
MAX_CONFIG_FILE_BYTES = 1_000_000


class MotorClassesMissing(Exception):
    """The folder holds no Motor config classes the sections can be checked against."""


class Package:
    """The Python modules of one package, parsed on demand (from a folder or an sdist held in memory)."""

    def __init__(self, sources: dict[str, str]):
        self.sources = sources  # path relative to the package's root folder -> text
        self.trees: dict[str, ast.Module] = {}

    def file_of(self, module: str) -> str | None:
        base = module.replace(".", "/")
        return next((path for path in (f"{base}.py", f"{base}/__init__.py") if path in self.sources), None)

    def tree(self, module: str) -> ast.Module | None:
        path = self.file_of(module)
        if path is None:
            return None
        if path not in self.trees:
            self.trees[path] = ast.parse(self.sources[path], filename=path)
        return self.trees[path]

    def lookup(self, module: str, name: str, depth: int = 0) -> tuple[str, ast.AST] | None:
        """(module, definition) of `name` as seen from `module`: a class, an alias assignment, through imports."""
        tree = self.tree(module)
        if tree is None or depth > 8:
            return None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return module, node
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return module, node.value
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
                return (module, node.value) if node.value is not None else None
            if isinstance(node, getattr(ast, "TypeAlias", ())) and node.name.id == name:  # Python 3.12+
                return module, node.value
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        source = resolve_relative(module, node, self.file_of(module) or "")
                        return self.lookup(source, alias.name, depth + 1)
        return None


def resolve_relative(module: str, node: ast.ImportFrom, path: str) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.endswith("__init__.py") else module.split(".")[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join([*package, *([node.module] if node.module else [])])


# --- annotations -> value types -----------------------------------------------------------------------------------

BUILTIN = {"int": "integer", "float": "number", "bool": "boolean", "str": "string", "bytes": "string"}
COLLECTIONS = {"list", "tuple", "set", "frozenset", "Sequence", "Iterable", "Collection"}
MAPPINGS = {"dict", "Mapping", "MutableMapping", "OrderedDict"}
WRAPPERS = {"Annotated", "SkipValidation", "ClassVar", "InitVar", "Final"}


def name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def hints(package: Package, module: str, node: ast.AST | None, depth: int = 0) -> Iterator[tuple[str, Any]]:
    """The members of an annotation, flattened through unions, Optional, Annotated and aliases, as
    (kind, detail): ("null", None), ("builtin", "integer"), ("literal", values), ("collection", elements),
    ("mapping", None), ("dataclass", (module, name)), ("enum", values), ("other", name), ("any", None)."""
    if node is None or depth > 12:
        yield "any", None
        return
    if isinstance(node, ast.Constant) and node.value is None:
        yield "null", None
        return
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a forward reference
        yield from hints(package, module, ast.parse(node.value, mode="eval").body, depth + 1)
        return
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        yield from hints(package, module, node.left, depth + 1)
        yield from hints(package, module, node.right, depth + 1)
        return
    if isinstance(node, ast.Subscript):
        base = name_of(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if base == "Optional":
            yield from hints(package, module, args[0], depth + 1)
            yield "null", None
        elif base == "Union":
            for arg in args:
                yield from hints(package, module, arg, depth + 1)
        elif base in WRAPPERS:
            yield from hints(package, module, args[0], depth + 1)
        elif base == "Literal":
            values = []
            for arg in args:  # Literal["auto", RunnerType]: a nested alias adds its values
                values += [arg.value] if isinstance(arg, ast.Constant) else [
                    value for kind, detail in hints(package, module, arg, depth + 1) if kind == "literal"
                    for value in detail
                ]
            yield "literal", values
        elif base in COLLECTIONS:
            elements = [kind for arg in args if not (isinstance(arg, ast.Constant) and arg.value is Ellipsis)
                        for kind in hints(package, module, arg, depth + 1)]
            yield "collection", elements
        elif base in MAPPINGS:
            yield "mapping", None
        elif base == "type":
            yield "other", "type"
        else:
            yield from hints(package, module, node.value, depth + 1)
        return
    name = name_of(node)
    if name in BUILTIN:
        yield "builtin", BUILTIN[name]
    elif name in ("Any", "object"):
        yield "any", None
    elif name in COLLECTIONS:
        yield "collection", []
    elif name in MAPPINGS:
        yield "mapping", None
    elif name == "None":
        yield "null", None
    elif name is not None:
        found = package.lookup(module, name) if isinstance(node, ast.Name) else None
        if found is None:
            yield "other", name
        elif isinstance(found[1], ast.ClassDef):
            yield class_kind(found[0], found[1])
        else:
            yield from hints(package, found[0], found[1], depth + 1)
    else:
        yield "any", None


def class_kind(module: str, node: ast.ClassDef) -> tuple[str, Any]:
    bases = {name_of(base) for base in node.bases}
    if bases & {"Enum", "IntEnum", "StrEnum"}:
        values = [
            statement.value.value for statement in node.body
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant)
        ]
        return "enum", values
    decorators = {name_of(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
    if decorators & {"dataclass", "config"} or "BaseModel" in bases:
        return "dataclass", (module, node.name)
    return "other", node.name


def fields_of(node: ast.ClassDef) -> Iterator[tuple[str, ast.AST, ast.AST | None]]:
    """(name, annotation, default) of a dataclass's init fields."""
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        default = statement.value
        init_false = isinstance(default, ast.Call) and name_of(default.func) == "field" and any(
            keyword.arg == "init" and isinstance(keyword.value, ast.Constant) and keyword.value.value is False
            for keyword in default.keywords
        )
        if not init_false and name_of(statement.annotation) != "ClassVar" and not statement.target.id.startswith("_"):
            yield statement.target.id, statement.annotation, default


def bases_of(package: Package, module: str, node: ast.ClassDef) -> Iterator[tuple[str, ast.ClassDef]]:
    """The class and its base classes, bases first (their fields come first in a dataclass)."""
    for base in node.bases:
        found = package.lookup(module, name_of(base) or "") if isinstance(base, ast.Name) else None
        if found and isinstance(found[1], ast.ClassDef):
            yield from bases_of(package, found[0], found[1])
    yield module, node


# --- Motor ---------------------------------------------------------------------------------------------------------


def motor_type(package: Package, module: str, annotation: ast.AST, classes: dict[str, Any]) -> dict[str, Any]:
    types: list[str] = []
    result: dict[str, Any] = {}
    for kind, detail in hints(package, module, annotation):
        if kind == "builtin":
            types.append(detail)
        elif kind == "null":
            types.append("null")
        elif kind == "collection":
            types.append("array")
        elif kind == "mapping":
            types.append("object")
        elif kind == "enum":
            types.append("string")
            result["enum"] = detail
        elif kind == "dataclass":
            types.append("object")
            result["class"] = motor_class(package, *detail, classes)
        else:
            return {"types": ["any"]}
    if "number" in types:
        types.append("integer")
    result["types"] = sorted(set(types))
    return result


def motor_class(package: Package, module: str, name: str, classes: dict[str, Any]) -> str:
    key = f"{module.replace('.', '/')}.py:{name}"
    if key in classes:
        return key
    classes[key] = None  # a placeholder against recursion
    found = package.lookup(module, name)
    if not (found and isinstance(found[1], ast.ClassDef)):
        raise MotorClassesMissing(f"{key} is not defined there")
    fields = {
        field: motor_type(package, owner, annotation, classes)
        for owner, node in bases_of(package, module, found[1])
        for field, annotation, _ in fields_of(node)
    }
    classes[key] = {"fields": dict(sorted(fields.items()))}
    return key


def keys_read_beside_fields(node: ast.ClassDef) -> list[str]:
    """Top-level keys a loader reads although no field holds them (`if "aigw" in cfg:`)."""
    return sorted({
        compare.left.value
        for compare in ast.walk(node)
        if isinstance(compare, ast.Compare) and isinstance(compare.left, ast.Constant)
        and isinstance(compare.left.value, str) and isinstance(compare.ops[0], ast.In)
        and isinstance(compare.comparators[0], ast.Name) and compare.comparators[0].id == "cfg"
    })


def config_sources(checkout: Path) -> dict[str, str]:
    """motor/config/*.py of `checkout`, by path relative to it."""
    config_dir = checkout / CONFIG_DIR
    if not config_dir.is_dir():
        raise MotorClassesMissing(f"{config_dir} is not a folder")
    files = sorted(config_dir.glob("*.py"))[: MAX_CONFIG_FILES + 1]
    if len(files) > MAX_CONFIG_FILES:
        raise MotorClassesMissing(f"{config_dir} holds more than {MAX_CONFIG_FILES} .py files")
    sources = {}
    for path in files:
        if not path.is_file() or path.stat().st_size > MAX_CONFIG_FILE_BYTES:
            raise MotorClassesMissing(f"{path} is not a file of at most {MAX_CONFIG_FILE_BYTES} bytes")
        try:
            sources[f"{CONFIG_DIR}/{path.name}"] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise MotorClassesMissing(f"{path} is unreadable ({error.__class__.__name__})") from None
    return sources


REGISTRY = "motor/node_manager/core/services/registry.py"


def store_services(checkout: Path) -> frozenset[str]:
    """The KV store backends whose service the checkout's node manager can start: the keys of the module map in its
    service registry (`_MODULE_MAP` in Motor 8919e55, `_DEFAULT_MODULE_MAP` later), read with `ast`. No registry (a
    Motor before it): none."""
    path = checkout / REGISTRY
    if not path.is_file():
        return frozenset()
    if path.stat().st_size > MAX_CONFIG_FILE_BYTES:
        raise MotorClassesMissing(f"{path} is larger than {MAX_CONFIG_FILE_BYTES} bytes")
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as error:
        raise MotorClassesMissing(f"{path} is unreadable ({error.__class__.__name__})") from None
    found = set()
    for node in tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0] if isinstance(node, ast.Assign) else None
        if isinstance(target, ast.Name) and target.id.endswith("_MODULE_MAP") and isinstance(node.value, ast.Dict):
            found |= {key.value for key in node.value.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)}
    return frozenset(found - {"engine"})  # the engine service is not a store


def motor_schema(sources: dict[str, str]) -> dict[str, Any]:
    """{"sections": section -> {"class", "also_reads"}, "classes": class key -> {"fields"}} of MOTOR_SECTIONS."""
    package = Package(sources)
    classes: dict[str, Any] = {}
    sections = {}
    for section, (path, name) in MOTOR_SECTIONS.items():
        if path not in sources:
            raise MotorClassesMissing(f"{path} (class {name}) is missing")
        module = path.removesuffix(".py").replace("/", ".")
        try:
            root = motor_class(package, module, name, classes)
        except SyntaxError as error:
            raise MotorClassesMissing(f"{error.filename} does not parse ({error.msg})") from None
        found = package.lookup(module, name)
        extra = [key for key in keys_read_beside_fields(found[1]) if key not in classes[root]["fields"]]
        sections[section] = {"class": root, "also_reads": extra}
    return {"sections": sections, "classes": dict(sorted(classes.items()))}
