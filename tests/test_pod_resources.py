"""pods: what the Motor pods ask the cluster for (issue 46): each role's CPU and memory and the engines' scheduler,
with deploy.py's amounts as defaults, validated as kv_cache_store_config.resources is, and rendered as written."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import render, stack_values
from tests.service_configs import memcache_pool, problems_of

NPU = "huawei.com/Ascend910"

# Every role off deploy.py's amounts, prefill and decode apart from each other.
PODS = {
    "scheduler_name": "kai-scheduler",
    "prefill": {"requests": {"cpu": "24", "memory": "200Gi"}, "limits": {"cpu": "32", "memory": "256Gi"}},
    "decode": {"requests": {"cpu": "12", "memory": "100Gi"}},
    "controller": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
    "coordinator": {"requests": {"cpu": "32", "memory": "16Gi"}, "limits": {"memory": "32Gi"}},
    "kv_conductor": {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
}


def affinity(pods: dict[str, Any] | None = None) -> dict[str, Any]:
    """The kv-affinity example (engines, controller, coordinator and KV conductor) with this pods section."""
    service = copy.deepcopy(stack_values("kv-affinity"))
    if pods is not None:
        service["pods"] = copy.deepcopy(pods)
    return service


def test_the_defaults_are_deploy_pys_templates():
    pods = load_from_pulumi_config(memcache_pool(), "svc").pods
    assert pods.model_dump() == {
        "scheduler_name": "volcano",
        "prefill": {"requests": {"cpu": "16", "memory": "64Gi"}, "limits": {"cpu": None, "memory": None}},
        "decode": {"requests": {"cpu": "16", "memory": "64Gi"}, "limits": {"cpu": None, "memory": None}},
        "controller": {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}},
        "coordinator": {"requests": {"cpu": "16", "memory": "4Gi"}, "limits": {"cpu": "64", "memory": "8Gi"}},
        "kv_conductor": {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}},
    }


def test_each_pod_asks_for_what_its_role_says():
    rendered = render(affinity(PODS), stack="kv-affinity")
    npus = {side: stack_values("kv-affinity")["motor_deploy_config"][f"{side[0]}_pod_npu_num"]
            for side in ("prefill", "decode")}
    prefill = rendered.container("Deployment", "vllm-p0", "vllm")["resources"]
    decode = rendered.container("Deployment", "vllm-d0", "vllm")["resources"]
    assert prefill == {"requests": {NPU: npus["prefill"], "cpu": "24", "memory": "200Gi"},
                       "limits": {NPU: npus["prefill"], "cpu": "32", "memory": "256Gi"}}
    assert decode == {"requests": {NPU: npus["decode"], "cpu": "12", "memory": "100Gi"}, "limits": {NPU: npus["decode"]}}
    roles = {"mindie-motor-controller": "controller", "mindie-motor-coordinator": "coordinator",
             "mindie-motor-kv-conductor": "kv-conductor"}
    assert {name: rendered.container("Deployment", name, container)["resources"]
            for name, container in roles.items()} == {
        "mindie-motor-controller": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "2Gi"}},
        "mindie-motor-coordinator": {"requests": {"cpu": "32", "memory": "16Gi"}, "limits": {"memory": "32Gi"}},
        "mindie-motor-kv-conductor": {"requests": {"cpu": "1", "memory": "512Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
    }
    schedulers = {name: rendered.get("Deployment", name)["spec"]["template"]["spec"].get("schedulerName")
                  for name in ("vllm-p0", "vllm-d0", *roles)}
    assert schedulers == {"vllm-p0": "kai-scheduler", "vllm-d0": "kai-scheduler", "mindie-motor-controller": None,
                          "mindie-motor-coordinator": None, "mindie-motor-kv-conductor": None}
    # Motor never reads them: user_config.json stays as it was.
    assert "pods" not in load_from_pulumi_config(affinity(PODS), "kv-affinity").user_config()


@pytest.mark.parametrize(("pods", "problem"), [
    ({"coordinator": {"requests": {"cpu": "16"}, "limits": {"cpu": "8"}}},
     "pods.coordinator.requests.cpu: 16 is more than limits.cpu 8; Kubernetes refuses a request above its limit"),
    ({"decode": {"requests": {"memory": "64Gi"}, "limits": {"memory": "32Gi"}}},
     "pods.decode.requests.memory: 64Gi is more than limits.memory 32Gi; Kubernetes refuses a request above its "
     "limit"),
    ({"kv_conductor": {"requests": {"cpu": "1500m"}, "limits": {"cpu": "1"}}},
     "pods.kv_conductor.requests.cpu: 1500m is more than limits.cpu 1; Kubernetes refuses a request above its "
     "limit"),
    # Written requests leave the default limits: deploy.py's 4Gi is below 8Gi.
    ({"controller": {"requests": {"memory": "8Gi"}}},
     "pods.controller.requests.memory: 8Gi is more than limits.memory 4Gi; Kubernetes refuses a request above its "
     "limit"),
    ({"prefill": {"requests": {"cpu": "lots"}}},
     "pods.prefill.requests.cpu: 'lots' is not a CPU amount; write e.g. 4 or 500m"),
    ({"controller": {"limits": {"memory": "4"}}}, "pods.controller.limits.memory: '4' needs a unit, e.g. 4Gi or 200Gi"),
    ({"prefill": {"requests": {"nvidia.com/gpu": 1}}},
     "pods.prefill.requests['nvidia.com/gpu']: unknown key; known keys here: cpu, memory"),
    ({"scheduler_name": "Volcano Scheduler"},
     "pods.scheduler_name: 'Volcano Scheduler' is not a scheduler name (a pod's schedulerName is a DNS subdomain): "
     "lower-case letters, digits, '-' and '.', starting and ending with a letter or digit, e.g. volcano"),
])
def test_a_pods_amount_kubernetes_would_refuse_is_refused_naming_its_field(pods, problem):
    service = memcache_pool()
    service["pods"] = pods
    assert problems_of(service) == [problem]


def test_a_volcano_queue_under_another_scheduler_is_refused():
    """The queue is an annotation only Volcano reads: it would stay on the pods of another scheduler, doing nothing."""
    service = memcache_pool()
    service["motor_deploy_config"]["scheduling_queue"] = "inference"
    service["pods"] = {"scheduler_name": "kai-scheduler"}
    assert problems_of(service) == [
        "motor_deploy_config.scheduling_queue: 'inference' is a Volcano queue (scheduling.volcano.sh/queue-name), but "
        "pods.scheduler_name is 'kai-scheduler', which never reads it; remove scheduling_queue, or set "
        "pods.scheduler_name: volcano"
    ]
    service["pods"] = {"scheduler_name": "volcano"}
    load_from_pulumi_config(service, "svc")
