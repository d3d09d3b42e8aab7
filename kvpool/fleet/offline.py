"""The fleet's offline source: every stack file of the project, with what each stack's preview renders.

An owner's outputs and every stack's objects come from its preview: `<previews>/<stack>/outputs.json` and
`<previews>/<stack>/manifests/` as `python -m kvpool preview --out <previews>` wrote them (what the workflow has at
hand), or, without a previews folder, from running the program under the offline engine as the preview does (a
consumer with its owner's outputs). A consumer whose program refuses to run (its owner is missing, shuts it out,
disagrees with it: the fleet lists why) or that has no preview in the folder renders no objects; its clashes are
checked on its settings and the report says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from components.errors import KvpoolError
from components.input_files import load_json, load_yaml
from components.local_backend import LOCAL_ORGANIZATION
from components.pulumi_settings import settings_from_config
from components.settings import PROJECT, ServiceSettings
from kvpool.engine.mock_engine import run_program
from kvpool.engine.stack_config import StackConfig, load_stack_config, stack_names
from kvpool.engine.stack_references import referenced_stacks, resolve
from kvpool.fleet.clashes import Clash, clashes, footprint_from_settings
from kvpool.fleet.model import StackFacts
from kvpool.views.manifests import kubernetes_objects


class MissingPreviewError(KvpoolError):
    """--previews holds no preview of an owner stack."""


def reference(config: StackConfig) -> str:
    return f"{LOCAL_ORGANIZATION}/{config.project}/{config.stack}"


def offline_facts(project_dir: Path, previews: Path | None = None, only: Sequence[str] = ()) -> list[StackFacts]:
    """Every stack file of the project (or the stacks named in `only`); owners first, so that each consumer runs
    with its owner's outputs."""
    # load_stack_config names the stack files there when one is not
    configs = [load_stack_config(project_dir, stack) for stack in only or stack_names(project_dir)]
    outputs: dict[str, dict] = {}
    facts = []
    for config in sorted(configs, key=lambda config: bool(referenced_stacks(config))):
        owner = not referenced_stacks(config)
        settings = settings_from_config(config.values, set(config.secret_keys), config.stack)
        if previews is not None:
            own = _owner_outputs(config, previews) if owner else None
            objects, unrendered = _preview_objects(config, previews)
        else:
            own, objects, unrendered = _run(project_dir, config, outputs)
        if own is not None:
            outputs[reference(config)] = own
        facts.append(StackFacts(reference(config), settings, own if owner else None, objects, unrendered))
    return sorted(facts, key=lambda f: f.reference)


def _run(project_dir: Path, config: StackConfig, outputs: dict[str, dict]) -> tuple[dict | None, tuple | None, str | None]:
    """(outputs, objects, why no objects) of the program run as the preview runs it."""
    try:
        run = run_program(project_dir, config, stack_references=resolve(project_dir, config, outputs))
    except KvpoolError as error:
        if not referenced_stacks(config):
            raise  # an owner's outputs are what its consumers are checked against: no fleet without them
        return None, None, f"its program refuses to run ({str(error).splitlines()[0].rstrip(':')})"
    return run.outputs, tuple(obj.body for obj in kubernetes_objects(run.resources)), None


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


def _preview_objects(config: StackConfig, previews: Path) -> tuple[tuple | None, str | None]:
    folder = previews / config.stack / "manifests"
    if not folder.is_dir():
        return None, f"no {folder} (python -m kvpool preview --stack {config.stack} --out {previews} writes it)"
    return tuple(load_yaml(path, f"--previews {previews}") for path in sorted(folder.glob("*.yaml"))), None


def _owner_outputs(config: StackConfig, previews: Path) -> dict:
    path = previews / config.stack / "outputs.json"
    if not path.is_file():
        raise MissingPreviewError(
            f"--previews {previews}: no {path} (run python -m kvpool preview --stack {config.stack} --out {previews})"
        )
    return load_json(path, f"--previews {previews}")


class ClusterClashError(KvpoolError):
    """The stack asks its cluster for what another stack of the same cluster holds."""


def check_cluster_clashes(project_dir: Path, config: StackConfig) -> None:
    """Refuse `config`'s stack when it asks its cluster for a NodePort or a namespace that another stack file of the
    project deploying to the same cluster asks for. Another project's program (the preview runs any Pulumi program)
    has no such settings: nothing to check there."""
    if config.project != PROJECT:
        return
    settings = settings_from_config(config.values, set(config.secret_keys), config.stack)
    found = clashes_with_stack_files(project_dir, reference(config), settings)
    if found:
        others = sorted({_stack(clash.first) for clash in found})
        raise ClusterClashError("\n".join([
            f"stack {config.stack} asks cluster {settings.cluster!r} for what stack {', '.join(others)} of the project "
            "holds there (both deploy to it: top-level setting `cluster`); nothing written:",
            *(f"  [{clash.kind}] {clash.message}" for clash in found),
        ]))


def clashes_with_stack_files(project_dir: Path, own: str, settings: ServiceSettings) -> list[Clash]:
    """The NodePort and namespace clashes of stack `own` (a reference; `settings`: its settings) with every other
    stack file of the project, the field to change being `own`'s. Cheap enough for every preview: each stack is read
    with the settings loader, without running its program, since its NodePorts are its *_node_port settings and its
    namespace is its job_id exactly as its preview renders them (kvpool/fleet/clashes.py); the host ports and the
    objects outside a namespace, which need the rendered objects, are `kvpool fleet`'s to check."""
    footprints = [footprint_from_settings(own, settings)]
    for name in stack_names(project_dir):
        other = load_stack_config(project_dir, name)
        if reference(other) == own:
            continue
        try:
            other_settings = settings_from_config(other.values, set(other.secret_keys), name)
        except KvpoolError as error:
            raise ClusterClashError(
                f"stack {_stack(own)} is checked against every stack file of the project for what their cluster "
                f"allocates once, but stack {name}'s file is refused: {error}\nfix {name}'s stack file, or move it "
                f"out of the stacks folder"
            ) from None
        footprints.append(footprint_from_settings(reference(other), other_settings))
    return [clash for clash in clashes(footprints, changing=own) if own in (clash.first, clash.second)]


def _stack(reference: str) -> str:
    return reference.rsplit("/", 1)[-1]
