"""The fleet's offline source: every stack file of the project, with what each stack's preview renders.

An owner's outputs and every stack's objects come from its preview: `<previews>/<stack>/outputs.json` and
`<previews>/<stack>/manifests/` as `python -m kvpool preview --out <previews>` wrote them (what the workflow has at
hand), or, without a previews folder, from running the program under the offline engine as the preview does (a
consumer with its owner's outputs). A consumer whose program refuses to run (its owner is missing, shuts it out,
disagrees with it: the fleet lists why) or that has no preview in the folder renders no objects; its clashes are
checked on its settings and the report says so.

The programs run in a pool of processes, one per core unless told (`--jobs`): the owners first, then the consumers
with the owners' outputs; each run is independent of the others' order (a consumer of a consumer previews that one
itself, as `kvpool preview` does), and the facts come back in the stacks' order, whatever order the runs end in.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config, stack_config_dir, stack_names
from kvpool.cli.engine.stack_references import referenced_stacks, resolve
from kvpool.cli.fleet.clashes import Clash, clashes, footprint_from_settings
from kvpool.cli.fleet.model import StackFacts
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import load_json, load_yaml
from kvpool.internal.local_backend import local_stack_reference
from kvpool.settings.from_stack import settings_from_config
from kvpool.settings.service import PROJECT, ServiceSettings


class MissingPreviewError(KvpoolError):
    """--previews holds no preview of an owner stack."""


def reference(config: StackConfig) -> str:
    return local_stack_reference(config.project, config.stack)


def offline_facts(project_dir: Path, previews: Path | None = None, only: Sequence[str] = (),
                  jobs: int | None = None) -> list[StackFacts]:
    """Every stack file of the project (or the stacks named in `only`); owners first, so that each consumer runs
    with its owner's outputs. `jobs`: processes running the programs (default: one per core; 1: in this one)."""
    # load_stack_config names the stack files there when one is not
    configs = [load_stack_config(project_dir, stack) for stack in only or stack_names(project_dir)]
    owners = [config for config in configs if not referenced_stacks(config)]
    consumers = [config for config in configs if referenced_stacks(config)]
    if previews is not None:
        found = {reference(config): (_owner_outputs(config, previews) if config in owners else None,
                                      *_preview_objects(config, previews)) for config in configs}
    else:
        with _runner(jobs or os.cpu_count() or 1, len(configs)) as run:
            found = dict(zip(map(reference, owners), run(project_dir, owners, {}), strict=True))
            outputs = {stack: own for stack, (own, _, _) in found.items() if own is not None}
            found.update(zip(map(reference, consumers), run(project_dir, consumers, outputs), strict=True))
    facts = []
    for config in configs:
        own, objects, unrendered = found[reference(config)]
        settings = stack_settings(config)
        facts.append(StackFacts(reference(config), settings, own if config in owners else None, objects, unrendered))
    return sorted(facts, key=lambda f: f.reference)


PROGRAM_LIBRARIES = tuple(f"pulumi_kubernetes.{group}" for group in ("apps.v1", "core.v1", "meta.v1", "networking.v1",
                                                                     "rbac.v1"))
"""The Kubernetes SDK modules the program's components declare objects with (`k8s.<group>.<version>`), which the mock
engine keeps between runs: about a second of imports, done once before the workers start instead of in each worker's
first run (one left out is only imported there)."""

Runs = Callable[[Path, list[StackConfig], dict[str, dict]], list[tuple[dict | None, tuple | None, str | None]]]


@contextlib.contextmanager
def _runner(jobs: int, stacks: int) -> Iterator[Runs]:
    """Runs a list of programs, in this process (one job, or one stack) or in a pool of `jobs` processes, answering
    in the list's order. The workers are forked from this process, which has imported what they need, when it runs
    no other thread (the CLI: no program has run yet); else from a fork server: a fork would copy the SDK's threads of
    a program run before (a test session) mid-work."""
    if min(jobs, stacks) <= 1:
        yield lambda project_dir, configs, outputs: [_run(project_dir, config, outputs) for config in configs]
        return
    if threading.active_count() == 1:
        context = multiprocessing.get_context("fork")
        for module in PROGRAM_LIBRARIES:
            importlib.import_module(module)
    else:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload([__name__, *PROGRAM_LIBRARIES])  # imported once, in the server
    with ProcessPoolExecutor(min(jobs, stacks), mp_context=context) as pool:
        yield lambda project_dir, configs, outputs: list(
            pool.map(_run, [project_dir] * len(configs), configs, [outputs] * len(configs)))


