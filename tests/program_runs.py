"""Run this repository's Pulumi program under the offline mock engine and index what it rendered."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from kvpool.cli.engine.mock_engine import ProgramRun, run_program
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.internal.motor_config import MOTOR_FILES

PROJECT_DIR = Path(__file__).resolve().parent.parent
PROJECT = "motor-kvpool"
COMPONENT_PROGRAM = PROJECT_DIR / "tests" / "fixtures" / "programs" / "one-component"
_component: list[Callable[[], object]] = []  # what COMPONENT_PROGRAM builds, during render_component only


@dataclass
class Rendered:
    run: ProgramRun
    objects: dict[tuple[str, str], dict[str, Any]]  # (kind, name) -> manifest

    def get(self, kind: str, name: str) -> dict[str, Any]:
        return self.objects[(kind, name)]

    def names(self, kind: str) -> list[str]:
        return sorted(name for (k, name) in self.objects if k == kind)

    def container(self, kind: str, name: str, container: str) -> dict[str, Any]:
        spec = self.get(kind, name)["spec"]["template"]["spec"]
        return next(c for c in spec["containers"] if c["name"] == container)


def deployer_folder(root: Path, motor_checkout: Path, marker: str = "", only: str | None = None) -> Path:
    """A folder laid out like Motor's examples/deployer, each file holding its own path (not Motor's code) and
    `marker` (every file, or only the one of motor-config key `only`), in a checkout at `root` whose motor/ is
    Motor's (linked): the settings check the Motor sections against its classes."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "motor").symlink_to(motor_checkout / "motor")
    folder = root / "examples" / "deployer"
    for key, relative in MOTOR_FILES:
        (folder / relative).parent.mkdir(parents=True, exist_ok=True)
        (folder / relative).write_text(f"# {relative}{marker if only in (None, key) else ''}\n")
    return folder


def stack_values(stack: str) -> dict[str, Any]:
    """The motor-kvpool:* keys of stacks/Pulumi.<stack>.yaml, without the prefix."""
    config = yaml.safe_load((PROJECT_DIR / "stacks" / f"Pulumi.{stack}.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: copy.deepcopy(value) for key, value in config.items() if key.startswith(PROJECT)}


def project_with_stacks(root: Path, stacks: dict[str, dict[str, Any]]) -> Path:
    """A project folder at `root` holding this program and the given stacks (motor-kvpool:* values, without the
    prefix) as its stack files."""
    (root / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py", "kvpool"):
        (root / name).symlink_to(PROJECT_DIR / name)
    for stack, values in stacks.items():
        config = {f"{PROJECT}:{key}": value for key, value in values.items()}
        (root / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": config}))
    return root


def render(values: dict[str, Any], stack: str = "svc", stack_references: dict | None = None,
           secret_keys: tuple[str, ...] = ()) -> Rendered:
    """Run the program with these motor-kvpool:* values (objects, not strings) as the stack's config; `secret_keys`:
    the keys (without the prefix) the stack holds as secrets, e.g. secret_env."""
    config = StackConfig(
        project=PROJECT,
        stack=stack,
        values={
            f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value)
            for key, value in values.items()
        },
        secret_keys=[f"{PROJECT}:{key}" for key in secret_keys],
    )
    run = run_program(PROJECT_DIR, config, stack_references=stack_references)
    return Rendered(run, {(o.kind, o.name): o.body for o in kubernetes_objects(run.resources)})


def render_stack(stack: str) -> Rendered:
    run = run_program(PROJECT_DIR, load_stack_config(PROJECT_DIR, stack))
    return Rendered(run, {(o.kind, o.name): o.body for o in kubernetes_objects(run.resources)})


def render_component(build: Callable[[], object]) -> Rendered:
    """Run `build`, which creates one component from its arguments, as the whole program: what the component renders
    from its arguments alone, with no stack and no service settings."""
    _component.append(build)
    try:
        run = run_program(COMPONENT_PROGRAM, StackConfig(project=PROJECT, stack="svc", values={}, secret_keys=[]))
    finally:
        _component.clear()
    return Rendered(run, {(o.kind, o.name): o.body for o in kubernetes_objects(run.resources)})


def build_component() -> None:
    """COMPONENT_PROGRAM's body."""
    _component[0]()


def env_of(container: dict[str, Any]) -> dict[str, Any]:
    return {entry["name"]: entry.get("value", entry.get("valueFrom")) for entry in container["env"]}
