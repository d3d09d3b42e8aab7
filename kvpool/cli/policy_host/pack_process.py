"""The policy pack's process, started as the Pulumi CLI's legacy shim starts it.

`python -u -m pulumi.policy <engine> .` in the pack's folder, with the CLI's environment (the stack's config in
PULUMI_CONFIG); the pack prints its port on stdout, then serves the Analyzer gRPC protocol that
kvpool/cli/policy_host/runner.py speaks to it.
"""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
from collections import deque
from pathlib import Path
from typing import Any

from kvpool.cli.engine.stack_config import StackConfig
from kvpool.errors import KvpoolError
from kvpool.internal.input_files import load_yaml
from kvpool.internal.local_backend import LOCAL_ORGANIZATION

START_TIMEOUT_SECONDS = 30.0
ENGINE_ADDRESS = "127.0.0.1:0"
"""The pack parses the engine's address but never dials it; there is no engine to offer."""
_STDERR_TAIL_LINES = 40
MAX_ENV_STRING_BYTES = 128 * 1024
"""Linux's limit on one environment string (MAX_ARG_STRLEN, `NAME=value` and its NUL): a longer one makes
starting the pack fail with E2BIG, "Argument list too long"."""


class PolicyPackError(KvpoolError):
    """The pack could not start, or failed while analyzing (a validator raised, the process died)."""


def read_manifest(pack_dir: Path) -> str | None:
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


def pack_environment(config: StackConfig, python: str) -> dict[str, str]:
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


class PackProcess:
    """The pack's process: started, its port read from the first line of stdout, stdout and stderr drained (a
    full pipe would block the pack), terminated by `stop`, which the runner calls whatever happened."""

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
                with_stderr(f"{where} did not print its port within {START_TIMEOUT_SECONDS:g} s", self.stderr_tail())
            ) from None
        if not line:
            self.stop()  # collect all of stderr: the reason is in it
            raise PolicyPackError(
                with_stderr(f"{where} exited with code {self.exit_code()} before serving", self.stderr_tail())
            )
        if not re.fullmatch(r"[0-9]+", line.strip()):
            raise PolicyPackError(
                with_stderr(
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


def with_stderr(message: str, stderr: str) -> str:
    if not stderr:
        return message
    indented = "\n".join(f"    {line}" for line in stderr.splitlines())
    return f"{message}\nthe pack's stderr (last {_STDERR_TAIL_LINES} lines at most):\n{indented}"

