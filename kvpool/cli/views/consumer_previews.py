"""The blast radius of an owner's change across services, for `python -m kvpool diff`.

When a change alters an owner stack's `kv_store` output, every consumer's engines change on its next `pulumi up`.
For each stack whose stack file's target_stack names the owner, this previews the consumer twice, against the
owner's old and new outputs (`<old>/<owner>/outputs.json`, `<new>/<owner>/outputs.json`, as --stack-outputs), and
reports what changes between the two with the same diff and blast radius as the owner's own; a consumer that no
longer previews against the new outputs says why (its contract checks name both stacks).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.model import stack_name
from kvpool.cli.fleet.offline import consumers_of
from kvpool.cli.preview import default_policy_pack, preview
from kvpool.cli.views import blast_radius, blast_radius_report, diff
from kvpool.components.kv_store.contract import OUTPUT
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import load_json


def _outputs(root: Path, stack: str) -> dict | None:
    path = root / stack / diff.OUTPUTS
    return load_json(path) if path.is_file() else None  # a file of the preview folder, bounded as every input


def consumer_lines(old_root: Path, new_root: Path, owner: str, project_dir: Path) -> list[str]:
    """Nothing when the owner's kv_store output is unchanged (or the old preview has no outputs)."""
    old, new = _outputs(old_root, owner), _outputs(new_root, owner)
    if old is None or new is None or old.get(OUTPUT) == new.get(OUTPUT):
        return []
    unread: list[str] = []
    reference, consumers = consumers_of(project_dir, owner, unread)
    names = ", ".join(stack_name(consumer) for consumer in consumers) or "none"
    lines = ["", f"{owner}'s {OUTPUT} output changes; the stacks that read it: {names}", *unread]
    pack = default_policy_pack(project_dir)
    with tempfile.TemporaryDirectory(prefix="kvpool-consumers-") as work:
        for consumer in map(stack_name, consumers):
            lines.append(f"Consumer {consumer}, previewed against {owner}'s new outputs:")
            try:
                for side, outputs in (("old", old), ("new", new)):
                    preview(project_dir, consumer, Path(work) / side, stack_references={reference: outputs},
                            policy_pack=pack)
            except KvpoolError as error:
                lines += [f"  {line}" for line in f"does not preview ({side} outputs): {error}".splitlines()]
                continue
            found, unchanged = diff.changes(Path(work) / "old", Path(work) / "new", consumer)
            radius = blast_radius.blast_radius(
                diff.manifests(Path(work) / "old", consumer), diff.manifests(Path(work) / "new", consumer),
                blast_radius.mutable_kinds(load_stack_config(project_dir, consumer).values),
            )
            text = [*diff.report(found, unchanged, indent="  "), *(f"  {line}" for line in blast_radius_report.report(radius))]
            lines += [line.replace(f"{work}/", "") for line in text]  # `--- old/<consumer>/...`: no temp path
    return lines
