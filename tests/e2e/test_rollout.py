"""An image change on 4P+4D under the real engine never takes a role below its rollout setting (issue 23).

Engine pods of namespace `rollout` become Ready only ENGINE_READY_DELAY_S after they start (tests/e2e/kwok_stages.py),
as a model load delays them; the Ready instances of each role are sampled while `pulumi up` runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import deployments_not_ready, up_stack
from tests.e2e.kwok_stages import ENGINE_READY_DELAY_S, ENGINE_SIDES
from tests.e2e.realengine import Cluster, PulumiWorkspace
from tests.e2e.rollout_watch import (
    EVENT_LOG_ENV,
    NEW_IMAGE,
    ReadySampler,
    engine_steps,
    engine_waits,
    write_stack,
)
from tests.e2e.views import offline_in_copy_to

pytestmark = pytest.mark.e2e

STACK = "rollout"  # its namespace too: one of kwok_stages.ROLLOUT_NAMESPACES
INSTANCES = 4
KEEP = 2  # the default 50% of 4


def test_an_image_change_rolls_each_role_in_two_waves_keeping_half_serving(
    workspace: PulumiWorkspace, cluster: Cluster, e2e_tmp: Path
) -> None:
    write_stack(workspace, STACK, INSTANCES, None)  # the default rollout
    workspace.stack_init(STACK)
    out = e2e_tmp / "rollout-preview"
    assert offline_in_copy_to(workspace, STACK, out).returncode == 0
    # A first deploy: the stack's reference to itself finds no outputs, so no instance waits for another.
    up_stack(workspace, cluster, STACK, out)
    assert deployments_not_ready(cluster, STACK) == []
    assert engine_waits(workspace, STACK) == {f"vllm-{side[0]}{i}": [] for side in ENGINE_SIDES for i in range(INSTANCES)}

    workspace.run("config", "set", "--path", "motor_deploy_config.image_name", NEW_IMAGE, "-s", STACK).check()
    sampler = ReadySampler(cluster, STACK)
    events = e2e_tmp / "rollout-events.jsonl"
    sampler.start()
    try:
        workspace.run("up", "--yes", "--skip-preview", "-s", STACK, "--event-log", str(events), timeout=1200,
                      extra_env=EVENT_LOG_ENV).check()
    finally:
        samples = sampler.stop()

    for side in ENGINE_SIDES:
        letter = side[0]
        assert sampler.fewest_ready(side) == KEEP, (side, [(s.seconds, sorted(s.ready[side])) for s in samples])
        first, second = [f"vllm-{letter}0", f"vllm-{letter}1"], [f"vllm-{letter}2", f"vllm-{letter}3"]
        down = {name: sampler.down_intervals(name, side) for name in first + second}
        assert all(len(stretches) == 1 for stretches in down.values()), down  # each instance stopped once
        # The second wave stops only after the whole first wave is Ready again.
        assert max(down[name][0][1] for name in first) < min(down[name][0][0] for name in second), down
    # The engine's own order: the provider ends a first-wave step only when its new pod is available (the
    # pulumi.com/waitFor annotation), and only then does the second wave's step start.
    steps = engine_steps(events, sampler.started_at)
    for side in ENGINE_SIDES:
        first_ends = max(steps[f"vllm-{side[0]}{i}"][1] for i in (0, 1))
        assert first_ends >= min(steps[f"vllm-{side[0]}{i}"][0] for i in (0, 1)) + ENGINE_READY_DELAY_S - 1, steps
        assert min(steps[f"vllm-{side[0]}{i}"][0] for i in (2, 3)) >= first_ends, steps
    assert len(samples[-1].ready["prefill"]) == len(samples[-1].ready["decode"]) == INSTANCES
    for side in ENGINE_SIDES:
        for index in range(INSTANCES):
            deployment = cluster.get(f"/apis/apps/v1/namespaces/{STACK}/deployments/vllm-{side[0]}{index}")
            assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == NEW_IMAGE
    assert engine_waits(workspace, STACK) == {
        "vllm-p0": [], "vllm-p1": [], "vllm-p2": ["vllm-p0", "vllm-p1"], "vllm-p3": ["vllm-p0", "vllm-p1"],
        "vllm-d0": [], "vllm-d1": [], "vllm-d2": ["vllm-d0", "vllm-d1"], "vllm-d3": ["vllm-d0", "vllm-d1"],
    }
