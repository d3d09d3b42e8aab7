"""Kubernetes manifests from a recorded program run: built, checked against the OpenAPI schema, written.

Every custom resource of type `kubernetes:<group>/<version>:<Kind>` whose inputs carry `apiVersion` and
`kind` is one object (the inputs already have the Kubernetes shape). Objects are validated strictly with
kubernetes-validate (no cluster needed); kinds it has no schema for, such as CRDs, are reported, not failed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import jsonschema
import kubernetes_validate
import yaml
from kubernetes_validate import utils as kubernetes_validate_utils
from referencing import Registry, Resource

from kvpool.cli.apiserver.checks import check_manifests
from kvpool.cli.apiserver.openapi import bundled_definitions, schema_folder
from kvpool.cli.engine.mock_engine import RecordedResource
from kvpool.cli.engine.property_values import (
    SECRET_MASK,
    PropertyPath,
    format_path,
    mask_leaves,
)
from kvpool.cli.engine.provider_naming import named_metadata
from kvpool.internal.written_files import real_folder, write_file
from kvpool.errors import KvpoolError, problem_report
from kvpool.internal.units import integral_floats_to_ints
from kvpool.policies.rules.service_set import service_set_objects

DEFAULT_KUBERNETES_VERSION = "1.30"
_KUBERNETES_TYPE = re.compile(r"^kubernetes:[^:]+/[^:/]+:[A-Za-z0-9]+$")


class ManifestValidationError(KvpoolError):
    """One or more objects do not match the Kubernetes schema; `problems` holds one line per object."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(problem_report("manifests", problems, "strict schema and API-server checks"))


class KubernetesVersionError(KvpoolError):
    """kubernetes-validate bundles no schema for the requested Kubernetes version."""


