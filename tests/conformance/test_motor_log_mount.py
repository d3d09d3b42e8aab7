"""Each Motor pod's node log folder is the one deploy.py's own modify_log_mount picks, run on what we render."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from tests.program_runs import render, stack_values
from tests.service_configs import with_host_log_dirs

# Our Deployments and the app_type deploy.py's generators pass for them (engines: the Deployment's own name).
WORKLOADS = {
    "mindie-motor-controller": "mindie-motor-controller",
    "mindie-motor-coordinator": "mindie-motor-coordinator",
    "vllm-p0": "vllm-p0",
    "vllm-d0": "vllm-d0",
}
TEMPLATE_LOG_DIR = "/root/ascend/log"  # what deploy.py's yaml templates hold before modify_log_mount


def motors_modify_log_mount(motor_checkout: Path):
    sys.path.insert(0, str(motor_checkout / "examples" / "deployer"))
    try:
        from lib.utils import modify_log_mount
    finally:
        sys.path.pop(0)
    return modify_log_mount


def test_every_motor_pod_logs_where_deploy_py_mounts_it(motor_checkout: Path) -> None:
    modify_log_mount = motors_modify_log_mount(motor_checkout)
    rendered = render(with_host_log_dirs(stack_values("dev")), stack="dev")
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    folders = {}
    for name, app_type in WORKLOADS.items():
        ours = rendered.get("Deployment", name)
        theirs = copy.deepcopy(ours)
        for volume in theirs["spec"]["template"]["spec"]["volumes"]:
            if volume["name"] == "plog-path":
                volume["hostPath"]["path"] = TEMPLATE_LOG_DIR
        modify_log_mount(theirs, user_config, app_type)
        assert theirs == ours, name
        (volume,) = [v for v in ours["spec"]["template"]["spec"]["volumes"] if v["name"] == "plog-path"]
        folders[name] = volume["hostPath"]["path"]
    assert folders == {
        "mindie-motor-controller": "/data/logs/controller",
        "mindie-motor-coordinator": "/data/logs/coordinator",
        "vllm-p0": "/data/logs/engines",
        "vllm-d0": "/data/logs/engines",
    }
