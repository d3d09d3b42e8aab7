"""Run a Python policy pack as `pulumi preview --policy-pack DIR` runs it, against a recorded program run.

The pack runs in its own process, started as the CLI's legacy shim starts it: `python -u -m pulumi.policy
<engine> .` in the pack's folder, the stack's config in PULUMI_CONFIG. The pack prints its port; this module then
plays the engine's side of the Analyzer gRPC protocol in the CLI's order: Handshake (a Python pack answers
UNIMPLEMENTED), ConfigureStack, GetAnalyzerInfo, Configure (config reconciled as the CLI does, see
kvpool.policy_config), Analyze per registered resource, one AnalyzeStack over all resources. No shipped policy
remediates, so the engine's Remediate pass is not played: it would return nothing.

Properties go over the wire as the engine sends them: numbers as floats, secrets in the secret envelope,
unknowns as the unknown sentinel, top-level `__` keys left out. What differs offline: AnalyzeStack sees each
resource's inputs where the engine sends its outputs (the mock engine echoes inputs, so they agree, except that
a component has no registered outputs; a StackReference, a read, shows its state with the referenced `outputs`;
the Stack gets the program's exports);
default providers are not resources of the run, so no provider reaches the pack for them; stack tags are empty.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from components.errors import KvpoolError
from components.input_files import load_yaml
from components.settings import LOCAL_ORGANIZATION
from components.units import integral_floats_to_ints
from kvpool.mock_engine import STACK_REFERENCE_TYPE, ProgramRun, RecordedResource
from kvpool.policy_config import PolicyConfig, PolicyInfo, reconcile_policy_config
from kvpool.property_values import encode_properties
from kvpool.stack_config import StackConfig

START_TIMEOUT_SECONDS = 30.0
CALL_TIMEOUT_SECONDS = 60.0
ENGINE_ADDRESS = "127.0.0.1:0"
"""The pack parses the engine's address but never dials it; there is no engine to offer."""
STACK_LABEL = "stack"
"""resource_label of a violation about the stack as a whole (the diagnostic has no URN)."""

_LEVEL_NAMES = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.REMEDIATE: "remediate",
    analyzer_pb2.DISABLED: "disabled",
}
_LEVEL_VALUES = {name: value for value, name in _LEVEL_NAMES.items()}
_POLICY_KINDS = {analyzer_pb2.POLICY_TYPE_RESOURCE: "resource", analyzer_pb2.POLICY_TYPE_STACK: "stack"}
_VIOLATION_ORDER = {"mandatory": 0, "advisory": 1}
# The SDK's own limit for policy packs (pulumi_policy raises gRPC's 4 MB default to 400 MB).
_CHANNEL_OPTIONS = [("grpc.max_receive_message_length", 400 * 1024 * 1024)]
_STDERR_TAIL_LINES = 40
MAX_ENV_STRING_BYTES = 128 * 1024
"""Linux's limit on one environment string (MAX_ARG_STRLEN, `NAME=value` and its NUL): a longer one makes
starting the pack fail with E2BIG, "Argument list too long"."""


