"""`python -m kvpool diff`: what changes between two previews of a stack, as a pull request review wants it.

Examples:
    git stash && python -m kvpool preview --stack dev --out base && git stash pop
    python -m kvpool preview --stack dev && python -m kvpool diff base out --stack dev

Compares `<old>/<stack>/` with `<new>/<stack>/` (manifests and outputs.json): lists the objects to create,
update and delete, with a unified diff of each update, then a summary line; then the blast radius: the workloads
whose pods roll and why (the changed checksum/<input> or pod template field), the waves each side's engines roll
in and how many keep serving (from the outputs' `engines` and `rollout`), the objects Pulumi replaces
instead of updating, the in-flight requests dropped and whether the KV pool keeps its contents, ending with one
`Blast radius: ...` line for pull request comments. Exit 0 whatever changed, so CI can post the text;
--exit-code exits 1 when anything changed.
"""

from __future__ import annotations

import argparse
import difflib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.errors import KvpoolError
from kvpool import blast_radius, blast_radius_report
from kvpool.stack_config import load_stack_config
from components.input_files import check_stack_name, read_text

MANIFESTS = "manifests"
OUTPUTS = "outputs.json"


class MissingPreviewError(KvpoolError):
    """A folder holds no preview of the stack."""


@dataclass(frozen=True)
class Change:
    sign: str  # "+", "-" or "~"
    name: str  # manifests/<file>.yaml or outputs.json, below <root>/<stack>/
    diff: list[str]


def _files(root: Path, stack: str) -> dict[str, str]:
    folder = root / check_stack_name(stack)
    if not (folder / MANIFESTS).is_dir():
        raise MissingPreviewError(f"{folder}: no preview of stack {stack!r} (run python -m kvpool preview --stack "
                                  f"{stack} --out {root})")
    files = {
        f"{MANIFESTS}/{path.name}": read_text(path) for path in sorted((folder / MANIFESTS).glob("*.yaml"))
    }
    if (folder / OUTPUTS).is_file():
        files[OUTPUTS] = read_text(folder / OUTPUTS)
    return files


def manifests(root: Path, stack: str) -> dict[str, dict[str, Any]]:
    """The objects of a preview, by manifest file name."""
    return {
        name.removeprefix(f"{MANIFESTS}/"): yaml.safe_load(text)
        for name, text in _files(root, stack).items() if name.startswith(f"{MANIFESTS}/")
    }


def outputs(root: Path, stack: str) -> dict[str, Any]:
    """The preview's outputs.json (empty when the folder has none)."""
    text = _files(root, stack).get(OUTPUTS)
    return json.loads(text) if text else {}


def changes(old_root: Path, new_root: Path, stack: str) -> tuple[list[Change], int]:
    """The changes between two previews, and how many files are unchanged."""
    old, new = _files(old_root, stack), _files(new_root, stack)
    found = []
    for name in sorted(old.keys() | new.keys()):
        if name not in old:
            found.append(Change("+", name, []))
        elif name not in new:
            found.append(Change("-", name, []))
        elif old[name] != new[name]:
            diff = difflib.unified_diff(
                old[name].splitlines(), new[name].splitlines(), f"{old_root}/{stack}/{name}", f"{new_root}/{stack}/{name}",
                lineterm="",
            )
            found.append(Change("~", name, list(diff)))
    return found, len(old.keys() & new.keys()) - sum(change.sign == "~" for change in found)


def report(found: list[Change], unchanged: int) -> list[str]:
    lines = []
    for change in found:
        label = {"+": "to create", "-": "to delete", "~": "to update"}[change.sign]
        lines.append(f"{change.sign} {change.name} ({label})")
        lines += [f"    {line}" for line in change.diff]
    counts = {sign: sum(change.sign == sign for change in found) for sign in "+~-"}
    lines.append(f"Diff: {counts['+']} to create, {counts['~']} to update, {counts['-']} to delete, {unchanged} unchanged")
    return lines


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "diff", help="what changes between two previews of a stack", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", type=Path, help="the earlier preview's output folder (its --out)")
    parser.add_argument("new", type=Path, help="the later preview's output folder")
    parser.add_argument("--stack", required=True)
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."),
        help="folder of Pulumi.yaml: the stack's kubernetes:* config says what the provider updates in place",
    )
    parser.add_argument("--exit-code", action="store_true", help="exit 1 when anything changed")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    found, unchanged = changes(args.old, args.new, args.stack)
    provider_config = load_stack_config(args.project_dir, args.stack).values
    radius = blast_radius.blast_radius(
        manifests(args.old, args.stack), manifests(args.new, args.stack), blast_radius.mutable_kinds(provider_config),
        outputs(args.old, args.stack), outputs(args.new, args.stack),
    )
    print("\n".join([*report(found, unchanged), *blast_radius_report.report(radius)]))
    return 1 if args.exit_code and found else 0
