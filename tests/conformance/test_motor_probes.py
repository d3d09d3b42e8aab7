"""Each Motor pod's own probe commands, exactly as rendered, against Motor's own server: boot.sh starts the role's
process from Motor's package (tests/conformance/motor_build.py: the checkout with the etcd protobuf modules Motor's
build generates), then each exec probe runs Motor's probe.sh and probe.py from the rendered motor-config with the
container's env, as the kubelet runs it. Only vLLM is absent: the node manager starts it when the controller asks.

Engines: without a running engine Motor's /readiness answers 503 ("Endpoints not healthy": HeartbeatManager has no
endpoint until the controller starts one), so the readiness probe fails and the pod is not Ready: what Motor
intends (a pod is Ready once its engines are). It must not be a 404: that is a route Motor does not serve, which
no running engine would ever turn into a pass.

Controller and coordinator (standalone: no example stack enables master/standby, so neither needs etcd): every probe
passes with no engine running. The controller is ready once its modules are alive; the coordinator's /readiness
answers 200 while it has no instances (its body says `"ready": false`), on purpose: a 503 would take it out of its
Service and the controller's refresh could never reach it (motor/coordinator/api_server/management_server.py:260)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.motor_boot import PROBE_KINDS
from tests.conformance.test_motor_boot import STACKS, boot_role
from tests.program_runs import Rendered

NOT_READY = "HTTP request failed with status code: 503"
POD_API = {"host": "127.0.0.11", "port": 1026}  # the fake pod IP, and 1026: each role's configured API port


@pytest.mark.parametrize("stack", STACKS)
def test_engine_probes_reach_routes_motors_node_manager_serves(
    rendered: dict[str, Rendered], stack: str, motor_build: Path, tmp_path: Path
) -> None:
    for side in ("prefill", "decode"):
        result = boot_role(rendered[stack], side, motor_build, tmp_path / side, probes=True)
        assert result.failures() == [], result.output
        assert result.serving == POD_API, result.output
        assert set(result.probes) == {"readinessProbe"}, (side, result.probes)
        code, output = result.probes["readinessProbe"]
        assert code == 1, output
        assert "Executing readiness probe for node_manager at 127.0.0.11:1026/readiness" in output, output
        assert NOT_READY in output, output


@pytest.mark.parametrize(("stack", "role"), [(stack, role) for stack in STACKS for role in ("controller", "coordinator")])
def test_controller_and_coordinator_probes_pass_against_motors_own_servers(
    rendered: dict[str, Rendered], stack: str, role: str, motor_build: Path, tmp_path: Path
) -> None:
    result = boot_role(rendered[stack], role, motor_build, tmp_path, probes=True)
    assert result.failures() == [], result.output
    assert result.serving == POD_API, result.output
    assert set(result.probes) == set(PROBE_KINDS), result.probes
    for kind, (code, output) in result.probes.items():
        route = kind.removesuffix("Probe")
        assert f"Executing {route} probe for {role} at 127.0.0.11:1026/{route}\n" in output, output
        assert f'GET http://127.0.0.11:1026/{route} "HTTP/1.1 200 OK"\n' in output, output
        assert (code, output.rstrip().rsplit(" - ", 1)[-1]) == (0, f"Service is {route}"), output
