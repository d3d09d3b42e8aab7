"""Run a Pulumi program directory under the SDK's mock monitor and record what the engine would receive.

No CLI, plugin or cluster is involved: `pulumi.runtime.set_mocks` replaces the engine, a recording monitor
keeps every registration (inputs decoded with their secret paths), and the stack's exports are read back
through the SDK's own serializer. Each run starts from clean SDK state, so runs in one process (tests, a
preview that also previews a referenced stack) do not see each other's leftovers.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import runpy
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi.runtime
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime.proto import resource_pb2

from kvpool.cli.engine.property_values import PropertyPath, decode_properties
from kvpool.cli.engine.provider_naming import named_metadata
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.errors import KvpoolError
from kvpool.internal import sdk_internals
from kvpool.internal.local_backend import LOCAL_ORGANIZATION, local_stack_reference

STACK_TYPE = "pulumi:pulumi:Stack"
STACK_REFERENCE_TYPE = "pulumi:pulumi:StackReference"


class MockEngineError(KvpoolError):
    """The program asked the offline engine for something it cannot provide."""


class StackReferenceError(MockEngineError):
    """A StackReference names a stack whose outputs this run was not given."""


class ProgramError(KvpoolError):
    """The program stopped with a user-facing error (pulumi.RunError or a KvpoolError); message only."""


@dataclass(frozen=True)
class RecordedResource:
    type: str
    name: str
    urn: str
    parent_urn: str | None
    custom: bool
    inputs: dict[str, Any]
    """Plain values as the engine received them (numbers are floats; secrets unwrapped)."""
    secret_paths: tuple[PropertyPath, ...] = ()
    unknown_paths: tuple[PropertyPath, ...] = ()
    """Values a preview cannot know yet; they read as `[unknown]` in `inputs`."""
    provider: str | None = None
    resource_id: str | None = None
    """For reads and imports: the id of the existing resource."""
    read: bool = False
    """Read from the engine (`Resource.get`, a StackReference), not registered: no manifest, no Analyze call."""
    protect: bool = False
    retain_on_delete: bool = False
    dependencies: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    """The URNs it says it had before (its own aliases, sorted; not those a parent's aliases imply)."""


@dataclass(frozen=True)
class ProgramRun:
    project: str
    stack: str
    resources: list[RecordedResource]
    """Sorted by URN."""
    outputs: dict[str, Any]
    """What the program exported, resolved to plain values (numbers are floats, as the engine stores them)."""
    secret_output_paths: tuple[PropertyPath, ...] = ()
    unknown_output_paths: tuple[PropertyPath, ...] = ()
    log_messages: list[str] = field(default_factory=list)
    """`pulumi.log` messages as `"<level>: <message>"`, sorted."""

    @property
    def stack_urn(self) -> str:
        return f"urn:pulumi:{self.stack}::{self.project}::{STACK_TYPE}::{self.project}-{self.stack}"

    def resource(self, type_: str, name: str) -> RecordedResource:
        """The one resource with this type and logical name (registration order is not deterministic)."""
        matches = [r for r in self.resources if r.type == type_ and r.name == name]
        if len(matches) != 1:
            raise LookupError(f"{len(matches)} resources of type {type_} named {name!r}")
        return matches[0]


def run_program(
    project_dir: Path,
    config: StackConfig,
    *,
    stack_references: Mapping[str, dict] | None = None,
    preview: bool = True,
    on_registered: Callable[[RecordedResource], None] | None = None,
) -> ProgramRun:
    """Run the project's program (`config.program`, else `<project_dir>/__main__.py`) as `pulumi preview` (or `up`
    when preview=False) would, against mocks, in the program's folder.

    `stack_references` maps a referenced stack's full name (`organization/<project>/<stack>`) to its outputs.
    A reference to the running stack itself reads its outputs as its last update left them: those given there,
    else none (a stack before its first update), as the real engine answers; it never previews the stack again.
    `on_registered` is called with each resource as it is recorded (on the SDK's executor threads), as the engine
    hands each registration to its analyzers.
    Raises ProgramError for a user-facing program error, a MockEngineError for what the offline engine cannot
    answer; any other exception is a bug in the program or this tool and propagates unchanged.
    """
    # The program Pulumi.yaml's `main` names, run in its own folder as the CLI runs it (else the project's __main__.py).
    program = Path(project_dir).resolve() / "__main__.py" if config.program is None else Path(config.program).absolute()
    project_dir = program.parent
    if not program.is_file():
        raise ProgramError(f"no {program.name} in {project_dir}: the program to run")
    log_messages: list[str] = []
    own = local_stack_reference(config.project, config.stack)
    monitor = _RecordingMonitor(_OfflineMocks(dict(stack_references or {}), own), on_registered)
    loop = _fresh_event_loop()
    # A user-facing failure keeps its message, not its traceback: the traceback's frames hold the failed
    # run's outputs, which must be collected (quietly) when the loop closes, not later in the caller.
    failure: KvpoolError | None = None
    try:
        with _program_environment(project_dir):
            _reset_sdk_state()
            pulumi.runtime.set_all_config(dict(config.values), list(config.secret_keys))
            sdk_internals.set_mocks_without_root_stack(
                monitor.mocks,
                project=config.project,
                stack=config.stack,
                preview=preview,
                logger=_collecting_logger(log_messages),
                monitor=monitor,
                organization=LOCAL_ORGANIZATION,
            )
            exported = loop.run_until_complete(_run_and_serialize_exports(str(program)))
    except MockEngineError as error:
        failure = error
    except (pulumi.RunError, KvpoolError) as error:
        failure = ProgramError(str(error))
    finally:
        with _unawaited_outputs_ignored():
            _reset_sdk_state()  # first: the root stack holds the run's outputs, which the loop's closing collects
            _close_event_loop(loop)
            if failure is not None:
                # Stripped only now: closing the loop can raise the same exception in a pending task again.
                failure = failure.with_traceback(None)
    if failure is not None:
        raise failure from None
    outputs = decode_properties(exported)
    return ProgramRun(
        project=config.project,
        stack=config.stack,
        resources=sorted(monitor.recorded.values(), key=lambda r: r.urn),
        outputs=outputs.values,
        secret_output_paths=outputs.secret_paths,
        unknown_output_paths=outputs.unknown_paths,
        log_messages=sorted(log_messages),
    )


async def _run_and_serialize_exports(program: str) -> Any:
    return await sdk_internals.run_program(lambda: runpy.run_path(program, run_name="__main__"))


class _OfflineMocks(pulumi_mocks.Mocks):
    def __init__(self, stack_references: dict[str, dict], own_stack: str) -> None:
        self.stack_references = stack_references
        self.own_stack = own_stack

    def new_resource(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str, dict]:
        if args.typ == STACK_REFERENCE_TYPE:
            return self._stack_reference(args)
        state = dict(args.inputs)
        if args.typ.startswith("kubernetes:") and args.custom:
            metadata = named_metadata(state.get("metadata"), args.name)
            state["metadata"] = metadata
            namespace = metadata.get("namespace")
            return (f"{namespace}/{metadata['name']}" if namespace else str(metadata["name"])), state
        return (f"{args.name}-id" if args.custom else ""), state

    def _stack_reference(self, args: pulumi_mocks.MockResourceArgs) -> tuple[str, dict]:
        stack_name = str(args.resource_id)
        if stack_name == self.own_stack and stack_name not in self.stack_references:
            return stack_name, {"name": stack_name, "outputs": {}}  # before its first update a stack has no outputs
        if stack_name not in self.stack_references:
            known = ", ".join(sorted(self.stack_references)) or "none"
            named = f" (StackReference '{args.name}')" if args.name != stack_name else ""
            raise StackReferenceError(
                f"the program references stack '{stack_name}'{named}, but this preview has no outputs "
                f"for it (known stacks: {known})"
            )
        return stack_name, {"name": stack_name, "outputs": self.stack_references[stack_name]}

    def call(self, args: pulumi_mocks.MockCallArgs) -> tuple[dict, None]:
        raise MockEngineError(
            f"the program calls the provider function '{args.token}', which the offline preview cannot answer"
        )


class _RecordingMonitor(pulumi_mocks.MockMonitor):
    """Keeps every registration as the engine receives it; rejects duplicate URNs as the engine does.

    A MockMonitor is what `pulumi.runtime.set_mocks` takes as its public `monitor` argument, so this subclass
    uses the SDK's published hook, not its internals (those are all in kvpool/internal/sdk_internals.py)."""

    mocks: _OfflineMocks

    def __init__(self, mocks: _OfflineMocks, on_registered: Callable[[RecordedResource], None] | None = None) -> None:
        super().__init__(mocks)
        self.on_registered = on_registered
        self.recorded: dict[str, RecordedResource] = {}
        self._seen_urns: set[str] = set()
        self._lock = threading.Lock()  # registrations arrive concurrently, on executor threads

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._reject_duplicate(request)
        with _executor_thread_event_loop():
            response = super().RegisterResource(request)
        self._record(
            request,
            response.urn,
            request.object,
            custom=request.custom,
            resource_id=request.importId or None,
            protect=request.protect,
            retain_on_delete=request.retainOnDelete,
            aliases=tuple(sorted(self._alias_urn(request, alias) for alias in request.aliases)),
        )
        return response

    def _alias_urn(self, request: Any, alias: Any) -> str:
        """An alias as the engine resolves it (in this run's stack and project): a spec's unset parts are the resource's own."""
        if alias.HasField("urn"):
            return alias.urn
        spec = alias.spec
        parent = "" if spec.noParent else spec.parentUrn or request.parent
        return self.make_urn(parent, spec.type or request.type, spec.name or request.name)

    def ReadResource(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._reject_duplicate(request)
        if request.type == STACK_REFERENCE_TYPE:
            with _executor_thread_event_loop():
                response = super().ReadResource(request)
        else:
            # No cluster to read offline: the object comes back without properties, which a preview reads as
            # unknown, so the program can say that it did not look (kv_store/shared.py store_serves).
            response = resource_pb2.ReadResourceResponse(urn=self.make_urn(request.parent, request.type, request.name))
        # A read's recorded properties are its state (a StackReference's `outputs`), as AnalyzeStack shows them.
        self._record(request, response.urn, response.properties, custom=True, resource_id=request.id, read=True)
        return response

    def Invoke(self, request: Any) -> Any:  # noqa: N802 (gRPC method name)
        with _executor_thread_event_loop():
            return super().Invoke(request)

    def _reject_duplicate(self, request: Any) -> None:
        urn = self.make_urn(request.parent, request.type, request.name)
        with self._lock:
            if urn in self._seen_urns:
                raise MockEngineError(f"Duplicate resource URN '{urn}'; try giving it a unique name")
            self._seen_urns.add(urn)

    def _record(self, request: Any, urn: str, properties: Any, **options: Any) -> None:
        decoded = decode_properties(properties)
        resource = RecordedResource(
            type=request.type,
            name=request.name,
            urn=urn,
            parent_urn=request.parent or None,
            inputs=decoded.values,
            secret_paths=decoded.secret_paths,
            unknown_paths=decoded.unknown_paths,
            provider=request.provider or None,
            dependencies=tuple(sorted(request.dependencies)),
            **options,
        )
        with self._lock:
            self.recorded[urn] = resource
        if self.on_registered is not None:
            self.on_registered(resource)


@contextlib.contextmanager
def _program_environment(project_dir: Path) -> Iterator[None]:
    """What the language host sets up for a program: its directory as cwd and import root, only the stack's
    config (no PULUMI_CONFIG* from the caller's shell). The program's own modules are forgotten afterwards, so
    the next run imports them afresh, as a new `pulumi` process would, and the caller gets its own Ctrl-C back
    (the program's __main__ installs a SIGINT handler for its own process)."""
    saved_cwd, saved_path = os.getcwd(), list(sys.path)
    saved_interrupt = signal.getsignal(signal.SIGINT)
    saved_modules = set(sys.modules)
    saved_env = {key: value for key, value in os.environ.items() if key.startswith("PULUMI_CONFIG")}
    for key in saved_env:
        del os.environ[key]
    sys.path.insert(0, str(project_dir))
    os.chdir(project_dir)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved_interrupt)
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        os.environ.update(saved_env)
        for name in set(sys.modules) - saved_modules:
            if _is_program_module(sys.modules[name], project_dir):
                del sys.modules[name]


def _is_program_module(module: Any, project_dir: Path) -> bool:
    """From the project's own files, not from a virtualenv that happens to live in the project folder, and not this
    package's: in this repository the project holds kvpool/ too, and a second copy of a tooling module (one first
    imported during a run) would hold classes the tooling's copy does not match."""
    if module.__name__ == "kvpool" or module.__name__.startswith("kvpool."):
        return False
    module_file = getattr(module, "__file__", None)
    if not module_file:
        return False
    path = Path(module_file).resolve()
    return path.is_relative_to(project_dir) and not path.is_relative_to(Path(sys.prefix).resolve())


@contextlib.contextmanager
def _executor_thread_event_loop() -> Iterator[None]:
    """The SDK's MockMonitor creates an event loop on each executor thread it runs on and never closes it;
    give the call a loop of ours for its duration instead (the main thread keeps the run's loop)."""
    if threading.current_thread() is threading.main_thread():
        yield
        return
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        yield
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def _reset_sdk_state() -> None:
    """The SDK keeps module-level state that set_mocks does not reset (root stack, pending outputs, RPCs)."""
    sdk_internals.reset_state()
    pulumi.runtime.set_all_config({}, [])


def _fresh_event_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    loop.set_exception_handler(_ignore_unretrieved_failures)
    asyncio.set_event_loop(loop)
    return loop


def _ignore_unretrieved_failures(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    # After a failure, every output depending on it fails too; the first failure has been raised already.
    if "exception" in context and "never retrieved" in context.get("message", ""):
        return
    loop.default_exception_handler(context)


@contextlib.contextmanager
def _unawaited_outputs_ignored() -> Iterator[None]:
    """Outputs created but never awaited by a failed program warn when collected, which can happen as soon as the
    SDK's state lets go of them: from then on until the loop is closed and collected, quietly."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"coroutine .* was never awaited", category=RuntimeWarning)
        yield
        gc.collect()


def _close_event_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a failed run left behind, so it cannot fail the next run, then close the loop."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
    loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()
    asyncio.set_event_loop(None)


def _collecting_logger(messages: list[str]) -> logging.Logger:
    """A logger outside the logging tree, so program log lines are returned, never printed."""
    logger = logging.Logger("kvpool.program", level=logging.DEBUG)
    logger.addHandler(_ListHandler(messages))
    return logger


class _ListHandler(logging.Handler):
    def __init__(self, messages: list[str]) -> None:
        super().__init__(level=logging.INFO)
        self.messages = messages

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(f"{record.levelname.lower()}: {record.getMessage()}")