class PolicyPackError(KvpoolError):
    """The pack could not start, or failed while analyzing (a validator raised, the process died)."""


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
        self._process: _PackProcess | None = None
        self._failure: KvpoolError | None = None
        self._executor: ThreadPoolExecutor | None = None
        pack_dir = Path(pack_dir).resolve()
        try:
            self._declared_version = _read_manifest(pack_dir)
            self._process = _PackProcess(pack_dir, _pack_environment(config, python), python)
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
        self, stub: analyzer_pb2_grpc.AnalyzerStub, process: _PackProcess, declared_version: str | None, run: ProgramRun
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
        self.inputs = {resource.urn: _properties(resource) for resource in run.resources}

    def analyze(self, config: StackConfig, policy_config: Mapping[str, Any] | None) -> PolicyReport:
        self._handshake()
        self._call("ConfigureStack", _configure_stack_request(config))
        info = self._call("GetAnalyzerInfo", empty_pb2.Empty())
        version = self.declared_version or info.version  # the CLI prefers PulumiPolicy.yaml's version
        self.pack_label = f"policy pack {info.name} {version}"
        policies = sorted((_policy_info(policy) for policy in info.policies), key=lambda policy: policy.name)
        self.settings = reconcile_policy_config(
            policies, _initial_config(info), policy_config, source=f"policy config of {self.pack_label}"
        )
        self._call("Configure", _configure_request(self.settings))
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
        for resource in self.run.resources:
            if resource.type == STACK_REFERENCE_TYPE:
                continue  # a read, not a registration: the engine analyzes registrations only
            request = _analyze_request(resource, self.inputs[resource.urn], self.by_urn, self.inputs)
            response = self._call_on("Analyze", request, resource)
            # As the engine: a resource policy's violation is about the analyzed resource, whatever URN it names.
            violations += [self._violation(diagnostic, resource.urn) for diagnostic in response.diagnostics]
        return violations, state

    def _analyze_stack(self, state: Mapping[str, struct_pb2.Struct]) -> list[Violation]:
        resources = [
            _stack_resource(resource, state[resource.urn], self.by_urn, self.inputs) for resource in self.run.resources
        ]
        request = analyzer_pb2.AnalyzeStackRequest(resources=resources)
        response = self._call_on("AnalyzeStack", request, None)
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
        level = _LEVEL_NAMES[diagnostic.enforcementLevel]
        return Violation(
            policy_name=diagnostic.policyName,
            enforcement_level="mandatory" if level == "remediate" else level,  # as the engine downgrades it
            resource=urn,
            resource_label=self._label(urn),
            description=diagnostic.description,
            detail=_reported_message(diagnostic.message, diagnostic.description),
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

    def _call_on(self, method: str, request: Any, resource: RecordedResource | None) -> Any:
        """A call about one resource (None: the stack); a validator that raises fails the whole call, and the
        error names the resource, the exception and the pack's stderr (its traceback names the policy)."""
        try:
            return getattr(self.stub, method)(request, timeout=CALL_TIMEOUT_SECONDS)
        except grpc.RpcError as error:
            target = f"{resource.type} {resource.name}" if resource else f"the stack ({method})"
            raise self._error(f"{method} of {target}", error) from None

    def _error(self, what: str, error: grpc.RpcError, stderr: str | None = None) -> PolicyPackError:
        if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            reason = f"no answer within {CALL_TIMEOUT_SECONDS:g} s"
        elif error.code() == grpc.StatusCode.UNAVAILABLE and self.process.exit_code() is not None:
            reason = f"the pack's process exited with code {self.process.exit_code()}"
        else:
            reason = f"{error.code().name}: {error.details()}"
        tail = self.process.stderr_tail() if stderr is None else stderr
        return PolicyPackError(_with_stderr(f"{self.pack_label}: {what} failed: {reason}", tail))


def _read_manifest(pack_dir: Path) -> str | None:
    """Checks PulumiPolicy.yaml as the CLI does before it starts a pack; returns the version it declares."""
    manifest_file = pack_dir / "PulumiPolicy.yaml"
    if not manifest_file.is_file():
        raise PolicyPackError(f"no PulumiPolicy.yaml in {pack_dir}: not a policy pack")
    document = load_yaml(manifest_file) or {}
    runtime = document.get("runtime") if isinstance(document, dict) else None
    runtime_name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if runtime_name != "python":
        raise PolicyPackError(f"{manifest_file}: runtime {runtime_name!r}: only Python policy packs run offline")
    version = document.get("version")
    return str(version) if version is not None else None


def _pack_environment(config: StackConfig, python: str) -> dict[str, str]:
    """The CLI's environment for a pack: its own, plus the stack (constructEnv in analyzer_plugin.go)."""
    # The caller's PULUMI_CONFIG* would be another stack's config; this stack's replaces it.
    env = {key: value for key, value in os.environ.items() if not key.startswith("PULUMI_CONFIG")}
    interpreter_dir = Path(python).parent
    if (interpreter_dir.parent / "pyvenv.cfg").is_file():
        # What the shim does for a virtualenv: its bin first on PATH, no PYTHONHOME from outside.
        env["VIRTUAL_ENV"] = str(interpreter_dir.parent)
        env["PATH"] = os.pathsep.join(filter(None, [str(interpreter_dir), env.get("PATH")]))
        env.pop("PYTHONHOME", None)
    if config.values:
        # Go's encoding/json, as the CLI uses it: sorted keys, no spaces.
        env["PULUMI_CONFIG"] = _config_env_value(config)
    env.update(
        PULUMI_PROJECT=config.project,
        PULUMI_STACK=config.stack,
        PULUMI_DRY_RUN="true",
        PULUMI_ORGANIZATION=LOCAL_ORGANIZATION,
    )
    return env


def _config_env_value(config: StackConfig) -> str:
    """PULUMI_CONFIG as the CLI sets it (constructEnv in analyzer_plugin.go: the whole config in one variable,
    which is how a Python pack reads it; pulumi-policy ignores the config of ConfigureStack). Over Linux's limit the
    CLI cannot start the pack either, so this refuses it naming the largest keys instead of failing with E2BIG."""
    text = json.dumps(config.values, sort_keys=True, separators=(",", ":"))
    size = len(f"PULUMI_CONFIG={text}".encode("utf-8")) + 1
    if size <= MAX_ENV_STRING_BYTES:
        return text
    largest = sorted(config.values, key=lambda key: -len(config.values[key].encode("utf-8")))[:3]
    sizes = ", ".join(f"{key} ({len(config.values[key].encode('utf-8')) // 1024} KiB)" for key in largest)
    raise PolicyPackError(
        f"stack {config.stack!r}: its configuration is {size // 1024} KiB as JSON; a policy pack receives it in one "
        f"environment variable (PULUMI_CONFIG, as from the Pulumi CLI), which Linux limits to "
        f"{MAX_ENV_STRING_BYTES // 1024} KiB, so `pulumi preview --policy-pack` could not start the pack either. "
        f"Largest keys: {sizes}; shorten them, or run with --no-policy"
    )


class _PackProcess:
    """The pack's process: started, its port read from the first line of stdout, stdout and stderr drained (a
    full pipe would block the pack), terminated on exit whatever happened."""

    def __init__(self, pack_dir: Path, env: dict[str, str], python: str) -> None:
        self.pack_dir = pack_dir
        self.python = python
        self._env = env
        self._stderr: deque[str] = deque(maxlen=_STDERR_TAIL_LINES)
        self._first_line: queue.Queue[str] = queue.Queue(maxsize=1)
        self._threads: list[threading.Thread] = []
        self._process: subprocess.Popen[str] | None = None
        self.port = 0

    def start(self) -> None:
        """Start the process; its port is read by wait_until_serving."""
        try:
            self._process = subprocess.Popen(
                # "." as the program: the CLI starts the shim in the pack's folder and passes it "."
                [self.python, "-u", "-m", "pulumi.policy", ENGINE_ADDRESS, "."],
                cwd=self.pack_dir,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
            )
        except OSError as error:
            raise PolicyPackError(f"cannot start the policy pack with {self.python}: {error.strerror}") from None
        self._drain(self._read_stdout)
        self._drain(self._read_stderr)

    def wait_until_serving(self) -> None:
        if self.port:
            return
        try:
            self.port = self._wait_for_port()
        except BaseException:
            self.stop()
            raise

    def __enter__(self) -> _PackProcess:
        self.start()
        self.wait_until_serving()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def exit_code(self) -> int | None:
        return self._process.poll() if self._process else None

    def stderr_tail(self) -> str:
        return "".join(self._stderr).rstrip("\n")

    def _wait_for_port(self) -> int:
        where = f"policy pack {self.pack_dir}"
        try:
            line = self._first_line.get(timeout=START_TIMEOUT_SECONDS)
        except queue.Empty:
            raise PolicyPackError(
                _with_stderr(f"{where} did not print its port within {START_TIMEOUT_SECONDS:g} s", self.stderr_tail())
            ) from None
        if not line:
            self.stop()  # collect all of stderr: the reason is in it
            raise PolicyPackError(
                _with_stderr(f"{where} exited with code {self.exit_code()} before serving", self.stderr_tail())
            )
        if not line.strip().isdigit():
            raise PolicyPackError(
                _with_stderr(
                    f"{where} printed {line.rstrip()!r} before its port (nothing may print to stdout before "
                    "PolicyPack(...) starts)",
                    self.stderr_tail(),
                )
            )
        return int(line)

    def _drain(self, target: Any) -> None:
        thread = threading.Thread(target=target, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        self._first_line.put(self._process.stdout.readline())  # "" when the pack exited first
        for _ in self._process.stdout:  # what policies print; the CLI does not show it either
            pass

    def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        for line in self._process.stderr:
            self._stderr.append(line)

    def stop(self) -> None:
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        for thread in self._threads:
            thread.join(timeout=5)
        for pipe in (self._process.stdout, self._process.stderr):
            if pipe is not None:
                pipe.close()


def _with_stderr(message: str, stderr: str) -> str:
    if not stderr:
        return message
    indented = "\n".join(f"    {line}" for line in stderr.splitlines())
    return f"{message}\nthe pack's stderr (last {_STDERR_TAIL_LINES} lines at most):\n{indented}"


def _configure_stack_request(config: StackConfig) -> analyzer_pb2.AnalyzerStackConfigureRequest:
    return analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=config.stack,
        project=config.project,
        organization=LOCAL_ORGANIZATION,
        dry_run=True,
        config=config.values,
        config_secret_keys=config.secret_keys,
    )


def _policy_info(policy: analyzer_pb2.PolicyInfo) -> PolicyInfo:
    schema = policy.configSchema
    # Protobuf made every number of the schema a float; `"minimum": 1` reads better in messages than 1.0.
    properties = integral_floats_to_ints(json_format.MessageToDict(schema.properties))
    return PolicyInfo(
        name=policy.name,
        description=policy.description,
        enforcement_level=_LEVEL_NAMES[policy.enforcementLevel],
        kind=_POLICY_KINDS.get(policy.policy_type, "unknown"),
        config_properties=properties,
        config_required=tuple(schema.required),
    )


def _initial_config(info: analyzer_pb2.AnalyzerInfo) -> dict[str, PolicyConfig]:
    # proto3 cannot leave the level out, so an entry that sets only properties carries ADVISORY (0); the CLI
    # applies that as a level, and so does this.
    return {
        name: PolicyConfig(_LEVEL_NAMES[entry.enforcementLevel], json_format.MessageToDict(entry.properties))
        for name, entry in info.initialConfig.items()
    }


def _configure_request(settings: Mapping[str, PolicyConfig]) -> analyzer_pb2.ConfigureAnalyzerRequest:
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, config in settings.items():
        entry = request.policyConfig[name]
        entry.enforcementLevel = _LEVEL_VALUES[config.enforcement_level or "advisory"]
        entry.properties.update(config.properties)
    return request


def _properties(resource: RecordedResource) -> struct_pb2.Struct:
    # The engine leaves out top-level internal keys (`__defaults`, ...) when it marshals for an analyzer.
    inputs = {key: value for key, value in resource.inputs.items() if not key.startswith("__")}
    return encode_properties(inputs, resource.secret_paths, resource.unknown_paths)


def _options(resource: RecordedResource, parent: str = "") -> analyzer_pb2.AnalyzerResourceOptions:
    # The engine always sends custom timeouts (zero when unset).
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=resource.protect,
        parent=parent,
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
    )


