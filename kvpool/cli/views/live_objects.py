"""The cluster's objects for `python -m kvpool diff --live`: read from a folder of `kubectl get -o yaml` output and
cut down to the fields a preview sets, so that what the API server adds (status, uid, defaults) is no difference and
what was changed out of band (a scaled Deployment, an edited env var or ConfigMap, a deleted Service) is.

A file may hold several YAML documents, each one object or a list (`kind: List`, or an API server's `DeploymentList`
whose items carry no kind). Objects are matched with the preview's by kind, namespace and name; objects of the
folder that the preview does not name are not compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kvpool.cli.views.manifests import ManifestValidationError, validate_written
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import check_yaml_bounds, read_text
from kvpool.policies.rules import K8S_QUANTITY, k8s_quantity_bytes

ObjectKey = tuple[str, str, str]  # kind, namespace ("" for a cluster-scoped object), name


class LiveObjectsError(KvpoolError):
    """The live folder is missing or holds something that is not Kubernetes objects."""


def key_of(obj: dict[str, Any]) -> ObjectKey:
    metadata = obj.get("metadata") or {}
    return obj["kind"], metadata.get("namespace") or "", metadata["name"]


def read_live(folder: Path) -> dict[ObjectKey, dict[str, Any]]:
    """Every object of the folder's *.yaml / *.yml / *.json files, by kind, namespace and name."""
    if not folder.is_dir():
        raise LiveObjectsError(f"{folder}: not a folder; write the objects there with `kubectl get ... -o yaml > "
                               f"{folder}/live.yaml`")
    found: dict[ObjectKey, dict[str, Any]] = {}
    for path in sorted(p for p in folder.iterdir() if p.suffix in (".yaml", ".yml", ".json")):
        try:
            text = read_text(path)
            check_yaml_bounds(text, str(path))  # an alias bomb in a live ConfigMap took 3 GiB and hung
            documents = list(yaml.safe_load_all(text))
        except yaml.YAMLError as error:
            raise LiveObjectsError(f"{path}: not YAML ({error.__class__.__name__})") from None
        for document in documents:
            for obj in _objects(document, path):
                found[key_of(obj)] = obj
    return found


def _objects(document: Any, path: Path) -> list[dict[str, Any]]:
    if document is None:
        return []
    if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
        raise LiveObjectsError(f"{path}: a document without `kind`; expected `kubectl get -o yaml` output")
    kind = document["kind"]
    if "items" in document and kind.endswith("List"):
        items = document["items"] or []
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise LiveObjectsError(f"{path}: a {kind} whose items are not a list of objects")
        # An API server's list (DeploymentList) names apiVersion and kind once; kubectl's `List` in each item.
        named = {"apiVersion": document.get("apiVersion"), "kind": kind.removesuffix("List")}
        return [obj for item in items for obj in _objects({**named, **item}, path)]
    metadata = document.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) \
            or not isinstance(metadata.get("namespace") or "", str):
        raise LiveObjectsError(f"{path}: a {kind} without metadata.name")
    return [document]


def as_previewed(want: Any, live: Any) -> Any:
    """`live` cut down to the fields `want` (the preview's) sets: mappings keep want's keys that live has; lists of
    named entries (containers, env, ports, volumes) are matched by name; a quantity the server rewrote in its
    canonical form (32768Mi as 32Gi) or a number written as text stays as the preview writes it."""
    if isinstance(want, dict) and isinstance(live, dict):
        return {key: as_previewed(value, live[key]) for key, value in want.items() if key in live}
    if isinstance(want, list) and isinstance(live, list):
        if _named(want) and _named(live):
            wanted = {entry["name"]: entry for entry in want}
            return [as_previewed(wanted[entry["name"]], entry) if entry["name"] in wanted else entry for entry in live]
        return [as_previewed(want[i], entry) if i < len(want) else entry for i, entry in enumerate(live)]
    if want != live and (str(want) == str(live) or _same_quantity(want, live)):
        return want
    return live


def _named(entries: list[Any]) -> bool:
    return all(isinstance(entry, dict) and isinstance(entry.get("name"), str) for entry in entries)


def _same_quantity(want: Any, live: Any) -> bool:
    if not (isinstance(want, str) and isinstance(live, str)):
        return False
    if not (K8S_QUANTITY.fullmatch(want) and K8S_QUANTITY.fullmatch(live)):
        return False
    return k8s_quantity_bytes(want) == k8s_quantity_bytes(live)


def live_manifests(preview: dict[str, dict[str, Any]], live: dict[ObjectKey, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The preview's manifests (file name -> object) as the cluster holds them; an object the cluster lacks is absent.
    What the cluster holds passed its API server's checks, so cut down to the preview's fields it passes the schema
    check the preview ran; a file whose objects do not is no cluster's output."""
    found = {name: as_previewed(obj, live[key_of(obj)]) for name, obj in preview.items() if key_of(obj) in live}
    try:
        validate_written(list(found.values()))
    except ManifestValidationError as error:
        raise LiveObjectsError(f"the live objects are not what an API server holds ({error}); write them with "
                               "`kubectl get ... -o yaml`") from None
    return found
