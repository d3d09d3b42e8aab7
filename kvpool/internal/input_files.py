"""Reading what a user hands us, bounded: every file the tooling reads (stack files, Pulumi.yaml, user_config.json,
env.json, --policy-config, --stack-outputs, previews to diff) and the config text the program parses.

A bad file is an InputFileError naming the file (and line where there is one), never another exception:
- only a regular file is read: a FIFO, device or socket is refused before anything waits on it;
- size is capped before reading (MAX_FILE_BYTES) and text must be UTF-8 (a UTF-16 file says so);
- nesting is capped (MAX_DEPTH) and YAML aliases may not expand beyond MAX_YAML_NODES nodes, both checked on the
  parser's event stream, before a tree is built (a "billion laughs" document is refused, not expanded);
- YAML duplicate keys are refused, as the Pulumi CLI's YAML parser refuses them ("mapping key already defined");
- YAML keys are taken as the text written (`on:` is "on", as in Go), explicit tags beyond JSON's types are refused;
- JSON `NaN`/`Infinity`, numbers too long to convert and duplicate keys (json.loads, as deploy.py, keeps the last) are
  refused.
Stack names are checked as the Pulumi CLI checks them before one is used in a path (`check_stack_name`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from kvpool.errors import KvpoolError

MAX_FILE_BYTES = 1024 * 1024
"""1 MiB: ten times the largest example stack's config would still be under 10 KiB."""
MAX_DEPTH = 64
"""Nesting levels of mappings and lists; Motor's deepest section (a MultiConnector's UCM store) needs 9."""
MAX_YAML_NODES = 200_000
"""Nodes of a YAML document with every alias expanded: anchors may share a section, not multiply it."""
MAX_YAML_EXPANDED_BYTES = 4 * MAX_FILE_BYTES
"""Text of a YAML document with every alias expanded: the program and the preview copy what it expands to (JSON,
manifests), so a 300 KB anchor named 2,000 times would take gigabytes before any other check."""

STACK_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,100}$")
"""The Pulumi CLI's rule for a stack name (pkg/backend/diy: stackNameAndProjectRegexp, at most 100 characters)."""

_JSON_TAGS = frozenset(
    "tag:yaml.org,2002:" + name for name in ("str", "int", "float", "bool", "null", "map", "seq", "merge")
)


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class InputFileError(KvpoolError):
    """A file (or config value) cannot be read as what it should be; the message names it and where."""


class NotJsonError(InputFileError):
    """The text is not JSON at all (as opposed to JSON beyond the bounds)."""


def check_stack_name(name: str, what: str = "--stack") -> str:
    """`name` when it is a valid Pulumi stack name; it becomes part of file names, so check before any path."""
    if not isinstance(name, str) or not STACK_NAME.fullmatch(name):
        shown = name if len(name) <= 40 else f"{name[:40]}... ({len(name)} characters)"
        raise InputFileError(
            f"{what} {shown!r}: not a stack name; use 1 to 100 letters, digits, '-', '_' and '.' (the Pulumi CLI's rule)"
        )
    return name


def read_text(path: Path | str, what: str | None = None) -> str:
    """The UTF-8 text of a file of at most MAX_FILE_BYTES. `what` prefixes the file in messages (e.g. a flag)."""
    path = Path(path)
    label = f"{what} {path}" if what else str(path)
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer; the kind is then checked on what was opened
        # (not on the name, which could be swapped in between). Only regular files are read: a FIFO, device or socket
        # would hang or never end.
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise InputFileError(f"{label}: no such file") from None
    except OSError as error:
        raise InputFileError(f"{label}: cannot read it: {error.strerror or error}") from None
    mode = os.fstat(descriptor).st_mode
    if not stat.S_ISREG(mode):
        os.close(descriptor)
        if stat.S_ISDIR(mode):
            raise InputFileError(f"{label}: is a folder, not a file")
        raise InputFileError(f"{label}: is {_special_kind(mode)}, not a regular file; name a file")
    with os.fdopen(descriptor, "rb") as stream:
        try:
            data = stream.read(MAX_FILE_BYTES + 1)
        except OSError as error:
            raise InputFileError(f"{label}: cannot read it: {error.strerror or error}") from None
    if len(data) > MAX_FILE_BYTES:
        raise InputFileError(f"{label}: larger than {MAX_FILE_BYTES // 1024} KiB; this is not a configuration file")
    return decode_text(data, label)


