"""Two previews of a stack side by side (or the cluster's objects beside a preview): the objects to create, update
and delete, with a unified diff of each update (unindented, so that a ```diff block colours it), and a summary line.
A stack one side does not have (a folder that exists but holds no `<stack>/`) is new or deleted."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from kvpool.cli.views.manifests import (
    ManifestValidationError,
    is_object,
    manifest_text,
    validate_written,
)
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import check_stack_name, read_text

MANIFESTS = "manifests"
OUTPUTS = "outputs.json"


class MissingPreviewError(KvpoolError):
    """A folder holds no preview of the stack."""


class PreviewFileError(KvpoolError):
    """A preview folder holds a file that `kvpool preview` does not write: a link, a non-regular file, or text that is
    not one Kubernetes object (a manifest) or one JSON object (outputs.json)."""


@dataclass(frozen=True)
class Change:
    sign: str  # "+", "-" or "~"
    name: str  # manifests/<file>.yaml or outputs.json, below <root>/<stack>/
    diff: list[str]


def _files(root: Path, stack: str) -> dict[str, str] | None:
    """The preview's files by name, or None when `root` exists but holds no preview of the stack (the stack is
    absent on that side). A folder that does not exist is a mistyped path, not an absent stack."""
    folder = root / check_stack_name(stack)
    if not root.is_dir():
        raise MissingPreviewError(f"{root}: no such folder (the --out of a python -m kvpool preview)")
    if not (folder / MANIFESTS).is_dir():
        return None
    files = {f"{MANIFESTS}/{path.name}": _read(path) for path in sorted((folder / MANIFESTS).glob("*.yaml"))}
    if (folder / OUTPUTS).exists() or (folder / OUTPUTS).is_symlink():
        files[OUTPUTS] = _read(folder / OUTPUTS)
    return files


def _read(path: Path) -> str:
    """A preview's file, never through a link (which could make the diff show any file of the machine); read_text
    refuses what is not a regular file."""
    if path.is_symlink():
        raise PreviewFileError(f"{path}: is a link; kvpool preview writes regular files only: preview again into a "
                               "fresh --out folder")
    return read_text(path)


def _manifest(path: str, text: str) -> dict[str, Any]:
    try:
        body = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise PreviewFileError(f"{path}: is not YAML ({str(error).splitlines()[0]}); preview again") from None
    if not is_object(body):
        raise PreviewFileError(f"{path}: is not one Kubernetes object (a mapping with apiVersion, kind, metadata.name) "
                               "as kvpool preview writes it; preview again")
    return body


def _both_files(old_root: Path, new_root: Path, stack: str) -> tuple[dict[str, str], dict[str, str]]:
    old, new = _files(old_root, stack), _files(new_root, stack)
    if old is None and new is None:
        raise MissingPreviewError(
            f"neither {old_root} nor {new_root} holds a preview of stack {stack!r} (a <stack>/manifests/ folder; "
            f"run python -m kvpool preview --stack {stack} --out <folder>)"
        )
    return old or {}, new or {}


def manifests(root: Path, stack: str) -> dict[str, dict[str, Any]]:
    """The objects of a preview, by manifest file name (none when the folder has no preview of the stack)."""
    found = {
        name.removeprefix(f"{MANIFESTS}/"): _manifest(f"{root}/{stack}/{name}", text)
        for name, text in (_files(root, stack) or {}).items() if name.startswith(f"{MANIFESTS}/")
    }
    # What a preview writes passed the strict schema check: anything else is not a preview's (and the blast radius
    # reads fields by their schema types).
    try:
        validate_written(list(found.values()))
    except ManifestValidationError as error:
        raise PreviewFileError(f"{root}/{stack}/{MANIFESTS}: holds objects kvpool preview would not write: "
                               f"{error}; preview again") from None
    return found


def outputs(root: Path, stack: str) -> dict[str, Any]:
    """The preview's outputs.json (empty when the folder has none, or no preview of the stack)."""
    text = (_files(root, stack) or {}).get(OUTPUTS)
    if not text:
        return {}
    try:
        found = json.loads(text)
    except json.JSONDecodeError as error:
        raise PreviewFileError(f"{root}/{stack}/{OUTPUTS}: is not JSON ({error.msg}); preview again") from None
    if not isinstance(found, dict):
        raise PreviewFileError(f"{root}/{stack}/{OUTPUTS}: is not a JSON object of the stack's outputs; preview again")
    return found


def absent_side(old_root: Path, new_root: Path, stack: str) -> str | None:
    """One line saying that the stack is new or deleted, when one side has no preview of it."""
    old, new = _both_files(old_root, new_root, stack)
    if not old:
        return f"Stack {stack} is new: {old_root} holds no preview of it."
    if not new:
        return f"Stack {stack} is deleted: {new_root} holds no preview of it."
    return None


def changes(old_root: Path, new_root: Path, stack: str, labels: tuple[str, str] | None = None) -> tuple[list[Change], int]:
    """The changes between two previews, and how many files are unchanged. `labels`: the two sides' names in the
    unified diffs' headers (default the folders)."""
    old, new = _both_files(old_root, new_root, stack)
    old_label, new_label = labels or (str(old_root), str(new_root))
    return file_changes(old, new, f"{old_label}/{stack}", f"{new_label}/{stack}")


def live_changes(live: dict[str, dict[str, Any]], new_root: Path, stack: str) -> tuple[list[Change], int]:
    """The changes from the cluster's objects (live_objects.live_manifests) to a preview's manifests."""
    new = {name: text for name, text in (_files(new_root, stack) or {}).items() if name.startswith(f"{MANIFESTS}/")}
    old = {f"{MANIFESTS}/{name}": manifest_text(obj) for name, obj in live.items()}
    return file_changes(old, new, "live", f"{new_root}/{stack}")


def file_changes(old: dict[str, str], new: dict[str, str], old_label: str, new_label: str) -> tuple[list[Change], int]:
    found = []
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            found.append(Change("+", name, []))
        elif name not in new:
            found.append(Change("-", name, []))
        elif old[name] != new[name]:
            diff = difflib.unified_diff(
                old[name].splitlines(), new[name].splitlines(), f"{old_label}/{name}", f"{new_label}/{name}", lineterm="",
            )
            found.append(Change("~", name, list(diff)))
    return found, len(old.keys() & new.keys()) - sum(change.sign == "~" for change in found)


def report(found: list[Change], unchanged: int, indent: str = "") -> list[str]:
    """`indent` goes before every line but the unified diffs' own, which stay unindented so that a ```diff block
    colours them."""
    lines = []
    for change in found:
        label = {"+": "to create", "-": "to delete", "~": "to update"}[change.sign]
        lines.append(f"{indent}{change.sign} {change.name} ({label})")
        lines += change.diff
    counts = {sign: sum(change.sign == sign for change in found) for sign in "+~-"}
    lines.append(f"{indent}Diff: {counts['+']} to create, {counts['~']} to update, {counts['-']} to delete, "
                 f"{unchanged} unchanged")
    return lines
