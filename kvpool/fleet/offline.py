"""The fleet's offline source: every stack file of the project, and the outputs of the stacks that own a store.

An owner's outputs come from its preview: `<previews>/<stack>/outputs.json` as `python -m kvpool preview --out
<previews>` wrote it (what the workflow has at hand), or, without a previews folder, from running the program
under the offline engine as the preview does. A consumer's outputs are not needed: the fleet checks it against
its owner's.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from components.errors import KvpoolError
from components.input_files import load_json
from components.local_backend import LOCAL_ORGANIZATION
from components.pulumi_settings import settings_from_config
from kvpool.engine.mock_engine import run_program
from kvpool.engine.stack_config import StackConfig, load_stack_config, stack_names
from kvpool.engine.stack_references import referenced_stacks
from kvpool.fleet.model import StackFacts


class MissingPreviewError(KvpoolError):
    """--previews holds no preview of an owner stack."""


def reference(config: StackConfig) -> str:
    return f"{LOCAL_ORGANIZATION}/{config.project}/{config.stack}"


def offline_facts(project_dir: Path, previews: Path | None = None, only: Sequence[str] = ()) -> list[StackFacts]:
    """Every stack file of the project (or the stacks named in `only`)."""
    facts = []
    for stack in only or stack_names(project_dir):  # load_stack_config names the stack files there when one is not
        config = load_stack_config(project_dir, stack)
        settings = settings_from_config(config.values, set(config.secret_keys), stack)
        owner = not referenced_stacks(config)
        outputs = _owner_outputs(project_dir, config, previews) if owner else None
        facts.append(StackFacts(reference(config), settings, outputs))
    return facts


def consumers_of(project_dir: Path, stack: str) -> tuple[str, list[str]]:
    """(the reference of `stack`, the references of the stacks whose target_stack names it), from the stack files
    alone: what the destroy guard and the owner's pull request need, without running any program."""
    owner = reference(load_stack_config(project_dir, stack))  # refuses a stack without a stack file, naming those there
    consumers = []
    for name in stack_names(project_dir):
        config = load_stack_config(project_dir, name)
        if owner in referenced_stacks(config):
            consumers.append(reference(config))
    return owner, consumers


def _owner_outputs(project_dir: Path, config: StackConfig, previews: Path | None) -> dict:
    if previews is None:
        return run_program(project_dir, config).outputs
    path = previews / config.stack / "outputs.json"
    if not path.is_file():
        raise MissingPreviewError(
            f"--previews {previews}: no {path} (run python -m kvpool preview --stack {config.stack} --out {previews})"
        )
    return load_json(path, f"--previews {previews}")