def _provider(
    resource: RecordedResource, by_urn: Mapping[str, RecordedResource], inputs: Mapping[str, struct_pb2.Struct]
) -> analyzer_pb2.AnalyzerProviderResource | None:
    """The resource's explicit provider (a reference is `<urn>::<id>`), with the provider's inputs."""
    provider = by_urn.get(resource.provider.rsplit("::", 1)[0]) if resource.provider else None
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, urn=provider.urn, name=provider.name, properties=inputs[provider.urn]
    )


def _analyze_request(
    resource: RecordedResource,
    properties: struct_pb2.Struct,
    by_urn: Mapping[str, RecordedResource],
    inputs: Mapping[str, struct_pb2.Struct],
) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(
        type=resource.type,
        urn=resource.urn,
        name=resource.name,
        properties=properties,
        options=_options(resource, parent=resource.parent_urn or ""),
        provider=_provider(resource, by_urn, inputs),
    )


def _stack_resource(
    resource: RecordedResource,
    properties: struct_pb2.Struct,
    by_urn: Mapping[str, RecordedResource],
    inputs: Mapping[str, struct_pb2.Struct],
) -> analyzer_pb2.AnalyzerResource:
    # AnalyzeStack carries the parent beside the options, not in them (the engine's AnalyzeResources).
    return analyzer_pb2.AnalyzerResource(
        type=resource.type,
        urn=resource.urn,
        name=resource.name,
        properties=properties,
        options=_options(resource),
        provider=_provider(resource, by_urn, inputs),
        parent=resource.parent_urn or "",
        dependencies=resource.dependencies,
    )


def _reported_message(message: str, description: str) -> str:
    """The pack sends `description + "\\n" + message` (the description alone for an empty message)."""
    if message == description:
        return ""
    prefix = description + "\n"
    return message[len(prefix) :] if message.startswith(prefix) else message


def _violation_order(violation: Violation) -> tuple[Any, ...]:
    return (
        _VIOLATION_ORDER.get(violation.enforcement_level, len(_VIOLATION_ORDER)),
        violation.policy_name,
        violation.resource_label,
        violation.resource,
        violation.detail,
    )
