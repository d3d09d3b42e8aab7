"""Resource properties as plain Python values, with the places that held secrets or unknowns remembered.

The Pulumi SDK's own decoder (`pulumi.runtime.rpc.deserialize_properties`) moves a secret marker up to the
enclosing object, which loses which field was secret; this decoder keeps the exact path. The signatures
below are constants of Pulumi's property wire format (sdk/go/common/resource/properties.go).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from google.protobuf import struct_pb2

SIGNATURE_KEY = "4dabf18193072939515e22adb298388d"
SECRET_SIGNATURE = "1b47061264138c4ac30d75fd1eb44270"
RESOURCE_REFERENCE_SIGNATURE = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN_VALUE = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"

SECRET_MASK = "[secret]"
UNKNOWN_MASK = "[unknown]"
"""Written where a value is only known after deployment (a preview cannot know it)."""

PropertyPath = tuple[str | int, ...]


@dataclass(frozen=True)
class DecodedProperties:
    values: dict[str, Any]
    secret_paths: tuple[PropertyPath, ...]
    unknown_paths: tuple[PropertyPath, ...]


def decode_properties(struct: struct_pb2.Struct) -> DecodedProperties:
    """Plain dicts/lists/scalars; secrets unwrapped, unknowns as UNKNOWN_MASK, resource references as URNs.
    Keys are sorted: the wire format's maps have no order, and results must not change from run to run."""
    secrets: list[PropertyPath] = []
    unknowns: list[PropertyPath] = []
    values = {key: _decode(struct[key], (key,), secrets, unknowns) for key in sorted(struct.keys())}
    return DecodedProperties(values, tuple(secrets), tuple(unknowns))


def _decode(value: Any, path: PropertyPath, secrets: list[PropertyPath], unknowns: list[PropertyPath]) -> Any:
    if isinstance(value, struct_pb2.Struct):
        signature = value[SIGNATURE_KEY] if SIGNATURE_KEY in value else None
        if signature == SECRET_SIGNATURE:
            secrets.append(path)
            return _decode(value["value"], path, secrets, unknowns) if "value" in value else None
        if signature == RESOURCE_REFERENCE_SIGNATURE:
            return value["urn"]
        return {key: _decode(value[key], (*path, key), secrets, unknowns) for key in sorted(value.keys())}
    if isinstance(value, struct_pb2.ListValue):
        return [_decode(item, (*path, index), secrets, unknowns) for index, item in enumerate(value)]
    if value == UNKNOWN_VALUE:
        unknowns.append(path)
        return UNKNOWN_MASK
    return value


def encode_properties(
    values: dict[str, Any],
    secret_paths: tuple[PropertyPath, ...] = (),
    unknown_paths: tuple[PropertyPath, ...] = (),
) -> struct_pb2.Struct:
    """The inverse of decode_properties, as the engine sends properties to a plugin: each secret path wrapped
    in the secret envelope, each unknown path as the unknown sentinel."""
    struct = struct_pb2.Struct()
    struct.update(
        {key: _encode(item, _below(secret_paths, key), _below(unknown_paths, key)) for key, item in values.items()}
    )
    return struct


def _encode(
    value: Any, secrets: tuple[PropertyPath, ...], unknowns: tuple[PropertyPath, ...], inside_secret: bool = False
) -> Any:
    if () in secrets and not inside_secret:
        return {SIGNATURE_KEY: SECRET_SIGNATURE, "value": _encode(value, secrets, unknowns, inside_secret=True)}
    if () in unknowns:
        return UNKNOWN_VALUE
    if isinstance(value, dict):
        return {key: _encode(item, _below(secrets, key), _below(unknowns, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [_encode(item, _below(secrets, index), _below(unknowns, index)) for index, item in enumerate(value)]
    return value


def mask_paths(document: Any, paths: tuple[PropertyPath, ...], mask: str = SECRET_MASK) -> Any:
    """A copy with the whole value at each path replaced by `mask` (paths that no longer exist are ignored)."""
    if () in paths:
        return mask
    if isinstance(document, dict):
        return {key: mask_paths(item, _below(paths, key), mask) for key, item in document.items()}
    if isinstance(document, list):
        return [mask_paths(item, _below(paths, index), mask) for index, item in enumerate(document)]
    return document


def mask_leaves(document: Any, paths: tuple[PropertyPath, ...], mask: str = SECRET_MASK) -> Any:
    """Like mask_paths, but keeps the shape of a masked object or list and masks each scalar inside it,
    so a masked Kubernetes manifest still has the types its schema expects around the secret values."""
    if () in paths:
        return _mask_every_scalar(document, mask)
    if isinstance(document, dict):
        return {key: mask_leaves(item, _below(paths, key), mask) for key, item in document.items()}
    if isinstance(document, list):
        return [mask_leaves(item, _below(paths, index), mask) for index, item in enumerate(document)]
    return document


def _mask_every_scalar(document: Any, mask: str) -> Any:
    if isinstance(document, dict):
        return {key: _mask_every_scalar(item, mask) for key, item in document.items()}
    if isinstance(document, list):
        return [_mask_every_scalar(item, mask) for item in document]
    return mask


def _below(paths: tuple[PropertyPath, ...], step: str | int) -> tuple[PropertyPath, ...]:
    return tuple(path[1:] for path in paths if path and path[0] == step)


_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def format_path(path: PropertyPath) -> str:
    """JSONPath text: `$.spec.template.spec.containers[0].image`, `$.data['user_config.json']`."""
    text = "$"
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif _PLAIN_KEY.fullmatch(step):
            text += f".{step}"
        else:
            text += "['" + step.replace("'", "\\'") + "']"
    return text
