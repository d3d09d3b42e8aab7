"""The fleet's second source: the stacks of a Pulumi backend, read through the SDK's Automation API.

`pulumi.automation.LocalWorkspace` over the project folder drives the `pulumi` CLI: `whoami` (which backend),
`stack ls` (the project's stacks there), and per stack `config --show-secrets --json` (the config the program
received: Pulumi.yaml's defaults and the stack file, merged by the CLI, as the offline source merges them),
`stack output --json` (what its last `pulumi up` exported) and `stack export --show-secrets` (its state: each
Kubernetes object as the API server returned it after that `pulumi up`, which the cluster's clashes are checked on,
as the offline source checks them on the objects a preview renders). No backend or state file is read by hand, so
any backend the CLI logs in to works. Every stack must have been up: its outputs are what the fleet checks.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

from pulumi import automation

from kvpool.cli.engine.property_values import SECRET_SIGNATURE, SIGNATURE_KEY
from kvpool.cli.fleet.model import StackFacts
from kvpool.cli.views.manifests import is_object
from kvpool.errors import KvpoolError
from kvpool.internal.local_backend import local_stack_reference
from kvpool.settings.from_stack import settings_from_config

T = TypeVar("T")
OFFLINE_HINT = "or read the stack files instead (kvpool fleet without --source backend)"


class BackendError(KvpoolError):
    """The backend cannot be read: no `pulumi` CLI, not logged in, no such stack, a stack that was never up."""


def _cli(what: str, call: Callable[[], T]) -> T:
    """A CLI command's own error line, and which command it was, instead of the Automation API's dump."""
    try:
        return call()
    except automation.errors.CommandError as error:
        lines = [line for line in str(error).splitlines() if line.strip().startswith("error:")]
        reason = lines[-1].strip() if lines else str(error).strip().splitlines()[-1]
        raise BackendError(f"`pulumi {what}` failed: {reason}") from None


def _workspace(project_dir: Path) -> automation.LocalWorkspace:
    try:
        return automation.LocalWorkspace(work_dir=str(project_dir))
    except FileNotFoundError:
        raise BackendError(
            "`pulumi` is not on PATH: --source backend reads the stacks through the Pulumi CLI; install it "
            f"(https://www.pulumi.com/docs/install/) and log in to the stacks' backend, {OFFLINE_HINT}"
        ) from None


def stack_reference(summary: automation.StackSummary, project: str) -> str:
    if summary.url:  # Pulumi Cloud names its stacks' pages .../<org>/<project>/<stack>
        return "/".join(urlparse(summary.url).path.strip("/").split("/")[-3:])
    return local_stack_reference(project, summary.name)  # a file backend's stacks have this one organization


def backend_facts(project_dir: Path, only: Sequence[str] = ()) -> list[StackFacts]:
    """Every stack of the project in the backend the CLI is logged in to (or those named in `only`)."""
    workspace = _workspace(project_dir)
    try:
        backend = workspace.who_am_i().url
    except automation.errors.CommandError:
        raise BackendError(
            "the Pulumi CLI is not logged in to a backend: run `pulumi login` (Pulumi Cloud, or give the backend's "
            f"URL, e.g. `pulumi login file://~/.pulumi-state`), or set PULUMI_BACKEND_URL; {OFFLINE_HINT}"
        ) from None
    project = workspace.project_settings().name
    summaries = {summary.name: summary for summary in _cli("stack ls", workspace.list_stacks)}
    if not summaries:
        raise BackendError(f"project {project} has no stack in backend {backend}: create one with `pulumi stack "
                           f"init NAME` and `pulumi up -s NAME` (or log in to the backend that holds them)")
    unknown = [name for name in only if name not in summaries]
    if unknown:
        raise BackendError(f"no stack {', '.join(unknown)} of project {project} in backend {backend} (its stacks: "
                           f"{', '.join(sorted(summaries))})")
    facts = []
    for name in sorted(only or summaries):
        outputs = _cli(f"stack output -s {name}", lambda name=name: workspace.stack_outputs(name))
        if not outputs:
            raise BackendError(
                f"stack {name} in backend {backend} has no outputs: it was never up. Run `pulumi up -s {name}`, "
                f"remove it (`pulumi stack rm {name}`), or leave it out by naming the others with --stack"
            )
        config = _cli(f"config -s {name}", lambda name=name: workspace.get_all_config(name))
        settings = settings_from_config({key: value.value for key, value in config.items()},
                                        {key for key, value in config.items() if value.secret},
                                        name.rsplit("/", 1)[-1], project, project_dir)
        state = _cli(f"stack export -s {name}", lambda name=name: workspace.export_stack(name))
        facts.append(StackFacts(stack_reference(summaries[name], project), settings,
                                {key: output.value for key, output in outputs.items()},
                                state_objects(state.deployment or {})))
    return facts


def state_objects(deployment: Mapping[str, Any]) -> tuple[dict[str, Any], ...]:
    """The Kubernetes objects of a stack's state (the `deployment` of `pulumi stack export --show-secrets`): each
    resource of the Kubernetes provider as the API server returned it, without the provider's own `__` keys (its
    inputs, its field manager) and the status; secrets in their plain value. A resource waiting to be deleted is
    not counted: the next `pulumi up` deletes it, and neither is one the stack only read (`external`: a consumer
    reads its owner's store Endpoints)."""
    objects = []
    for resource in deployment.get("resources") or []:
        if not resource.get("type", "").startswith("kubernetes:") or resource.get("delete") or resource.get("external"):
            continue
        live = _plain(resource.get("outputs") or {})
        body = {key: value for key, value in live.items() if not key.startswith("__") and key != "status"}
        if is_object(body):  # a component (a ConfigGroup, a chart) has no object of its own
            objects.append(body)
    return tuple(objects)


def _plain(value: Any) -> Any:
    """A state's value with each secret (`{<sig>: <secret sig>, "plaintext": <its JSON>}`) replaced by the value."""
    if isinstance(value, dict):
        if value.get(SIGNATURE_KEY) == SECRET_SIGNATURE and "plaintext" in value:
            return _plain(json.loads(value["plaintext"]))
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value
