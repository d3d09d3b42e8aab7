"""docs/configuration.md: every stack configuration key, from the settings models.

Each model reached from ServiceSettings is one section: its docstring, then one row per field with the field's type
and limits (from the model's JSON schema, the one the stack-file schema is made of), its default (default factories
called) and its description. Older names and refused keys come from the loader."""

from __future__ import annotations

import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from kvpool.settings.from_stack import SECRET_ENV_DESCRIPTION, SECRET_ENV_KEY
from kvpool.settings.loader import ALIASES, MIGRATIONS
from kvpool.settings.service import PROJECT, ServiceSettings
from tools.reference.markdown import anchor, page, table

SCHEMA = ServiceSettings.model_json_schema(mode="validation", ref_template="#/$defs/{model}")
DEFS = SCHEMA["$defs"]


@dataclass
class Section:
    model: type[BaseModel]
    paths: list[str] = field(default_factory=list)  # where the model sits, first one names the section

    @property
    def heading(self) -> str:
        return self.paths[0]


def _models(annotation: Any) -> list[type[BaseModel]]:
    """The models an annotation holds: itself, or inside Optional, Union, Annotated, list and dict."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for argument in typing.get_args(annotation) for model in _models(argument)]


def _discriminator(model: type[BaseModel]) -> str:
    """` (backend: mooncake)` for a union member told apart by a one-value Literal field."""
    for name, info in model.model_fields.items():
        values = typing.get_args(info.annotation) if typing.get_origin(info.annotation) is typing.Literal else ()
        if info.is_required() and len(values) == 1 and name in ("type", "backend"):
            return f" ({name}: {values[0]})"
    return ""


def sections() -> list[Section]:
    """Every model reached from ServiceSettings, depth first in field order, with every path it sits at."""
    found: dict[type[BaseModel], Section] = {}

    def visit(model: type[BaseModel], path: str, label: str) -> None:
        """`label`: the path with the union member told apart; its fields are at `path`, shared by the members."""
        if model in found:
            if label not in found[model].paths:
                found[model].paths.append(label)
            return
        found[model] = Section(model, [label])
        for name, info in model.model_fields.items():
            nested = _models(info.annotation)
            suffix = "[]" if typing.get_origin(_unwrap(info.annotation)) is list else ""
            child_path = f"{path}.{name}{suffix}" if path else name
            for child in nested:
                visit(child, child_path, f"{child_path}{_discriminator(child)}" if len(nested) > 1 else child_path)

    visit(ServiceSettings, "", "")
    return list(found.values())


def _unwrap(annotation: Any) -> Any:
    """The annotation without Optional and Annotated around it."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            kept = [argument for argument in typing.get_args(annotation) if argument is not type(None)]
            if len(kept) != 1:
                return annotation
            annotation = kept[0]
        else:
            return annotation


def _type(schema: dict[str, Any], links: dict[str, str]) -> str:
    """A JSON schema as words: `integer 1..16`, `mooncake | tcp`, `list of [PvcStorage](#...)`."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return f"[{links[name]}](#{anchor(links[name])})" if name in links else name
    for key in ("anyOf", "oneOf"):
        if key in schema:
            kinds = [_type(option, links) for option in schema[key] if option.get("type") != "null"]
            return " or ".join(dict.fromkeys(kinds))
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return " | ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        return f"list of {_type(schema.get('items', {}), links)}"
    if kind == "object":
        values = schema.get("additionalProperties")
        return f"mapping of names to {_type(values, links)}" if isinstance(values, dict) and values else "mapping"
    if kind in ("integer", "number"):
        return f"{kind}{_range(schema)}"
    if kind == "string":
        return f"string{_length(schema)}"
    return str(kind or "any value")


def _range(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f" {low}..{high}"
    if "exclusiveMinimum" in schema:
        return f" > {schema['exclusiveMinimum']}" + (f", ≤ {high}" if high is not None else "")
    if low is not None:
        return f" ≥ {low}"
    return f" ≤ {high}" if high is not None else ""


def _length(schema: dict[str, Any]) -> str:
    low, high = schema.get("minLength"), schema.get("maxLength")
    if high is not None:
        return f", at most {high} characters"
    return ", not empty" if low == 1 else ""


def _default(model: type[BaseModel], name: str) -> str:
    info = model.model_fields[name]
    if info.is_required():
        return "required"
    value = info.get_default(call_default_factory=True)
    if isinstance(value, BaseModel):
        changed = value.model_dump(mode="json", exclude_defaults=True)
        return f"`{json.dumps(changed)}`" if changed else "its fields' defaults"
    if value is None:
        return "unset"
    return f"`{json.dumps(value)}`"


def _section_text(section: Section, links: dict[str, str]) -> str:
    model, schema = section.model, DEFS.get(section.model.__name__, SCHEMA)
    rows = [
        (f"`{name}`", _type(schema["properties"][name], links), _default(model, name), info.description or "")
        for name, info in model.model_fields.items()
    ]
    if model is ServiceSettings:
        rows.append((f"`{SECRET_ENV_KEY}`", "Pulumi secret: mapping of names to strings", "unset",
                     SECRET_ENV_DESCRIPTION))
    text = f"## {section.heading}\n\n"
    if len(section.paths) > 1:
        text += "Also at " + ", ".join(f"`{path}`" for path in section.paths[1:]) + ".\n\n"
    doc = (model.__doc__ or "").strip() if model.__doc__ != BaseModel.__doc__ else ""
    if doc:
        text += " ".join(doc.split()) + "\n\n"
    return text + table(("key", "type", "default", "what"), rows)


def _renames() -> str:
    older = [(f"`{old}`", f"`{new}`") for old, new in ALIASES.items()]
    refused = [(f"`{key}`", MIGRATIONS[key]("<value>", "<project>")) for key in MIGRATIONS]
    return ("## Older and refused keys\n\nAccepted under an older name (both at once is an error):\n\n"
            + table(("older name", "current name"), older)
            + "\nRefused, with what to write instead (the loader's message):\n\n" + table(("key", "message"), refused))


def configuration_page() -> str:
    found = sections()
    found[0].paths[0] = f"Top-level keys ({PROJECT}:)"
    links = {section.model.__name__: section.heading for section in found}
    body = ("Every key of a stack file's `motor-kvpool:` namespace and every field below it. A `mapping` without "
            "a section of its own passes through to Motor or vLLM (README, \"Pass-through sections\").\n\n"
            + "\n".join(_section_text(section, links) for section in found) + "\n" + _renames())
    return page("Stack configuration reference",
                "the settings models (kvpool/settings/service.py and the section modules it names) and "
                "kvpool/settings/loader.py",
                "venv/bin/python -m tools.reference", body)
