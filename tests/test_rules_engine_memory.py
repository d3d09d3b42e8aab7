"""An engine container's memory limit holds its memory-backed /dev/shm (motor_deploy_config.dshm_size) and the pool
memory its pod's ranks hold (kvpool/policies/rules/engine_memory.py): Kubernetes counts /dev/shm against the limit,
so a limit at or below it gets the engine OOM-killed once /dev/shm fills."""

from __future__ import annotations

from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.service_configs import mooncake_pool, plain_pd, problems_of

OOM = ("a memory-backed emptyDir Kubernetes counts against the container's memory limit{held}: the engine is "
       "OOM-killed once vLLM and the KV pool fill /dev/shm; ")


def limited(memory: str, request: str | None = None) -> dict:
    """pods.<side> with a memory limit (and the request it needs: Kubernetes refuses a request above its limit)."""
    return {"requests": {"cpu": "16", "memory": request or memory}, "limits": {"memory": memory}}


def test_a_limit_equal_to_dshm_size_leaves_the_engine_nothing():
    service = plain_pd()
    service["pods"] = {"prefill": limited("4Gi")}  # dshm_size: deploy.py's 4Gi
    assert problems_of(service) == [
        "pods.prefill.limits.memory: is 4Gi, not above the prefill engine's /dev/shm (motor_deploy_config.dshm_size "
        "4Gi), " + OOM.format(held="") + "raise pods.prefill.limits.memory to at least 5Gi, or lower "
        "motor_deploy_config.dshm_size to at most 3Gi."
    ]


def test_a_limit_below_dshm_size_names_the_side_and_both_values():
    service = plain_pd()
    service["motor_deploy_config"]["dshm_size"] = "16Gi"
    service["pods"] = {"decode": limited("8Gi")}
    assert problems_of(service) == [
        "pods.decode.limits.memory: is 8Gi, not above the decode engine's /dev/shm (motor_deploy_config.dshm_size "
        "16Gi), " + OOM.format(held="") + "raise pods.decode.limits.memory to at least 17Gi, or lower "
        "motor_deploy_config.dshm_size to at most 7Gi."
    ]


def test_either_way_out_the_message_names_holds():
    service = plain_pd()
    service["motor_deploy_config"]["dshm_size"] = "16Gi"
    service["pods"] = {"decode": limited("17Gi")}
    load_from_pulumi_config(service, "svc")
    service["motor_deploy_config"]["dshm_size"] = "7Gi"
    service["pods"] = {"decode": limited("8Gi")}
    load_from_pulumi_config(service, "svc")


def test_an_engine_without_a_memory_limit_is_not_checked():
    """deploy.py's engine template sets no memory limit: /dev/shm is bounded by dshm_size and the node alone."""
    service = plain_pd()
    service["motor_deploy_config"]["dshm_size"] = "128Gi"
    load_from_pulumi_config(service, "svc")
    assert rules.check_engine_memory_limit(service, {"prefill": {"requests": {"memory": "4Gi"}}}) == []


def test_the_pool_memory_of_the_pods_ranks_is_added_as_the_pool_memory_rule_sums_it():
    """One rank's 20 GiB segment and 1 GiB local buffer fit the 24Gi the pod requests
    (kvpool-configure-engine-pod-pool-memory), but not beside a 4Gi /dev/shm within a 24Gi limit."""
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "20GB"
    service["pods"] = {"prefill": limited("24Gi")}
    assert problems_of(service) == [
        "pods.prefill.limits.memory: is 24Gi, not above the prefill engine's /dev/shm (motor_deploy_config.dshm_size "
        "4Gi), " + OOM.format(held=", plus the 21 GiB of pool memory a prefill pod's ranks hold "
                              "(kvpool-configure-engine-pod-pool-memory) = 25 GiB")
        + "raise pods.prefill.limits.memory to at least 26Gi, or lower motor_deploy_config.dshm_size to at most 2Gi."
    ]
    service["pods"] = {"prefill": limited("26Gi", "24Gi")}
    load_from_pulumi_config(service, "svc")


def test_a_standalone_store_process_counts_once_per_pod_and_a_buffer_per_rank():
    service = mooncake_pool()
    service["kv_cache_store_config"].update(store_mode="standalone", global_segment_size="20GB")
    service["motor_engine_prefill_config"]["engine_config"]["tensor_parallel_size"] = 2
    assert rules.engine_pod_pool_bytes(service) == {"prefill": 22 * 2**30, "decode": 21 * 2**30}
    findings = rules.check_engine_memory_limit(service, {"prefill": limited("26Gi"), "decode": limited("26Gi")})
    assert [(f.path, f.example) for f in findings] == [("pods.prefill.limits.memory", "27Gi")]


def test_when_the_pool_alone_fills_the_limit_only_a_larger_limit_helps():
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "20GB"
    [finding] = rules.check_engine_memory_limit(service, {"decode": limited("21Gi")})
    assert str(finding) == (
        "pods.decode.limits.memory: is 21Gi, not above the decode engine's /dev/shm (motor_deploy_config.dshm_size "
        "4Gi), " + OOM.format(held=", plus the 21 GiB of pool memory a decode pod's ranks hold "
                              "(kvpool-configure-engine-pod-pool-memory) = 25 GiB")
        + "raise pods.decode.limits.memory to at least 26Gi."
    )


def test_a_consumer_counts_its_dev_shm_alone():
    """The pool's sizes are the owner's stack's (target_stack), checked there: here /dev/shm alone is counted."""
    service = mooncake_pool()
    service["kv_cache_store_config"]["global_segment_size"] = "20GB"
    assert rules.check_engine_memory_limit(service, {"prefill": limited("24Gi")}, owns_store=False) == []
    assert [f.example for f in rules.check_engine_memory_limit(service, {"prefill": limited("4Gi")},
                                                                owns_store=False)] == ["5Gi"]


def test_the_rendered_resources_carry_the_npus_too():
    """The pack reads the engine container's resources as rendered, NPUs included."""
    rendered = {"limits": {"huawei.com/Ascend910": 16.0, "memory": "4Gi"}, "requests": {"memory": "4Gi"}}
    assert [f.path for f in rules.check_engine_memory_limit(plain_pd(), {"prefill": rendered})] == [
        "pods.prefill.limits.memory"]
