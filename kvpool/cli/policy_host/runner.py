"""Run a Python policy pack as `pulumi preview --policy-pack DIR` runs it, against a recorded program run.

The pack runs in its own process, started as the CLI's legacy shim starts it (kvpool.cli.policy_host.pack_process). This
module then plays the engine's side of the Analyzer gRPC protocol in the CLI's order: Handshake (a Python pack
answers UNIMPLEMENTED), ConfigureStack, GetAnalyzerInfo, Configure (config reconciled as the CLI does, see
kvpool.cli.policy_host.pack_config), Analyze per registered resource, one AnalyzeStack over all resources. No shipped policy
remediates, so the engine's Remediate pass is not played: it would return nothing.

Properties go over the wire (messages built in kvpool.cli.policy_host.analyzer_messages) as the engine sends them: numbers as
floats, secrets in the secret envelope, unknowns as the unknown sentinel, top-level `__` keys left out. What
differs offline: AnalyzeStack sees each resource's inputs where the engine sends its outputs (the mock engine
echoes inputs, so they agree, except that a component has no registered outputs; a StackReference, a read, shows
its state with the referenced `outputs`; the Stack gets the program's exports); default providers are not
resources of the run, so no provider reaches the pack for them; stack tags are empty.
"""

from __future__ import annotations

import queue
import sys
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from kvpool.cli.engine.mock_engine import (
    ProgramRun,
    RecordedResource,
)
from kvpool.cli.engine.property_values import encode_properties
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.policy_host.analyzer_messages import (
    LEVEL_NAMES,
    analyze_request,
    configure_request,
    configure_stack_request,
    initial_config,
    policy_info,
    reported_message,
    resource_properties,
    stack_resource,
)
from kvpool.cli.policy_host.pack_config import (
    PolicyConfig,
    PolicyInfo,
    reconcile_policy_config,
)
from kvpool.cli.policy_host.pack_process import (
    ENGINE_ADDRESS,
    PackProcess,
    PolicyPackError,
    pack_environment,
    read_manifest,
    with_stderr,
)
from kvpool.errors import KvpoolError

CALL_TIMEOUT_SECONDS = 60.0
ANALYZE_WINDOW = 8
"""Analyze calls sent before the first answer is read (pulumi_policy serves four at a time)."""
STACK_LABEL = "stack"
"""resource_label of a violation about the stack as a whole (the diagnostic has no URN)."""

_VIOLATION_ORDER = {"mandatory": 0, "advisory": 1}
# The SDK's own limit for policy packs (pulumi_policy raises gRPC's 4 MB default to 400 MB).
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 400 * 1024 * 1024)]


@dataclass(frozen=True)
class Violation:
    policy_name: str
    enforcement_level: str
    """"advisory" or "mandatory" (the pack reports a remediate-level policy's violations as mandatory)."""
    resource: str
    """The URN, "" for a violation of the stack as a whole."""
    resource_label: str
    """`<type> <name>` of the resource, or "stack"."""
    description: str
    """The policy's description; the pack sends it in front of every message."""
    detail: str
    """What the policy reported ("" when it reported no message)."""


@dataclass(frozen=True)
class PolicyReport:
    pack_name: str
    pack_version: str
    violations: list[Violation]
    """Mandatory first, then by policy, resource label, URN and detail."""
    policies: list[PolicyInfo]
    """Sorted by name, levels as the pack declares them (before the user's config)."""

    @property
    def mandatory(self) -> list[Violation]:
        return [violation for violation in self.violations if violation.enforcement_level == "mandatory"]


def run_policy_pack(
    pack_dir: Path,
    run: ProgramRun,
    config: StackConfig,
    policy_config: Mapping[str, Any] | None = None,
    python: str = sys.executable,
) -> PolicyReport:
    """Analyze `run` with the pack in `pack_dir`, run by the interpreter `python` (which must have pulumi and
    pulumi_policy). `policy_config` is the content of a `--policy-pack-config` file. Raises PolicyPackError,
    PolicyConfigError; never prints."""
    with StartedPolicyPack(pack_dir, config, python) as pack:
        return pack.analyze(run, policy_config)


