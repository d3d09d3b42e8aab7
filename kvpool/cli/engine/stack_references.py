"""Outputs of the stacks a stack references, for an offline preview.

A reference `<org>/<project>/<stack>` whose project is this one and whose organization is the local backend's
(`organization`) is this repository's stacks/Pulumi.<stack>.yaml: it is previewed first (its references too),
so a consumer previews against its provider's real outputs. Other references come from an outputs file
(`--stack-outputs FILE`: {"<org>/<project>/<stack>": {<outputs>}}); anything else is an error naming it.
The program also reads its own stack's last outputs (which engine instances run, kvpool/internal/rollout.py): the
outputs file may give them under the stack's own name; otherwise the offline engine answers none, as for a stack
before its first update, and never previews the stack from within itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import load_json
from kvpool.internal.local_backend import LOCAL_ORGANIZATION, local_stack_reference
from kvpool.settings.service import PROJECT

# The store section under both names Pulumi.yaml declares (each defaults to "{}", so both are always present).
STORE_SECTIONS = ("kv_cache_store_config", "kv_cache_pool_config")


class StackReferenceResolutionError(KvpoolError):
    """A referenced stack can be neither previewed here nor found in the outputs file."""


def referenced_stacks(config: StackConfig) -> list[str]:
    """The stacks this stack's program will reference: the KV store's target_stack."""
    targets = []
    for section in STORE_SECTIONS:
        try:
            # The settings' namespace, whatever the project is called.
            store = json.loads(config.values.get(f"{PROJECT}:{section}") or "{}")
        except json.JSONDecodeError:
            continue  # the program reports the malformed section with its own words
        target = store.get("target_stack") if isinstance(store, dict) else None
        if isinstance(target, str):
            targets.append(target)
    return targets


def read_outputs_file(path: Path) -> dict[str, dict[str, Any]]:
    data = load_json(path, "--stack-outputs")
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise StackReferenceResolutionError(
            f"--stack-outputs {path}: expected {{\"<org>/<project>/<stack>\": {{<outputs>}}}}"
        )
    return data


def resolve(
    project_dir: Path, config: StackConfig, given: Mapping[str, dict[str, Any]] | None = None, chain: tuple[str, ...] = ()
) -> dict[str, dict[str, Any]]:
    """Outputs of every stack `config`'s program references, previewing local ones recursively."""
    given = dict(given or {})
    resolved: dict[str, dict[str, Any]] = {}
    own = local_stack_reference(config.project, config.stack)
    if own in given:
        resolved[own] = given[own]
    for target in referenced_stacks(config):
        if target in given:
            resolved[target] = given[target]
            continue
        organization, project, stack = (target.split("/") + ["", "", ""])[:3]
        if target in chain or target == own:
            raise StackReferenceResolutionError(
                f"{own}: target_stack {target} leads back to itself ({' -> '.join([*chain, own, target])})"
            )
        if organization != LOCAL_ORGANIZATION or project != config.project:
            raise StackReferenceResolutionError(
                f"{own}: target_stack {target} is not a stack of this project on the local backend "
                f"({LOCAL_ORGANIZATION}/{config.project}/<stack>), so it cannot be previewed here; give its outputs "
                f"with --stack-outputs FILE"
            )
        try:
            target_config = load_stack_config(project_dir, stack)
        except KvpoolError as error:
            raise StackReferenceResolutionError(f"{own}: target_stack {target}: {error}") from None
        upstream = resolve(project_dir, target_config, given, (*chain, own))
        resolved[target] = run_program(project_dir, target_config, stack_references=upstream).outputs
    return resolved
