"""`python -m kvpool diff`: what changes between two previews of a stack, as a pull request review wants it.

Examples:
    python -m kvpool diff --base HEAD --stack dev         # the working tree against the last commit
    python -m kvpool diff --base origin/main --stack dev  # a pull request's branch against its target
    python -m kvpool diff base out --stack dev            # two previews already written

With --base REF the commit REF is previewed in a temporary `git worktree` with its own program and tooling
(kvpool/base_preview.py), the working tree is previewed into --out (default out), and the two are compared.
Compares `<old>/<stack>/` with `<new>/<stack>/` (manifests and outputs.json): lists the objects to create,
update and delete, with a unified diff of each update (unindented, so that a ```diff block colours it), then a
summary line. A stack one side does not have (a folder that exists but holds no `<stack>/`, or a base commit
without its stack file) is new or deleted: every object is to create or to delete. Then the blast radius: the workloads
whose pods roll and why (the changed checksum/<input> or pod template field), the objects Pulumi replaces
instead of updating, the in-flight requests dropped and whether the KV pool keeps its contents, ending with one
`Blast radius: ...` line for pull request comments. When the stack's `kv_store` output changes, the stacks that
read it are previewed against its old and new outputs and their diffs follow (kvpool/consumer_previews.py).
Exit 0 whatever changed, so CI can post the text; --exit-code exits 1 when anything changed.

Drift, where the Pulumi CLI is not at hand: with --live, <old> is a folder of the cluster's objects
(`kubectl get deployments,statefulsets,services,configmaps -n dev -o yaml > live/dev.yaml`), compared with the preview
on the fields the preview sets (kvpool/live_objects.py); what the cluster changed shows as an update, what it lacks as
an object to create:
    python -m kvpool preview --stack dev && python -m kvpool diff --live live out --stack dev
"""

from __future__ import annotations

import argparse
import difflib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from components.errors import KvpoolError
from components.input_files import check_stack_name, read_text
from kvpool import blast_radius, blast_radius_report, consumer_previews
from kvpool.base_preview import preview_commit
from kvpool.live_objects import live_manifests, read_live
from kvpool.manifests import manifest_text
from kvpool.preview import preview
from kvpool.stack_config import has_stack, load_stack_config

MANIFESTS = "manifests"
OUTPUTS = "outputs.json"


class MissingPreviewError(KvpoolError):
    """A folder holds no preview of the stack."""


class DiffArgumentsError(KvpoolError):
    """Neither two folders nor --base, or both."""


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
    files = {
        f"{MANIFESTS}/{path.name}": read_text(path) for path in sorted((folder / MANIFESTS).glob("*.yaml"))
    }
    if (folder / OUTPUTS).is_file():
        files[OUTPUTS] = read_text(folder / OUTPUTS)
    return files


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
    return {
        name.removeprefix(f"{MANIFESTS}/"): yaml.safe_load(text)
        for name, text in (_files(root, stack) or {}).items() if name.startswith(f"{MANIFESTS}/")
    }


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


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "diff", help="what changes between two previews of a stack", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("old", type=Path, nargs="?", help="the earlier preview's output folder (its --out), or with "
                        "--live a folder of the cluster's objects (`kubectl get -o yaml` output)")
    parser.add_argument("new", type=Path, nargs="?", help="the later preview's output folder")
    parser.add_argument(
        "--base", metavar="REF",
        help="a git commit (HEAD, origin/main, a sha): preview it in a temporary worktree and the working tree into "
             "--out, then compare them (instead of OLD NEW)",
    )
    parser.add_argument("--out", type=Path, default=Path("out"), help="with --base: the working tree's preview folder")
    parser.add_argument("--live", action="store_true",
                        help="OLD holds the cluster's objects: show what drifted from the preview NEW")
    parser.add_argument("--stack", required=True)
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."),
        help="folder of Pulumi.yaml: the stack's kubernetes:* config says what the provider updates in place",
    )
    parser.add_argument("--exit-code", action="store_true", help="exit 1 when anything changed")
    parser.set_defaults(handler=run)
    return parser


def run(args: argparse.Namespace) -> int:
    folders = [folder for folder in (args.old, args.new) if folder is not None]
    if len(folders) != (0 if args.base else 2):
        raise DiffArgumentsError("give either two preview folders (OLD NEW) or --base REF, not both")
    if args.live:
        if args.base:
            raise DiffArgumentsError("--live compares the cluster's objects with a preview: give LIVE NEW, not --base")
        return _live_report(args)
    if args.base is None:
        return _report(args, args.old, args.new, (str(args.old), str(args.new)))
    with tempfile.TemporaryDirectory(prefix="kvpool-diff-") as temporary:
        old = Path(temporary) / "base"
        old.mkdir()
        preview_commit(args.project_dir, args.base, args.stack, old)
        args.out.mkdir(parents=True, exist_ok=True)
        if has_stack(args.project_dir, args.stack):
            preview(args.project_dir, args.stack, args.out)
        else:  # deleted: an older preview of it in --out must not stand for the working tree
            shutil.rmtree(args.out / check_stack_name(args.stack), ignore_errors=True)
        return _report(args, old, args.out, (args.base, str(args.out)))


def _report(args: argparse.Namespace, old: Path, new: Path, labels: tuple[str, str]) -> int:
    found, unchanged = changes(old, new, args.stack, labels)
    absent = absent_side(old, new, args.stack)
    # The provider's in-place switches matter only to an object both sides hold.
    provider_config = {} if absent else load_stack_config(args.project_dir, args.stack).values
    radius = blast_radius.blast_radius(
        manifests(old, args.stack), manifests(new, args.stack), blast_radius.mutable_kinds(provider_config)
    )
    consumers = consumer_previews.consumer_lines(old, new, args.stack, args.project_dir)
    print("\n".join([*([absent] if absent else []), *report(found, unchanged), *blast_radius_report.report(radius),
                     *consumers]))
    return 1 if args.exit_code and found else 0


def _live_report(args: argparse.Namespace) -> int:
    new = manifests(args.new, args.stack)
    old = live_manifests(new, read_live(args.old))
    found, unchanged = live_changes(old, args.new, args.stack)
    provider_config = load_stack_config(args.project_dir, args.stack).values
    radius = blast_radius.blast_radius(old, new, blast_radius.mutable_kinds(provider_config))
    print("\n".join([*report(found, unchanged), *blast_radius_report.report(radius)]))
    return 1 if args.exit_code and found else 0