class StartedPolicyPack:
    """A pack whose process starts now, so that its imports overlap the program run; `analyze` (or
    `analyze_as_registered`) later holds the conversation. Nothing here raises: what would have stopped
    run_policy_pack before the analysis (no PulumiPolicy.yaml, a config too large, no interpreter) is raised by
    `analyze`, in the same order. Leaving the `with` block stops the process."""

    def __init__(self, pack_dir: Path, config: StackConfig, python: str = sys.executable) -> None:
        self.config = config
        self._process: PackProcess | None = None
        self._failure: KvpoolError | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._registered: queue.SimpleQueue[RecordedResource | ProgramRun | None] | None = None
        pack_dir = Path(pack_dir).resolve()
        try:
            self._declared_version = read_manifest(pack_dir)
            self._process = PackProcess(pack_dir, pack_environment(config, python), python)
            self._process.start()
        except KvpoolError as error:
            self._failure = error

    def analyze(self, run: ProgramRun, policy_config: Mapping[str, Any] | None = None) -> PolicyReport:
        """The whole conversation about a finished run."""
        registered: queue.SimpleQueue[RecordedResource | ProgramRun | None] = queue.SimpleQueue()
        registered.put(run)
        return self._converse(registered, policy_config)

    def analyze_as_registered(self, policy_config: Mapping[str, Any] | None = None) -> RunAnalysis:
        """The conversation on a thread of its own, from now on: each resource is analyzed as the run registers it
        (RunAnalysis.registered, for the mock engine's on_registered), as the engine analyzes registrations, so the
        pack works in its process while the program runs; the stack once the run is handed over
        (RunAnalysis.finished). The thread mostly waits for the pack's answers, outside the GIL."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-pack")
        self._registered = queue.SimpleQueue()
        return RunAnalysis(self._registered, self._executor.submit(self._converse, self._registered, policy_config))

    def _converse(
        self, registered: queue.SimpleQueue[RecordedResource | ProgramRun | None], policy_config: Mapping[str, Any] | None
    ) -> PolicyReport:
        if self._failure is not None:
            raise self._failure
        assert self._process is not None
        self._process.wait_until_serving()
        with grpc.insecure_channel(f"127.0.0.1:{self._process.port}", options=_CHANNEL_OPTIONS) as channel:
            session = _Session(analyzer_pb2_grpc.AnalyzerStub(channel), self._process, self._declared_version)
            session.configure(self.config, policy_config)
            while isinstance(item := registered.get(), RecordedResource):
                session.analyze_resource(item)
            if item is None:
                raise PolicyPackError(f"{session.pack_label}: stopped before the program's run was complete")
            return session.finish(item)

    def close(self) -> None:
        if self._registered is not None:
            self._registered.put(None)  # the run never finished (it failed): the conversation ends
        if self._process is not None:
            self._process.stop()  # first: an analysis still running (the caller failed) then fails at once
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def __enter__(self) -> StartedPolicyPack:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


@dataclass(frozen=True)
class RunAnalysis:
    """StartedPolicyPack.analyze_as_registered's conversation: `registered` each resource of the run as it is
    recorded (from any thread), then `finished` with the whole run."""

    _registered: queue.SimpleQueue[RecordedResource | ProgramRun | None]
    report: Future[PolicyReport]

    def registered(self, resource: RecordedResource) -> None:
        self._registered.put(resource)

    def finished(self, run: ProgramRun) -> Future[PolicyReport]:
        self._registered.put(run)
        return self.report


class _Session:
    """One conversation with a started pack, in the order the CLI holds it: `configure`, `analyze_resource` per
    registration, then `finish` with the run."""

    def __init__(self, stub: analyzer_pb2_grpc.AnalyzerStub, process: PackProcess, declared_version: str | None) -> None:
        self.stub = stub
        self.process = process
        self.declared_version = declared_version
        self.pack_label = "policy pack"
        self.settings: dict[str, PolicyConfig] = {}
        self.by_urn: dict[str, RecordedResource] = {}
        # Each resource's inputs as the engine sends them, encoded once: Remediate, Analyze and AnalyzeStack send
        # them, and every resource's request carries its provider's.
        self.inputs: dict[str, struct_pb2.Struct] = {}
        # Up to ANALYZE_WINDOW Analyze calls in flight: the pack's server works on several at once instead of one
        # round trip per resource; answers (or the call's error) kept by URN until `finish` reads them in order.
        self._in_flight: deque[tuple[RecordedResource, grpc.Future]] = deque()
        self._answers: dict[str, analyzer_pb2.AnalyzeResponse | grpc.RpcError] = {}
        self._sent: set[str] = set()

    def configure(self, config: StackConfig, policy_config: Mapping[str, Any] | None) -> None:
        self._handshake()
        self._call("ConfigureStack", configure_stack_request(config))
        self.info = self._call("GetAnalyzerInfo", empty_pb2.Empty())
        self.version = self.declared_version or self.info.version  # the CLI prefers PulumiPolicy.yaml's version
        self.pack_label = f"policy pack {self.info.name} {self.version}"
        self.policies = sorted((policy_info(policy) for policy in self.info.policies), key=lambda policy: policy.name)
        self.settings = reconcile_policy_config(
            self.policies, initial_config(self.info), policy_config, source=f"policy config of {self.pack_label}"
        )
        self._call("Configure", configure_request(self.settings))

    def analyze_resource(self, resource: RecordedResource) -> None:
        """Analyze a registered resource (its provider was registered before it); a read is only recorded."""
        self._know(resource)
        if resource.read:
            return  # not a registration: the engine analyzes registrations only
        if len(self._in_flight) == ANALYZE_WINDOW:
            self._settle(*self._in_flight.popleft())
        request = analyze_request(resource, self.inputs[resource.urn], self.by_urn, self.inputs)
        self._sent.add(resource.urn)
        self._in_flight.append((resource, self.stub.Analyze.future(request, timeout=CALL_TIMEOUT_SECONDS)))

    def finish(self, run: ProgramRun) -> PolicyReport:
        """Analyze what was not registered one by one (all of a finished run), read the answers in resource order
        (the first failure in that order is the one reported, as if each had been sent after the last answer), then
        AnalyzeStack."""
        for resource in run.resources:
            self._know(resource)  # first: a provider may sort after the resources it serves
        for resource in run.resources:
            if resource.urn not in self._sent:
                self.analyze_resource(resource)
        while self._in_flight:
            self._settle(*self._in_flight.popleft())
        violations: list[Violation] = []
        for resource in run.resources:
            answer = self._answers.get(resource.urn)
            if isinstance(answer, grpc.RpcError):
                raise self._error(f"Analyze of {resource.type} {resource.name}", answer) from None
            # As the engine: a resource policy's violation is about the analyzed resource, whatever URN it names.
            violations += [self._violation(diagnostic, resource.urn) for diagnostic in answer.diagnostics] if answer else []
        # AnalyzeStack sees each resource's inputs (the mock echoes them as state); for the Stack, the exports.
        state = dict(self.inputs)
        state[run.stack_urn] = encode_properties(run.outputs, run.secret_output_paths, run.unknown_output_paths)
        violations += self._analyze_stack(run, state)
        return PolicyReport(
            pack_name=self.info.name,
            pack_version=self.version,
            violations=sorted(violations, key=_violation_order),
            policies=self.policies,
        )

    def _know(self, resource: RecordedResource) -> None:
        if resource.urn not in self.inputs:
            self.by_urn[resource.urn] = resource
            self.inputs[resource.urn] = resource_properties(resource)

    def _settle(self, resource: RecordedResource, answer: grpc.Future) -> None:
        try:
            self._answers[resource.urn] = answer.result()
        except grpc.RpcError as error:
            self._answers[resource.urn] = error

    def _analyze_stack(self, run: ProgramRun, state: Mapping[str, struct_pb2.Struct]) -> list[Violation]:
        resources = [stack_resource(resource, state[resource.urn], self.by_urn, self.inputs) for resource in run.resources]
        request = analyzer_pb2.AnalyzeStackRequest(resources=resources)
        response = self._call("AnalyzeStack", request, what="AnalyzeStack of the stack (AnalyzeStack)")
        return [self._violation(diagnostic, diagnostic.urn) for diagnostic in response.diagnostics]

    def _handshake(self) -> None:
        request = analyzer_pb2.AnalyzerHandshakeRequest(
            engine_address=ENGINE_ADDRESS,
            root_directory=str(self.process.pack_dir),
            program_directory=str(self.process.pack_dir),
        )
        try:
            self.stub.Handshake(request, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:  # what a Python pack answers; the CLI carries on
                raise self._error("Handshake", error) from None

    def _violation(self, diagnostic: analyzer_pb2.AnalyzeDiagnostic, urn: str) -> Violation:
        level = LEVEL_NAMES[diagnostic.enforcementLevel]
        return Violation(
            policy_name=diagnostic.policyName,
            enforcement_level="mandatory" if level == "remediate" else level,  # as the engine downgrades it
            resource=urn,
            resource_label=self._label(urn),
            description=diagnostic.description,
            detail=reported_message(diagnostic.message, diagnostic.description),
        )

    def _label(self, urn: str) -> str:
        if not urn:
            return STACK_LABEL
        resource = self.by_urn.get(urn)
        if resource is not None:
            return f"{resource.type} {resource.name}"
        # A stack policy may name a URN the run does not have: urn:pulumi:<stack>::<project>::<parent$type>::<name>
        parts = urn.split("::", 3)
        return f"{parts[2].rsplit('$', 1)[-1]} {parts[3]}" if len(parts) == 4 else urn

    def _call(self, method: str, request: Any, what: str | None = None) -> Any:
        """The call's answer; a failure raises PolicyPackError naming `what` was called (default: the method)."""
        try:
            return getattr(self.stub, method)(request, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            raise self._error(what or method, error) from None

    def _error(self, what: str, error: grpc.RpcError, stderr: str | None = None) -> PolicyPackError:
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            reason = f"no answer within {CALL_TIMEOUT_SECONDS:g} s"
        elif error.code() == grpc.StatusCode.UNAVAILABLE and self.process.exit_code() is not None:
            reason = f"the pack's process exited with code {self.process.exit_code()}"
        else:
            reason = f"{error.code().name}: {error.details()}"
        tail = self.process.stderr_tail() if stderr is None else stderr
        return PolicyPackError(with_stderr(f"{self.pack_label}: {what} failed: {reason}", tail))



def _violation_order(violation: Violation) -> tuple[Any, ...]:
    return (
        _VIOLATION_ORDER.get(violation.enforcement_level, len(_VIOLATION_ORDER)),
        violation.policy_name,
        violation.resource_label,
        violation.resource,
        violation.detail,
    )