@dataclass(frozen=True)
class KubernetesObject:
    urn: str
    body: dict[str, Any]
    """Plain manifest: integral numbers as ints, no nulls, apiVersion/kind/metadata first then keys sorted,
    real (unmasked) values."""
    secret_paths: tuple[PropertyPath, ...]
    unknown_paths: tuple[PropertyPath, ...]

    @property
    def kind(self) -> str:
        return str(self.body["kind"])

    @property
    def name(self) -> str:
        return str(self.body["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        namespace = self.body["metadata"].get("namespace")
        return str(namespace) if namespace else None

    @property
    def label(self) -> str:
        return object_label(self.kind, self.namespace, self.name)

    @property
    def file_name(self) -> str:
        return f"{self.kind.lower()}-{self.namespace or '_cluster'}-{self.name}.yaml"


@dataclass(frozen=True)
class ValidationReport:
    kubernetes_version: str
    """The schema version actually used (the newest bundled one not newer than the requested version)."""
    validated: list[str]
    """Labels of the objects that passed the schema check."""
    not_schema_checked: list[str]
    """One line per object that could not be checked, with the reason."""


def kubernetes_objects(resources: list[RecordedResource]) -> list[KubernetesObject]:
    """The manifests the Kubernetes provider would apply, in resource (URN) order."""
    objects = []
    for resource in resources:
        if resource.read or not (resource.custom and _KUBERNETES_TYPE.fullmatch(resource.type)):
            continue
        if "apiVersion" not in resource.inputs or "kind" not in resource.inputs:
            continue  # e.g. helm.sh/v3:Release: a provider-side resource, not a manifest
        body = _leading(_without_nulls(integral_floats_to_ints(resource.inputs)), ("apiVersion", "kind", "metadata"))
        body["metadata"] = _leading(named_metadata(body.get("metadata"), resource.name), ("name", "namespace"))
        objects.append(KubernetesObject(resource.urn, body, resource.secret_paths, resource.unknown_paths))
    return objects


def validate_objects(objects: list[KubernetesObject], kubernetes_version: str) -> ValidationReport:
    """Check every object strictly; raise ManifestValidationError listing every failing object."""
    schema_version = _schema_version(kubernetes_version)
    validated, not_checked, problems = [], [], []
    # What the API server's checks read: objects of the schema's types, which the mirror assumes (and kinds without
    # a bundled schema, whose metadata it checks).
    well_typed = []
    clashes = _file_name_clashes(objects)
    for obj in objects:
        try:
            _validate_strictly(_without_unknown_values(obj), schema_version)
        except kubernetes_validate.SchemaNotFoundError:
            embedded = service_set_objects(obj.body)
            if embedded:
                embedded_problems = _validate_embedded(obj, embedded, schema_version)
                problems += embedded_problems
                if not embedded_problems:
                    well_typed.append(obj)
                not_checked.append(
                    f"{obj.label} ({obj.body['apiVersion']}): no schema bundled for this kind; its "
                    f"{len(embedded)} role workloads and Services were checked as Deployments and Services"
                )
            else:
                not_checked.append(f"{obj.label} ({obj.body['apiVersion']}): no schema bundled for this kind")
                well_typed.append(obj)
            continue
        except kubernetes_validate.ValidationError as error:
            path = tuple(error.path)
            reason = _reason(error, obj, path)
            problems.append(f"{obj.label}: {format_path(path)}: {reason} (Kubernetes {error.version})")
            continue
        validated.append(obj.label)
        well_typed.append(obj)
    problems += apiserver_problems(well_typed, schema_version)
    if clashes or problems:
        raise ManifestValidationError([*clashes, *problems])
    return ValidationReport(schema_version, validated, not_checked)


def object_label(kind: str, namespace: str | None, name: str) -> str:
    """`Deployment demo/engine`, or `Namespace demo` for an object without a namespace."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def pod_specs(document: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside an object (a Deployment's template, each role of an InferServiceSet, ...)."""
    if isinstance(document, dict):
        if isinstance(document.get("containers"), list):
            yield document
        for value in document.values():
            yield from pod_specs(value)
    elif isinstance(document, list):
        for value in document:
            yield from pod_specs(value)


def is_object(body: Any) -> bool:
    """One Kubernetes object, as far as the schema check and the views address it (kind, names, labels)."""
    metadata = body.get("metadata") if isinstance(body, dict) else None
    return (
        isinstance(body.get("apiVersion") if isinstance(body, dict) else None, str)
        and isinstance(body.get("kind"), str)
        and isinstance(metadata, dict)
        and isinstance(metadata.get("name"), str)
        and isinstance(metadata.get("namespace", ""), str)
        and all(isinstance(metadata.get(key, {}), dict) for key in ("labels", "annotations"))
    )


def validate_written(bodies: list[dict[str, Any]]) -> None:
    """validate_objects on objects read back from files (a preview's, the cluster's): ManifestValidationError when one
    is not what a preview writes, which is what the views that read them (diff, blast radius) may assume. A preview
    writes no null (kubernetes_objects drops them), which the schema would let through to the API-server checks."""
    shapeless = [f"{str(body.get('kind'))[:40]} object: no apiVersion, kind and metadata.name as text"
                 for body in bodies if not is_object(body)]
    if shapeless:
        raise ManifestValidationError(shapeless)
    objects = [KubernetesObject("", body, (), ()) for body in bodies]
    nulls = [f"{obj.label}: a null value, which no preview writes" for obj in objects if _holds_null(obj.body)]
    if nulls:
        raise ManifestValidationError(nulls)
    validate_objects(objects, DEFAULT_KUBERNETES_VERSION)


def apiserver_problems(objects: list[KubernetesObject], schema_version: str) -> list[str]:
    """What the API server itself would refuse (kvpool/cli/apiserver/checks.py): `manifests/<file>: <object>: <field
    path>: <reason>`, one line per problem."""
    files = {obj.label: obj.file_name for obj in objects}
    found = check_manifests([(obj.label, _without_unknown_values(obj)) for obj in objects], schema_version)
    return [f"manifests/{files[label]}: {label}: {format_path(path)}: {reason}" for label, path, reason in found]


def _validate_embedded(
    obj: KubernetesObject, embedded: list[tuple[PropertyPath, dict[str, Any]]], schema_version: str
) -> list[str]:
    problems = []
    for where, body in embedded:
        try:
            _validate_strictly(body, schema_version)
        except kubernetes_validate.ValidationError as error:
            # The error's path starts at the embedded object; `where` already ends in its "spec".
            path = format_path((*where, *tuple(error.path)[1:]))
            problems.append(f"{obj.label}: {path}: {error.message} (Kubernetes {error.version})")
    return problems


def _validate_strictly(data: dict[str, Any], desired_version: str) -> None:
    """`kubernetes_validate.validate(data, desired_version, strict=True)`, the same checks, errors and exceptions,
    with one compiled validator per kind, apiVersion and schema version instead of one per object (the library
    reads and parses the kind's schema and the 1.3 MB of shared definitions on every call)."""
    validator, version = _strict_validator(data["kind"], data["apiVersion"], desired_version)
    try:
        validator.validate(data)
    except jsonschema.ValidationError as error:
        raise kubernetes_validate.ValidationError(error, version=kubernetes_validate_utils.major_minor(version)) from None


@functools.cache
def _strict_validator(kind: str, api_version: str, desired_version: str) -> tuple[jsonschema.Validator, str]:
    """As kubernetes_validate.validate picks and loads the schema (its version lookup and file names, kept
    exactly); raises its SchemaNotFoundError and VersionNotSupportedError, which functools.cache does not keep."""
    utils = kubernetes_validate_utils
    desired_version = desired_version.removeprefix("v")
    if utils.major_minor(desired_version) > utils.latest_version():
        raise kubernetes_validate.VersionNotSupportedError(version=utils.major_minor(desired_version))
    version = [v for v in utils.all_versions() if utils.major_minor(v) <= utils.major_minor(desired_version)][-1]
    folder = schema_folder(version)
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    try:
        schema = utils.schema_contents(
            f"kubernetes-json-schema/{folder.name}/{kind.lower()}-{group_version}.json", desired_version
        )
    except FileNotFoundError:
        raise kubernetes_validate.SchemaNotFoundError(
            version=utils.major_minor(desired_version), kind=kind, api_version=api_version
        ) from None
    # The library registers the whole _definitions.json; the kind reaches only some of it, and a `$ref` finds the
    # same definition in either.
    definitions = bundled_definitions(folder).document_for(schema)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry), version


class _ManifestDumper(yaml.SafeDumper):
    """Multi-line strings (config files in ConfigMaps) as `|` blocks, so a reviewer reads them as files."""


class _FastManifestDumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """The same representation through libyaml's emitter (when PyYAML has it), several times faster. It writes the
    same text as the pure-Python emitter for every document _libyaml_writes_the_same accepts (tests/test_manifests.py
    compares the two); any other document goes through _ManifestDumper."""


_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
_PRINTABLE_ASCII_LINES = re.compile(r"[\x20-\x7e\n]*")


def _libyaml_writes_the_same(document: Any) -> bool:
    """The emitters differ in where they fold long double-quoted scalars (multi-line text that cannot be a block,
    tabs, other control or non-ASCII characters), in ending a document with a `|+` block and in writing an empty
    key; only printable ASCII, one line or a text that is written as a `|` or `|-` block, passes."""
    if isinstance(document, str):
        if _PRINTABLE_ASCII.fullmatch(document):
            return True
        return (
            _PRINTABLE_ASCII_LINES.fullmatch(document) is not None
            and not document.endswith("\n\n")
            and document != "\n"
            and not any(line != line.rstrip() for line in document.splitlines())
        )
    if isinstance(document, dict):
        return all(
            key != "" and _libyaml_writes_the_same(key) and _libyaml_writes_the_same(value)
            for key, value in document.items()
        )
    if isinstance(document, list):
        return all(_libyaml_writes_the_same(item) for item in document)
    return True


def _represent_text(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = "|" if "\n" in text and not any(line != line.rstrip() for line in text.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_ManifestDumper.add_representer(str, _represent_text)
_FastManifestDumper.add_representer(str, _represent_text)


def manifest_text(body: dict[str, Any]) -> str:
    """One object as the YAML file the preview writes."""
    dumper = _FastManifestDumper if _libyaml_writes_the_same(body) else _ManifestDumper
    return yaml.dump(body, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True)


def manifest_texts(objects: list[KubernetesObject]) -> dict[str, str]:
    """Each object's file name and text as write_manifests writes it, secrets as "[secret]"."""
    return {obj.file_name: manifest_text(mask_leaves(obj.body, obj.secret_paths)) for obj in objects}


def write_manifests(files: dict[str, str], directory: Path, below: Path | None = None) -> list[Path]:
    """manifest_texts' files into `directory` (no link on the way from `below`, default `directory` itself); YAML
    files from an earlier run are removed."""
    real_folder(directory, below or directory)
    written = [write_file(directory / name, text, directory) for name, text in files.items()]
    for stale in set(directory.glob("*.yaml")) - set(written):
        stale.unlink()  # a stale link is removed itself, never what it points to
    return written


def _schema_version(requested: str) -> str:
    """kubernetes-validate compares versions as strings (1.9 > 1.30); pick the schema numerically here."""
    match = re.fullmatch(r"v?(\d+)\.(\d+)(?:\.\d+)?", requested)
    bundled = [tuple(int(part) for part in v.split(".")[:2]) for v in kubernetes_validate_utils.all_versions()]
    usable = [v for v in bundled if match and v <= (int(match[1]), int(match[2]))]
    if not usable:
        supported = f"{bundled[0][0]}.{bundled[0][1]} to {bundled[-1][0]}.{bundled[-1][1]}"
        raise KubernetesVersionError(
            f"no Kubernetes schema for version {requested!r}: kubernetes-validate "
            f"{kubernetes_validate.__version__} has {supported}"
        )
    major, minor = usable[-1]
    return f"{major}.{minor}"


def _reason(error: kubernetes_validate.ValidationError, obj: KubernetesObject, path: PropertyPath) -> str:
    """The schema's reason; it quotes the offending value, which must not show a secret."""
    if any(path[: len(secret)] == secret for secret in obj.secret_paths):
        return str(error.message).replace(repr(error.instance), repr(SECRET_MASK))
    return str(error.message)


def _file_name_clashes(objects: list[KubernetesObject]) -> list[str]:
    by_file: dict[str, list[KubernetesObject]] = {}
    for obj in objects:
        by_file.setdefault(obj.file_name, []).append(obj)
    return [
        f"{' and '.join(o.urn for o in same)} both render to manifests/{file_name}"
        for file_name, same in sorted(by_file.items())
        if len(same) > 1
    ]


def _without_unknown_values(obj: KubernetesObject) -> dict[str, Any]:
    """Fields a preview cannot know are left out of the schema check rather than checked as placeholder text."""
    body = obj.body
    for path in sorted(obj.unknown_paths, key=len, reverse=True):
        body = _drop_path(body, path)
    return body


def _drop_path(document: Any, path: PropertyPath) -> Any:
    if not path:
        return document
    step, rest = path[0], path[1:]
    if isinstance(document, dict) and step in document:
        if not rest:
            return {k: v for k, v in document.items() if k != step}
        return {**document, step: _drop_path(document[step], rest)}
    if isinstance(document, list) and isinstance(step, int) and step < len(document) and rest:
        return [*document[:step], _drop_path(document[step], rest), *document[step + 1 :]]
    return document


def _holds_null(document: Any) -> bool:
    pending = [document]
    while pending:
        item = pending.pop()
        if item is None:
            return True
        pending.extend(item.values() if isinstance(item, dict) else item if isinstance(item, list) else ())
    return False


def _without_nulls(document: Any) -> Any:
    if isinstance(document, dict):
        return {key: _without_nulls(value) for key, value in document.items() if value is not None}
    if isinstance(document, list):
        return [_without_nulls(item) for item in document]
    return document


def _leading(document: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """The given keys first, in that order, then the rest as they were (sorted, from the decoder)."""
    return {**{key: document[key] for key in keys if key in document}, **document}