def _special_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "a special file"


def decode_text(data: bytes, label: str) -> str:
    if data.startswith((b"\xff\xfe", b"\xfe\xff")) or (len(data) > 1 and (data[0] == 0 or data[1] == 0)):
        raise InputFileError(f"{label}: is UTF-16 text; save it as UTF-8")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise InputFileError(
            f"{label}:{line}: not UTF-8 text (byte 0x{data[error.start]:02x} at offset {error.start}); save it as UTF-8"
        ) from None
    return text.removeprefix("\ufeff")


# --- JSON -------------------------------------------------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


class _DuplicateKey(Exception):
    """Raised by the object hook; the key and its lines are then found in the text (the hook sees no positions)."""


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) < len(pairs):
        raise _DuplicateKey
    return mapping


_JSON_STRUCTURE = re.compile(r'["{}\[\],]')


def _first_duplicate(text: str) -> tuple[str, int, int]:
    """(key, line of its first occurrence, line of the second) of the first key given twice in one object of
    `text`, which is valid JSON: only strings and structure need reading, strings with json's own scanstring."""
    objects: list[dict[str, int] | None] = []  # the keys' lines of each open object; None for a list
    expecting_key = False
    position = counted = 0
    line = 1
    while (found := _JSON_STRUCTURE.search(text, position)) is not None:
        char, position = found.group(), found.end()
        if char == '"':
            string, position = json.decoder.scanstring(text, position)
            if expecting_key and objects and objects[-1] is not None:
                line += text.count("\n", counted, found.start())  # counted on from the last key, not from the start
                counted = found.start()
                if string in objects[-1]:
                    return string, objects[-1][string], line
                objects[-1][string] = line
                expecting_key = False
        elif char in "{[":
            objects.append({} if char == "{" else None)
            expecting_key = char == "{"
        elif char in "}]":
            objects.pop()
            expecting_key = False
        elif char == ",":
            expecting_key = bool(objects) and objects[-1] is not None
    raise AssertionError("the object hook found a duplicate key the scan did not")


def loads_json(text: str, label: str) -> Any:
    """The JSON value of `text`, nesting at most MAX_DEPTH; InputFileError prefixed with `label` otherwise."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_refuse_duplicates)
    except _DuplicateKey:
        key, first, line = _first_duplicate(text)
        raise InputFileError(
            f"{label}:{line}: duplicate key {key!r} (first at line {first}); json.load (deploy.py's reader) would keep "
            "the last one silently, keep one"
        ) from None
    except json.JSONDecodeError as error:
        raise NotJsonError(f"{label}: not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
    except RecursionError:
        raise InputFileError(f"{label}: nested more than {MAX_DEPTH} levels deep") from None
    except ValueError as error:  # NaN/Infinity, or an integer too long to convert
        raise InputFileError(f"{label}: not valid JSON: {error}") from None
    depth = nesting_depth(value)
    if depth > MAX_DEPTH:
        raise InputFileError(f"{label}: nested more than {MAX_DEPTH} levels deep")
    return value


def load_json(path: Path | str, what: str | None = None) -> Any:
    """The JSON value of a file (read_text's bounds, then loads_json's)."""
    label = f"{what} {path}" if what else str(path)
    return loads_json(read_text(path, what), label)


def nesting_depth(value: Any) -> int:
    """Levels of dicts and lists in `value` (a scalar is 0), without recursion."""
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_DEPTH:
            return depth  # deep enough to refuse; no need to walk the rest
        pending.extend((child, depth + 1) for child in children)
    return deepest


# --- YAML -------------------------------------------------------------------------------------------------------


class SafeYamlLoader(yaml.SafeLoader):
    """Safe YAML whose mapping keys are the text written (Go's YAML reads `on:` as "on", PyYAML as True) and
    whose integers too long to convert are a YAML error with a line, not a ValueError."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            mapping = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise yaml.constructor.ConstructorError(
                        None, None, "a key must be a plain value, not a mapping or list", key_node.start_mark
                    )
                mapping[key_node.value] = self.construct_object(value_node, deep=deep)
            return mapping
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        try:
            return super().construct_yaml_int(node)
        except ValueError:  # Python refuses to convert more than 4300 digits
            problem = f"an integer of {len(node.value)} digits; write it as text (quoted) if it is one"
            raise yaml.constructor.ConstructorError(None, None, problem, node.start_mark) from None


