"""Each Motor pod's node log folder is the one deploy.py's own modify_log_mount picks, run on what we render."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.program_runs import render, stack_values
from tests.service_configs import HOST_LOG_DIRS, with_host_log_dirs

# Our Deployments and the app_type deploy.py's generators pass for them (engines: the Deployment's own name).
WORKLOADS = ("mindie-motor-controller", "mindie-motor-coordinator", "vllm-p0", "vllm-d0")
TEMPLATE_LOG_DIR = "/root/ascend/log"  # what deploy.py's yaml templates hold before modify_log_mount
DEFAULT = "/root/ascend/log"
VARIANTS = {
    "every role moved": (HOST_LOG_DIRS, {
        "mindie-motor-controller": "/data/logs/controller", "mindie-motor-coordinator": "/data/logs/coordinator",
        "vllm-p0": "/data/logs/engines", "vllm-d0": "/data/logs/engines",
    }),
    "coordinator only": ({"motor_coordinator_config": "/data/logs/coordinator"}, {
        "mindie-motor-controller": DEFAULT, "mindie-motor-coordinator": "/data/logs/coordinator",
        "vllm-p0": DEFAULT, "vllm-d0": DEFAULT,
    }),
    "null engines, trailing slash": ({"motor_nodemanger_config": None, "motor_controller_config": "/data/ctl/"}, {
        "mindie-motor-controller": "/data/ctl/", "mindie-motor-coordinator": DEFAULT,
        "vllm-p0": DEFAULT, "vllm-d0": DEFAULT,
    }),
}


def motors_modify_log_mount(motor_checkout: Path):
    sys.path.insert(0, str(motor_checkout / "examples" / "deployer"))
    try:
        from lib.utils import modify_log_mount
    finally:
        sys.path.pop(0)
    return modify_log_mount


def log_folder(deployment: dict[str, Any]) -> str:
    (volume,) = [v for v in deployment["spec"]["template"]["spec"]["volumes"] if v["name"] == "plog-path"]
    return volume["hostPath"]["path"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_motor_pod_logs_where_deploy_py_mounts_it(variant: str, motor_checkout: Path) -> None:
    modify_log_mount = motors_modify_log_mount(motor_checkout)
    folders, want = VARIANTS[variant]
    rendered = render(with_host_log_dirs(stack_values("dev"), folders), stack="dev")
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    for name in WORKLOADS:
        ours = rendered.get("Deployment", name)
        theirs = copy.deepcopy(ours)
        for volume in theirs["spec"]["template"]["spec"]["volumes"]:
            if volume["name"] == "plog-path":
                volume["hostPath"]["path"] = TEMPLATE_LOG_DIR
        modify_log_mount(theirs, user_config, name)
        assert theirs == ours, name
    assert {name: log_folder(rendered.get("Deployment", name)) for name in WORKLOADS} == want
