"""Motor's engine server configuring vLLM from what we render, with Motor's own classes.

Each case is one engine process as Motor's node manager starts it: its own EngineService.pull
(motor/node_manager/core/services/engine.py) runs for one endpoint of the instance, in the environment the pod gets
with USER_CONFIG_PATH naming the user_config.json, and the command line and environment it hands subprocess.Popen
(recorded, not started) are the engine server's. The engine server's own steps then run as motor/engine_server/cli/main.py runs them: EndpointConfig.init_endpoint_config() (argument parsing,
validation, DeployConfig.load of the file) and VLLMConfig.initialize() (kv_transfer_config per role and instance), then
get_cli_args(), the argument list vLLM is given. Only ConfigFactory's convert()/validate(), which hand that list to
vLLM's own parser, are left out: vLLM is not installed here, so `vllm.entrypoints.openai.cli_args`, which
vllm_config.py imports at its top, is a stub module that fails if anything calls it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

# The endpoint Motor's controller hands a node manager, which says nothing about the configuration (the pod's address,
# the ports the node manager assigns from its base_port); the same for every case.
POD_IP = "127.0.0.11"
BUSINESS_PORT = "10000"
MGMT_PORT = "10001"

VLLM_STUB = '''"""STUB of vLLM's CLI-argument module, which Motor's vllm_config.py imports: vLLM itself is not installed."""


def make_arg_parser(parser):
    raise AssertionError("stub: vLLM's argument parser is not here")


def validate_parsed_serve_args(args):
    raise AssertionError("stub: vLLM's argument validation is not here")
'''

DRIVER = r'''
import json, os, sys
from unittest import mock
cases_path, results_path = sys.argv[1:3]
cases = json.load(open(cases_path, encoding="utf-8"))
from motor.common.resources.endpoint import Endpoint
from motor.common.resources.instance import PDRole
from motor.config.endpoint import EndpointConfig
from motor.engine_server.core.vllm.vllm_config import VLLMConfig
from motor.node_manager.core.services.engine import EngineService


class Started:
    """subprocess.Popen as EngineService.pull calls it: records the command and environment, starts nothing."""
    commands = []

    def __init__(self, command, shell=False, env=None):
        Started.commands.append((command, env))
        self.pid = 0

    def poll(self):
        return None


results = []
for case in cases:
    os.environ.clear()
    os.environ.update(case["env"])
    Started.commands.clear()
    service = EngineService(hardware_type="", device_num=1, parallel_config=None, enable_multi_endpoints=False,
                            enable_snapshot=False, snapshot_metadata_path="")
    with mock.patch("subprocess.Popen", Started):
        service.pull(PDRole(case["role"]), [Endpoint(0, case["pod_ip"], case["port"], case["mgmt_port"])],
                     case["instance_id"], case["pod_ip"])
    (command, env), = Started.commands
    os.environ.clear()
    os.environ.update(env)
    sys.argv = command
    try:
        endpoint = EndpointConfig.init_endpoint_config()
        config = VLLMConfig(endpoint_config=endpoint)
        config.initialize()
        results.append({"kv_transfer_config": config.kv_transfer_config, "args": config.get_cli_args(), "error": None})
    except BaseException as error:
        results.append({"kv_transfer_config": None, "args": None, "error": f"{type(error).__name__}: {error}"})
with open(results_path, "w", encoding="utf-8") as out:  # Motor's logger writes to stdout
    json.dump(results, out)
'''


@dataclass(frozen=True)
class EngineCase:
    """One engine process: which user_config.json it reads, its role and Motor's instance id, its pod's env."""

    user_config: str  # the file's text, exactly as motor-config holds it
    role: str  # prefill or decode
    instance_id: int
    env: Mapping[str, str]


@dataclass(frozen=True)
class EngineStart:
    kv_transfer_config: dict[str, Any] | None  # what vLLM is given as --kv-transfer-config, parsed
    args: dict[str, str | None] | None  # vLLM's arguments: `--name value`, or a flag mapped to None
    error: str | None  # the exception that stopped the engine server, as `Type: message`


def _argument_map(args: list[str]) -> dict[str, str | None]:
    mapped: dict[str, str | None] = {}
    for index, arg in enumerate(args):
        if arg.startswith("--"):
            following = args[index + 1] if index + 1 < len(args) else None
            mapped[arg[2:]] = None if following is None or following.startswith("--") else following
    return mapped


def run_motor(driver: str, specs: list[Any], motor_build: Path, folder: Path) -> list[Any]:
    """`driver` (Python that reads its specs from the JSON file named by argv[1] and writes one result per spec to the
    file named by argv[2]) in one interpreter run from `motor_build`, with the vLLM stub importable."""
    stub = folder / "vllm-stub" / "vllm" / "entrypoints" / "openai"
    stub.mkdir(parents=True, exist_ok=True)
    for package in (stub.parent.parent, stub.parent, stub):
        (package / "__init__.py").write_text("")
    (stub / "cli_args.py").write_text(VLLM_STUB)
    (folder / "specs.json").write_text(json.dumps(specs), encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-c", driver, str(folder / "specs.json"), str(folder / "results.json")], cwd=folder,
        capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(motor_build), str(folder / "vllm-stub")])},
    )
    if run.returncode:
        raise AssertionError(f"the driver of Motor's code failed:\n{run.stderr[-4000:]}")
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))


def start_engines(cases: list[EngineCase], motor_build: Path, folder: Path) -> list[EngineStart]:
    """Motor's engine-server configuration of every case, in one interpreter run from `motor_build`."""
    specs = []
    for number, case in enumerate(cases):
        path = folder / f"user_config-{number}.json"
        path.write_text(case.user_config, encoding="utf-8")
        specs.append({
            "role": case.role, "instance_id": case.instance_id, "pod_ip": POD_IP, "port": BUSINESS_PORT,
            "mgmt_port": MGMT_PORT,
            "env": {**case.env, "USER_CONFIG_PATH": str(path), "MOTOR_LOG_PATH": str(folder / "logs")},
        })
    return [
        EngineStart(
            kv_transfer_config=None if result["kv_transfer_config"] is None else json.loads(result["kv_transfer_config"]),
            args=None if result["args"] is None else _argument_map(result["args"]),
            error=result["error"],
        )
        for result in run_motor(DRIVER, specs, motor_build, folder)
    ]