SafeYamlLoader.add_constructor("tag:yaml.org,2002:int", SafeYamlLoader.construct_yaml_int)


def compose_yaml(text: str, label: str, loader_class: type[SafeYamlLoader] = SafeYamlLoader) -> tuple[Any, yaml.Node | None]:
    """The document and its node tree (None for an empty document), after the bounds above were checked."""
    try:
        _check_events(text, label)
        loader = loader_class(text)
        try:
            node = loader.get_single_node()
            if node is not None:
                _check_nodes(node, label)
            document = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        where = f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
        raise InputFileError(f"{where}: invalid YAML: {error.problem or error.context}") from None
    except yaml.YAMLError as error:
        raise InputFileError(f"{label}: invalid YAML: {error}") from None
    return document, node


def load_yaml(path: Path | str, what: str | None = None, loader_class: type[SafeYamlLoader] = SafeYamlLoader) -> Any:
    label = f"{what} {path}" if what else str(path)
    return compose_yaml(read_text(path, what), label, loader_class)[0]


def loads_yaml(text: str, label: str) -> Any:
    if len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        raise InputFileError(f"{label}: larger than {MAX_FILE_BYTES // 1024} KiB")
    return compose_yaml(text, label)[0]


_EventParser: type = yaml.CSafeLoader if getattr(yaml, "__with_libyaml__", False) else yaml.SafeLoader


def _check_events(text: str, label: str, parser_class: type = _EventParser) -> None:
    """Depth and alias expansion (in values and in bytes of text) from the parser's events, before any tree exists
    (the parser does not recurse). libyaml stops at its own nesting limit (1000) before emitting the events that would
    show the depth, and PyYAML's composer would then recurse into what libyaml refused: a libyaml error is checked
    again with PyYAML's parser."""
    open_nodes: list[list[Any]] = []  # [anchor, expanded values, height, expanded bytes] of each open collection
    anchors: dict[str, tuple[int, int, int]] = {}
    total = total_bytes = 0

    def close(anchor: str | None, size: int, height: int, size_bytes: int, mark: Any) -> None:
        if anchor is not None:
            anchors[anchor] = (size, height, size_bytes)
        if len(open_nodes) + height > MAX_DEPTH:
            raise InputFileError(f"{label}:{mark.line + 1}: nested more than {MAX_DEPTH} levels deep")
        if open_nodes:
            parent = open_nodes[-1]
            parent[1] += size
            parent[2] = max(parent[2], height + 1)
            parent[3] += size_bytes

    loader = parser_class(text)
    try:
        while True:
            try:
                if not loader.check_event():
                    break
                event = loader.get_event()
            except yaml.YAMLError:
                if parser_class is not yaml.SafeLoader:
                    _check_events(text, label, yaml.SafeLoader)
                return  # a syntax error: the composer reports it, in PyYAML's words, after what was checked here
            if isinstance(event, yaml.CollectionStartEvent):
                total += 1
                total_bytes += 2
                if len(open_nodes) >= MAX_DEPTH:
                    raise InputFileError(f"{label}:{event.start_mark.line + 1}: nested more than {MAX_DEPTH} levels deep")
                open_nodes.append([event.anchor, 1, 1, 2])
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, size, height, size_bytes = open_nodes.pop()
                close(anchor, size, height, size_bytes, event.start_mark)
            elif isinstance(event, yaml.ScalarEvent):
                total += 1
                total_bytes += len(event.value) + 1
                close(event.anchor, 1, 0, len(event.value) + 1, event.start_mark)
            elif isinstance(event, yaml.AliasEvent):
                size, height, size_bytes = anchors.get(event.anchor, (1, 0, 1))
                total += size
                total_bytes += size_bytes
                close(None, size, height, size_bytes, event.start_mark)
            if total > MAX_YAML_NODES or total_bytes > MAX_YAML_EXPANDED_BYTES:
                beyond = (f"{MAX_YAML_NODES} values" if total > MAX_YAML_NODES
                          else f"{MAX_YAML_EXPANDED_BYTES // 2**20} MiB of text")
                raise InputFileError(
                    f"{label}:{event.start_mark.line + 1}: aliases expand the document beyond {beyond}; write the "
                    f"sections out instead of multiplying them with anchors"
                )
    finally:
        loader.dispose()


