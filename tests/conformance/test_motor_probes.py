"""Each engine pod's own probe commands, exactly as rendered, against Motor's own node manager: boot.sh starts
`motor.node_manager.main` from the Motor checkout (its config, port setup, API server and registration loop; vLLM,
which it starts only when the controller asks, is absent), then each exec probe runs Motor's probe.sh and probe.py
from the rendered motor-config with the container's env, as the kubelet runs it.

Without a running engine Motor's /readiness answers 503 ("Endpoints not healthy": HeartbeatManager has no
endpoint until the controller starts one), so the readiness probe fails and the pod is not Ready: what Motor
intends (a pod is Ready once its engines are). It must not be a 404: that is a route Motor does not serve, which
no running engine would ever turn into a pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conformance.test_motor_boot import STACKS, boot_role, rendered_with_motor

NOT_READY = "HTTP request failed with status code: 503"


@pytest.mark.parametrize("stack", STACKS)
def test_engine_probes_reach_routes_motors_node_manager_serves(stack: str, motor_checkout: Path, tmp_path: Path):
    rendered = rendered_with_motor(stack, motor_checkout)
    for side in ("prefill", "decode"):
        result = boot_role(rendered, side, motor_checkout, tmp_path / side, probes=True)
        assert result.failures() == [], result.output
        assert result.serving == {"host": "127.0.0.11", "port": 1026}, result.output
        assert set(result.probes) == {"readinessProbe"}, (side, result.probes)
        code, output = result.probes["readinessProbe"]
        assert code == 1, output
        assert "Executing readiness probe for node_manager at 127.0.0.11:1026/readiness" in output, output
        assert NOT_READY in output, output
