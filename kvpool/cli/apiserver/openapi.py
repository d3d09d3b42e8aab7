"""The API server's published OpenAPI definitions, as kubernetes-validate bundles them, read once per schema folder.

`<folder>/_definitions.json` (1.3 MB, 626 definitions) is what both the strict schema check
(kvpool/cli/views/manifests.py: the `$ref` targets of each kind's schema) and the integer decoding check
(kvpool/cli/apiserver/checks.py: each field's `format`) look up. A preview reaches about a quarter of it, so the file
is indexed in one pass, each definition parsed and dropped again, and only the definitions a kind reaches are
parsed for good; kinds share them. The documents handed out are the file's own values, unchanged.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any, Callable

import kubernetes_validate

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_DEFINITION_REF = re.compile(r'"\$ref":\s*"[^"#]*#/\$defs/([^"]+)"')


def schema_folder(version: str) -> Path:
    """kubernetes-validate's strict schemas of one bundled version (`1.30.0`, as its utils.all_versions names it)."""
    return Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema" / f"v{version}-local-strict"


class BundledDefinitions:
    """One folder's `_definitions.json`: where each definition is in the text, which definitions it refers to and
    which kinds it defines, from one pass over the file; definitions parsed when a kind first reaches them."""

    def __init__(self, path: Path) -> None:
        self._text = path.read_text(encoding="utf-8")
        self._spans: dict[str, int] = {}
        self._refs: dict[str, set[str]] = {}
        self._by_kind: dict[tuple[str, str, str], str] = {}
        self._parsed: dict[str, Any] = {}
        self._reached: dict[frozenset[str], dict[str, Any]] = {}
        self.header: dict[str, Any] = {}
        """The file's other top-level keys (`$schema`, `$id`): what names the document for `$ref`s."""
        _members(self._text, _SPACE.match(self._text).end(), self._top_level_value)

    def _top_level_value(self, key: str, start: int) -> int:
        if key != "$defs":
            self.header[key], end = _DECODER.raw_decode(self._text, start)
            return end
        return _members(self._text, start, self._index_definition)

    def _index_definition(self, name: str, start: int) -> int:
        definition, end = _DECODER.raw_decode(self._text, start)
        self._spans[name] = start
        self._refs[name] = set(_DEFINITION_REF.findall(self._text, start, end))
        for gvk in definition.get("x-kubernetes-group-version-kind", []) if isinstance(definition, dict) else []:
            self._by_kind.setdefault((gvk.get("group", ""), gvk.get("version", ""), gvk.get("kind", "")), name)
        return end

    def definition_of(self, api_version: str, kind: str) -> str | None:
        """The name of the definition of `apiVersion`'s `kind`, the first whose x-kubernetes-group-version-kind
        names it; None when the schema has none."""
        group, _, version = api_version.rpartition("/")
        return self._by_kind.get((group, version, kind))

    def reached_from(self, names: frozenset[str]) -> dict[str, Any]:
        """`names` and every definition they refer to, directly or not, by name, as the file has them (names the
        file does not define are left out, as a `$ref` to them finds nothing)."""
        if names not in self._reached:
            reached: dict[str, Any] = {}
            pending = [name for name in names if name in self._spans]
            while pending:
                name = pending.pop()
                if name in reached:
                    continue
                if name not in self._parsed:
                    self._parsed[name] = _DECODER.raw_decode(self._text, self._spans[name])[0]
                reached[name] = self._parsed[name]
                pending += [ref for ref in self._refs[name] if ref in self._spans and ref not in reached]
            self._reached[names] = reached
        return self._reached[names]

    def document_for(self, schema: Any) -> dict[str, Any]:
        """The definitions document a schema's `$ref`s need: the file's header and the definitions reached."""
        return {**self.header, "$defs": self.reached_from(frozenset(_DEFINITION_REF.findall(json.dumps(schema))))}


@functools.lru_cache(maxsize=4)
def bundled_definitions(folder: Path) -> BundledDefinitions:
    return BundledDefinitions(folder / "_definitions.json")


def _members(text: str, start: int, value: Callable[[str, int], int]) -> int:
    """Walk the JSON object at text[start] ("{"): `value(key, where its value starts)` returns where the value
    ends. Returns where the object ends."""
    index = _SPACE.match(text, start + 1).end()
    if text[index] == "}":
        return index + 1
    while True:
        key, index = json.decoder.scanstring(text, index + 1)
        index = _SPACE.match(text, index).end() + 1  # past ":"
        index = _SPACE.match(text, value(key, _SPACE.match(text, index).end())).end()
        if text[index] == "}":
            return index + 1
        index = _SPACE.match(text, index + 1).end()  # past ","
