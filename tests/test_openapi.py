"""kvpool/cli/apiserver/openapi.py hands out exactly the file's definitions: indexed in one pass, parsed per kind."""

import json

import pytest

from kvpool.cli.apiserver.openapi import (
    BundledDefinitions,
    bundled_definitions,
    schema_folder,
)

FOLDER = schema_folder("1.30.0")


@pytest.fixture(scope="module")
def whole() -> dict:
    return json.loads((FOLDER / "_definitions.json").read_text(encoding="utf-8"))


def _closure(definitions: dict, names: set[str]) -> set[str]:
    """Every definition reachable from `names`, walking the parsed documents' `$ref` values."""
    found, pending = set(), list(names)
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending += list(_refs(definitions[name]))
    return found


def _refs(document: object):
    if isinstance(document, dict):
        for key, value in document.items():
            if key == "$ref":
                yield value.split("#/$defs/")[1]
            else:
                yield from _refs(value)
    elif isinstance(document, list):
        for item in document:
            yield from _refs(item)


def test_every_kind_is_found_as_a_scan_of_the_whole_file_finds_it(whole: dict) -> None:
    bundled = BundledDefinitions(FOLDER / "_definitions.json")
    expected = {}
    for name, definition in whole["$defs"].items():
        for gvk in definition.get("x-kubernetes-group-version-kind", []):
            api_version = f"{gvk['group']}/{gvk['version']}" if gvk["group"] else gvk["version"]
            expected.setdefault((api_version, gvk["kind"]), name)
    assert len(expected) == 278
    assert {key: bundled.definition_of(*key) for key in expected} == expected
    assert bundled.definition_of("apps/v1", "Deployment") == "io.k8s.api.apps.v1.Deployment"
    assert bundled.definition_of("example.com/v1", "Widget") is None
    assert bundled.header == {k: v for k, v in whole.items() if k != "$defs"}


def test_a_kind_gets_the_definitions_it_reaches_and_nothing_else(whole: dict) -> None:
    reached = bundled_definitions(FOLDER).reached_from(frozenset({"io.k8s.api.apps.v1.Deployment"}))
    assert set(reached) == _closure(whole["$defs"], {"io.k8s.api.apps.v1.Deployment"})
    assert "io.k8s.api.core.v1.PodSpec" in reached and "io.k8s.api.batch.v1.Job" not in reached
    assert len(reached) < len(whole["$defs"]) / 2
    assert all(reached[name] == whole["$defs"][name] for name in reached)


def test_a_kinds_document_resolves_its_schema_refs() -> None:
    schema = json.loads((FOLDER / "deployment-apps-v1.json").read_text(encoding="utf-8"))
    document = bundled_definitions(FOLDER).document_for(schema)
    assert document["$id"] == "https://kubernetes.io/api/_definitions.json"
    assert {"io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "io.k8s.api.apps.v1.DeploymentSpec"} <= set(document["$defs"])
