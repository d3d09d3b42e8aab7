"""Run a Python policy pack as `pulumi preview --policy-pack DIR` runs it, against a recorded program run.

The pack runs in its own process, started as the CLI's legacy shim starts it (kvpool.policy_host.pack_process). This
module then plays the engine's side of the Analyzer gRPC protocol in the CLI's order: Handshake (a Python pack
answers UNIMPLEMENTED), ConfigureStack, GetAnalyzerInfo, Configure (config reconciled as the CLI does, see
kvpool.policy_host.pack_config), Analyze per registered resource, one AnalyzeStack over all resources. No shipped policy
remediates, so the engine's Remediate pass is not played: it would return nothing.

Properties go over the wire (messages built in kvpool.policy_host.analyzer_messages) as the engine sends them: numbers as
floats, secrets in the secret envelope, unknowns as the unknown sentinel, top-level `__` keys left out. What
differs offline: AnalyzeStack sees each resource's inputs where the engine sends its outputs (the mock engine
echoes inputs, so they agree, except that a component has no registered outputs; a StackReference, a read, shows
its state with the referenced `outputs`; the Stack gets the program's exports); default providers are not
resources of the run, so no provider reaches the pack for them; stack tags are empty.
"""

from __future__ import annotations

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

from components.errors import KvpoolError
from kvpool.engine.mock_engine import STACK_REFERENCE_TYPE, ProgramRun, RecordedResource
from kvpool.engine.property_values import encode_properties
from kvpool.engine.stack_config import StackConfig
from kvpool.policy_host.analyzer_messages import (
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
from kvpool.policy_host.pack_config import (
    PolicyConfig,
    PolicyInfo,
    reconcile_policy_config,
)
from kvpool.policy_host.pack_process import (
    ENGINE_ADDRESS,
    PackProcess,
    PolicyPackError,
    pack_environment,
    read_manifest,
    with_stderr,
)

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
    `analyze_in_background`) later holds the conversation. Nothing here raises: what would have stopped
    run_policy_pack before the analysis (no PulumiPolicy.yaml, a config too large, no interpreter) is raised by
    `analyze`, in the same order. Leaving the `with` block stops the process."""

    def __init__(self, pack_dir: Path, config: StackConfig, python: str = sys.executable) -> None:
        self.config = config
        self._process: PackProcess | None = None
        self._failure: KvpoolError | None = None
        self._executor: ThreadPoolExecutor | None = None
        pack_dir = Path(pack_dir).resolve()
        try:
            self._declared_version = read_manifest(pack_dir)
            self._process = PackProcess(pack_dir, pack_environment(config, python), python)
            self._process.start()
        except KvpoolError as error:
            self._failure = error

    def analyze(self, run: ProgramRun, policy_config: Mapping[str, Any] | None = None) -> PolicyReport:
        if self._failure is not None:
            raise self._failure
        assert self._process is not None
        self._process.wait_until_serving()
        with grpc.insecure_channel(f"127.0.0.1:{self._process.port}", options=_CHANNEL_OPTIONS) as channel:
            session = _Session(analyzer_pb2_grpc.AnalyzerStub(channel), self._process, self._declared_version, run)
            return session.analyze(self.config, policy_config)

    def analyze_in_background(
        self, run: ProgramRun, policy_config: Mapping[str, Any] | None = None
    ) -> Future[PolicyReport]:
        """`analyze` on a thread of its own: the pack works in its process while the caller goes on (the thread
        mostly waits for the pack's answers, outside the GIL)."""
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="policy-pack")
        return self._executor.submit(self.analyze, run, policy_config)

    def close(self) -> None:
        if self._process is not None:
            self._process.stop()  # first: an analysis still running (the caller failed) then fails at once
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def __enter__(self) -> StartedPolicyPack:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class _Session:
    """One conversation with a started pack, in the order the CLI holds it."""

    def __init__(
        self, stub: analyzer_pb2_grpc.AnalyzerStub, process: PackProcess, declared_version: str | None, run: ProgramRun
    ) -> None:
        self.stub = stub
        self.process = process
        self.declared_version = declared_version
        self.run = run
        self.by_urn = {resource.urn: resource for resource in run.resources}
        self.pack_label = "policy pack"
        self.settings: dict[str, PolicyConfig] = {}
        # Each resource's inputs as the engine sends them, encoded once: Remediate, Analyze and AnalyzeStack send
        # them, and every resource's request carries its provider's.
        self.inputs = {resource.urn: resource_properties(resource) for resource in run.resources}

    def analyze(self, config: StackConfig, policy_config: Mapping[str, Any] | None) -> PolicyReport:
        self._handshake()
        self._call("ConfigureStack", configure_stack_request(config))
        info = self._call("GetAnalyzerInfo", empty_pb2.Empty())
        version = self.declared_version or info.version  # the CLI prefers PulumiPolicy.yaml's version
        self.pack_label = f"policy pack {info.name} {version}"
        policies = sorted((policy_info(policy) for policy in info.policies), key=lambda policy: policy.name)
        self.settings = reconcile_policy_config(
            policies, initial_config(info), policy_config, source=f"policy config of {self.pack_label}"
        )
        self._call("Configure", configure_request(self.settings))
        violations, state = self._analyze_resources()
        violations += self._analyze_stack(state)
        return PolicyReport(
            pack_name=info.name,
            pack_version=version,
            violations=sorted(violations, key=_violation_order),
            policies=policies,
        )

    def _analyze_resources(self) -> tuple[list[Violation], dict[str, struct_pb2.Struct]]:
        """Analyze each registered resource. Also returns each resource's properties as AnalyzeStack is to see
        them: inputs (the mock echoes them as state); for the Stack, the program's exports."""
        violations: list[Violation] = []
        state = dict(self.inputs)
        state[self.run.stack_urn] = encode_properties(
            self.run.outputs, self.run.secret_output_paths, self.run.unknown_output_paths
        )
        # Up to ANALYZE_WINDOW calls in flight, answers read in resource order: the pack's server works on several
        # at once instead of waiting for one round trip per resource, and the first failure in that order is the
        # one reported, as if they had been sent one by one.
        in_flight: deque[tuple[RecordedResource, grpc.Future]] = deque()
        try:
            for resource in self.run.resources:
                if resource.type == STACK_REFERENCE_TYPE:
                    continue  # a read, not a registration: the engine analyzes registrations only
                if len(in_flight) == ANALYZE_WINDOW:
                    violations += self._violations_of(*in_flight.popleft())
                request = analyze_request(resource, self.inputs[resource.urn], self.by_urn, self.inputs)
                in_flight.append((resource, self.stub.Analyze.future(request, timeout=CALL_TIMEOUT_SECONDS)))
            while in_flight:
                violations += self._violations_of(*in_flight.popleft())
        finally:
            for _, answer in in_flight:
                answer.cancel()
        return violations, state

    def _violations_of(self, resource: RecordedResource, answer: grpc.Future) -> list[Violation]:
        """The answer about one resource; a validator that raises fails the whole call, and the error names the
        resource, the exception and the pack's stderr (its traceback names the policy)."""
        try:
            response = answer.result()
        except grpc.RpcError as error:
            raise self._error(f"Analyze of {resource.type} {resource.name}", error) from None
        # As the engine: a resource policy's violation is about the analyzed resource, whatever URN it names.
        return [self._violation(diagnostic, resource.urn) for diagnostic in response.diagnostics]

    def _analyze_stack(self, state: Mapping[str, struct_pb2.Struct]) -> list[Violation]:
        resources = [
            stack_resource(resource, state[resource.urn], self.by_urn, self.inputs) for resource in self.run.resources
        ]
        request = analyzer_pb2.AnalyzeStackRequest(resources=resources)
        try:
            response = self.stub.AnalyzeStack(request, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            raise self._error("AnalyzeStack of the stack (AnalyzeStack)", error) from None
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

    def _call(self, method: str, request: Any) -> Any:
        try:
            return getattr(self.stub, method)(request, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            raise self._error(method, error) from None

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
