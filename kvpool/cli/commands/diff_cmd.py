"""`python -m kvpool diff`: what changes between two previews of a stack, as a pull request review wants it.

Examples:
    python -m kvpool diff --base HEAD --stack dev         # the working tree against the last commit
    python -m kvpool diff --base origin/main --stack dev  # a pull request's branch against its target
    python -m kvpool diff base out --stack dev            # two previews already written

With --base REF the commit REF is previewed in a temporary `git worktree` with its own program and tooling
(kvpool/cli/views/base_preview.py), the working tree is previewed into --out (default out), and the two are compared.
Compares `<old>/<stack>/` with `<new>/<stack>/` (manifests and outputs.json): lists the objects to create,
update and delete, with a unified diff of each update (unindented, so that a ```diff block colours it), then a
summary line. A stack one side does not have (a folder that exists but holds no `<stack>/`, or a base commit
without its stack file) is new or deleted: every object is to create or to delete. Then the blast radius: the workloads
whose pods roll and why (the changed checksum/<input> or pod template field), the waves each side's engines roll
in and how many keep serving (from the outputs' `engines` and `rollout`), the objects Pulumi replaces
instead of updating, the in-flight requests dropped and whether the KV pool keeps its contents, ending with one
`Blast radius: ...` line for pull request comments. When the stack's `kv_store` output changes, the stacks that
read it are previewed against its old and new outputs and their diffs follow (kvpool/cli/views/consumer_previews.py).
Exit 0 whatever changed, so CI can post the text; --exit-code exits 4 when anything changed (exit_codes.py).

Drift, where the Pulumi CLI is not at hand: with --live, <old> is a folder of the cluster's objects
(`kubectl get deployments,statefulsets,services,configmaps -n dev -o yaml > live/dev.yaml`), compared with the preview
on the fields the preview sets (kvpool/cli/views/live_objects.py); what the cluster changed shows as an update, what it lacks as
an object to create:
    python -m kvpool preview --stack dev && python -m kvpool diff --live live out --stack dev
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from kvpool.cli.commands import exit_codes, options
from kvpool.cli.engine.stack_config import has_stack, load_stack_config
from kvpool.cli.preview import preview
from kvpool.cli.views import blast_radius, blast_radius_report, consumer_previews
from kvpool.cli.views.base_preview import preview_commit
from kvpool.cli.views.diff import (
    absent_side,
    changes,
    live_changes,
    manifests,
    outputs,
    report,
)
from kvpool.cli.views.live_objects import live_manifests, read_live
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import check_stack_name


class DiffArgumentsError(KvpoolError):
    """Neither two folders nor --base, or both."""


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
    options.add_stack(parser)
    parser.add_argument(
        "--project-dir", type=Path, default=Path("."),
        help="folder of Pulumi.yaml: the stack's kubernetes:* config says what the provider updates in place",
    )
    parser.add_argument("--exit-code", action="store_true", help="exit 4 when anything changed (0 when nothing did)")
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
        manifests(old, args.stack), manifests(new, args.stack), blast_radius.mutable_kinds(provider_config),
        outputs(old, args.stack), outputs(new, args.stack),
    )
    consumers = consumer_previews.consumer_lines(old, new, args.stack, args.project_dir)
    print("\n".join([*([absent] if absent else []), *report(found, unchanged), *blast_radius_report.report(radius),
                     *consumers]))
    return exit_codes.HAS_CHANGES if args.exit_code and found else exit_codes.OK


def _live_report(args: argparse.Namespace) -> int:
    new = manifests(args.new, args.stack)
    old = live_manifests(new, read_live(args.old))
    found, unchanged = live_changes(old, args.new, args.stack)
    provider_config = load_stack_config(args.project_dir, args.stack).values
    radius = blast_radius.blast_radius(old, new, blast_radius.mutable_kinds(provider_config))
    print("\n".join([*report(found, unchanged), *blast_radius_report.report(radius)]))
    return exit_codes.HAS_CHANGES if args.exit_code and found else exit_codes.OK