def check_yaml_bounds(text: str, label: str) -> None:
    """The depth and alias-expansion bounds of every document of `text`, for a reader that builds the documents
    itself (a stream of several, as `kubectl get -o yaml` writes)."""
    _check_events(text, label)


def _go_quoted(text: str) -> str:
    """`text` as yaml.v3 names a key in its errors (Go's %#v, a double-quoted Go string literal: the same as JSON's for
    printable text)."""
    return json.dumps(text, ensure_ascii=False)


def _check_nodes(root: yaml.Node, label: str) -> None:
    """Duplicate keys (the CLI refuses them: one would silently win) and tags beyond JSON's types."""
    seen: set[int] = set()
    pending: list[tuple[yaml.Node, str]] = [(root, "")]
    while pending:
        node, path = pending.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.tag not in _JSON_TAGS:
            where = f"{label}:{node.start_mark.line + 1}: {path or 'the document'}"
            if node.tag == _TIMESTAMP_TAG and isinstance(node, yaml.ScalarNode) and node.style is None:
                raise InputFileError(
                    f"{where}: {node.value} is a date or time, which the Pulumi CLI hands over in Go's words "
                    f"(2026-12-02 as '2026-12-02 00:00:00 +0000 UTC'); write it in quotes ({json.dumps(node.value)})"
                )
            quoted = f" (in quotes, {json.dumps(node.value)}, if it is text)" if isinstance(node, yaml.ScalarNode) else ""
            raise InputFileError(f"{where}: tag {node.tag!r} is not supported; write the value without it{quoted}")
        if isinstance(node, yaml.MappingNode):
            first_lines: dict[str, int] = {}
            for key_node, value_node in node.value:
                child = f"{path}.{key_node.value}" if path and isinstance(key_node, yaml.ScalarNode) else (
                    key_node.value if isinstance(key_node, yaml.ScalarNode) else path)
                pending.extend(((key_node, path), (value_node, child)))
                if not isinstance(key_node, yaml.ScalarNode):
                    continue  # a merge key `<<` counts too: yaml.v3 refuses a second (mapping key "<<" already defined)
                line = key_node.start_mark.line + 1
                if key_node.value in first_lines:
                    raise InputFileError(
                        f"{label}:{line}: duplicate key {key_node.value!r} (first at line "
                        f"{first_lines[key_node.value]}); the Pulumi CLI refuses a key given twice (mapping key "
                        f"{_go_quoted(key_node.value)} already defined), keep one"
                    )
                first_lines[key_node.value] = line
        elif isinstance(node, yaml.SequenceNode):
            pending.extend((item, f"{path}[{index}]") for index, item in enumerate(node.value))