def _run(project_dir: Path, config: StackConfig, outputs: dict[str, dict]) -> tuple[dict | None, tuple | None, str | None]:
    """(outputs, objects, why no objects) of the program run as the preview runs it (in a worker process: module
    level, so that the pool can send it there)."""
    try:
        run = run_program(project_dir, config, stack_references=resolve(project_dir, config, outputs))
    except KvpoolError as error:
        if not referenced_stacks(config):
            raise  # an owner's outputs are what its consumers are checked against: no fleet without them
        return None, None, f"its program refuses to run ({str(error).splitlines()[0].rstrip(':')})"
    return run.outputs, tuple(obj.body for obj in kubernetes_objects(run.resources)), None


def consumers_of(project_dir: Path, stack: str, unread: list[str] | None = None) -> tuple[str, list[str]]:
    """(the reference of `stack`, the references of the stacks whose target_stack names it), from the stack files
    alone: what the destroy guard and the owner's pull request need, without running any program. A sibling's file
    that is refused stops the destroy guard (`unread` None: a consumer may be in it); given `unread`, one line saying
    so is appended instead, so that it blocks no other stack's diff (issue 45 §6)."""
    owner = reference(load_stack_config(project_dir, stack))  # refuses a stack without a stack file, naming those there
    consumers = []
    for name in stack_names(project_dir):
        try:
            config = load_stack_config(project_dir, name)
        except KvpoolError as error:
            if unread is None:
                raise
            unread.append(f"stack {name} ({stack_file(project_dir, name)}) may read {stack}'s store, but its stack "
                          f"file is refused: {one_line(error)}")
            continue
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


def is_service_stack(config: StackConfig) -> bool:
    """The stack configures a motor-kvpool service (keys of its `motor-kvpool:` namespace), in a project of any name;
    the preview also runs other Pulumi programs, which have no such settings."""
    return any(key.startswith(f"{PROJECT}:") for key in config.values)


def stack_settings(config: StackConfig) -> ServiceSettings:
    """The service settings of a stack file, read as its program reads them (its project's name included: the one
    target_stack names)."""
    return settings_from_config(config.values, set(config.secret_keys), config.stack, config.project,
                                config.program_dir)


def check_cluster_clashes(project_dir: Path, config: StackConfig) -> list[str]:
    """Refuse `config`'s stack when it asks its cluster for a NodePort or a namespace that another stack file of the
    project deploying to the same cluster asks for; the lines saying which stack files could not be checked."""
    if not is_service_stack(config):
        return []
    settings = stack_settings(config)
    unread: list[str] = []
    found = clashes_with_stack_files(project_dir, reference(config), settings, unread)
    if found:
        others = sorted({_stack(clash.first) for clash in found})
        raise ClusterClashError("\n".join([
            f"stack {config.stack} asks cluster {settings.cluster!r} for what stack {', '.join(others)} of the project "
            "holds there (both deploy to it: top-level setting `cluster`); nothing written:",
            *(f"  [{clash.kind}] {clash.message}" for clash in found),
        ]))
    return unread


def clashes_with_stack_files(
    project_dir: Path, own: str, settings: ServiceSettings, unread: list[str]
) -> list[Clash]:
    """The NodePort and namespace clashes of stack `own` (a reference; `settings`: its settings) with every other
    stack file of the project, the field to change being `own`'s. Cheap enough for every preview: each stack is read
    with the settings loader, without running its program, since its NodePorts are its *_node_port settings and its
    namespace is its job_id exactly as its preview renders them (kvpool/cli/fleet/clashes.py); the host ports and the
    objects outside a namespace, which need the rendered objects, are `kvpool fleet`'s to check. A sibling's file that
    is refused blocks no other stack (issue 45 §6): one line saying so is appended to `unread`."""
    footprints = [footprint_from_settings(own, settings)]
    for name in stack_names(project_dir):
        if name == _stack(own):
            continue
        try:
            other = load_stack_config(project_dir, name)
            other_settings = stack_settings(other)
        except KvpoolError as error:
            unread.append(f"stack {name} ({stack_file(project_dir, name)}) was not checked for what its cluster "
                          f"allocates once (NodePorts, namespaces): its stack file is refused: {one_line(error)}")
            continue
        footprints.append(footprint_from_settings(reference(other), other_settings))
    return [clash for clash in clashes(footprints, changing=own) if own in (clash.first, clash.second)]


def stack_file(project_dir: Path, name: str) -> Path:
    """Where stack `name`'s file is, for a message naming it whether or not it could be read."""
    return (stack_config_dir(project_dir) or project_dir) / f"Pulumi.{name}.yaml"


def one_line(error: KvpoolError) -> str:
    """A refusal on one line: its first line and, for a list of problems, the first of them."""
    lines = str(error).splitlines()
    return lines[0] if len(lines) == 1 else f"{lines[0].rstrip(':')}, the first: {lines[1].strip().removeprefix('- ')}"


def _stack(reference: str) -> str:
    return reference.rsplit("/", 1)[-1]
