"""Rolls that keep a role serving (issue 23): the `rollout` setting, the waves it makes, and the dependencies the
program gives the engine Deployments so that the Pulumi engine updates one wave after the other."""

from __future__ import annotations

import json

import pytest

from kvpool.internal.rollout import max_unavailable, waves
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import render, stack_values
from tests.service_configs import plain_pd, problems_of

OWN = "organization/motor-kvpool/svc"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"


# --- the setting -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setting", "instances", "expected"),
    [
        ("50%", 4, 2), ("50%", 3, 1), ("50%", 1, 1), ("50%", 16, 8),  # rounded down, at least 1
        ("25%", 3, 1), ("100%", 4, 4), ("1%", 16, 1),
        (1, 4, 1), (3, 4, 3), (9, 4, 4),  # never more than the role has
    ],
)
def test_a_wave_stops_at_most_the_setting_and_at_least_one(setting, instances, expected) -> None:
    assert max_unavailable(setting, instances) == expected


def test_running_instances_form_waves_in_instance_order() -> None:
    assert waves(["vllm-p0", "vllm-p1", "vllm-p2", "vllm-p3"], 2) == [["vllm-p0", "vllm-p1"], ["vllm-p2", "vllm-p3"]]
    assert waves(["vllm-d0", "vllm-d1", "vllm-d2"], 2) == [["vllm-d0", "vllm-d1"], ["vllm-d2"]]
    assert waves([], 2) == []


def test_the_default_keeps_half_of_each_role_and_is_not_motor_config() -> None:
    settings = load_from_pulumi_config(plain_pd(), "svc")
    assert settings.rollout.prefill.max_unavailable_instances == "50%"
    assert settings.rollout.decode.max_unavailable_instances == "50%"
    assert "rollout" not in settings.user_config()


@pytest.mark.parametrize("value", [0, "0%", "150%", "half", True, 1.5, -1])
def test_a_setting_that_stops_nothing_or_more_than_all_is_refused(value) -> None:
    service = plain_pd()
    service["rollout"] = {"decode": {"max_unavailable_instances": value}}
    assert problems_of(service) == [
        f"rollout.decode.max_unavailable_instances: {value!r} is not allowed: an instance is updated by stopping it "
        "(strategy Recreate: its NPUs are exclusive), so at least 1 is unavailable; write a whole number from 1, or a "
        "percentage from 1% to 100% such as \"50%\""
    ]


def test_an_unknown_rollout_key_suggests_the_known_one() -> None:
    service = plain_pd()
    service["rollout"] = {"prefill": {"max_unavailable": 1}}
    assert problems_of(service) == [
        "rollout.prefill.max_unavailable: unknown key; did you mean 'max_unavailable_instances'?"
    ]


def test_a_service_set_refuses_rollout_since_its_operator_rolls() -> None:
    service = plain_pd()
    service["motor_deploy_config"]["deploy_mode"] = "infer_service_set"
    service["rollout"] = {"prefill": {"max_unavailable_instances": 1}}
    assert problems_of(service) == [
        "rollout: deploy_mode infer_service_set hands every engine instance to the InferServiceSet operator, which "
        "rolls them by its own rules; motor-kvpool cannot order them. Remove rollout, or use deploy_mode "
        "multi_deployment"
    ]
    service["rollout"] = {}  # Pulumi.yaml's default for a stack that does not set it
    assert load_from_pulumi_config(service, "svc").motor_deploy_config.deploy_mode == "infer_service_set"


# --- the program -----------------------------------------------------------------------------------------------


def four_and_three(**rollout) -> dict:
    values = stack_values("dev")
    values["motor_deploy_config"].update(p_instances_num=4, d_instances_num=3)
    if rollout:
        values["rollout"] = rollout
    return values


def engines_before(prefill: int, decode: int) -> dict:
    return {OWN: {"engines": {"prefill": [f"vllm-p{i}" for i in range(prefill)],
                              "decode": [f"vllm-d{i}" for i in range(decode)]}}}


def engine_waits(run) -> dict[str, list[str]]:
    """Each engine Deployment -> the engine Deployments it depends on (by Kubernetes name)."""
    names = {r.urn: r.inputs["metadata"]["name"] for r in run.resources if r.type == DEPLOYMENT}
    return {
        names[r.urn]: sorted(names[u] for u in r.dependencies if names.get(u, "").startswith("vllm-"))
        for r in run.resources if r.type == DEPLOYMENT and names[r.urn].startswith("vllm-")
    }


def test_running_instances_wait_for_the_wave_before() -> None:
    run = render(four_and_three(), stack_references=engines_before(4, 3)).run
    assert engine_waits(run) == {
        "vllm-p0": [], "vllm-p1": [], "vllm-p2": ["vllm-p0", "vllm-p1"], "vllm-p3": ["vllm-p0", "vllm-p1"],
        "vllm-d0": [], "vllm-d1": ["vllm-d0"], "vllm-d2": ["vllm-d1"],
    }
    assert run.outputs["rollout"] == {"prefill": {"max_unavailable_instances": 2}, "decode": {"max_unavailable_instances": 1}}


def test_a_first_deploy_waits_for_nothing() -> None:
    """The offline engine answers a stack's reference to itself as the real one does before the first update."""
    run = render(four_and_three()).run
    assert engine_waits(run) == {name: [] for name in
                                 ["vllm-p0", "vllm-p1", "vllm-p2", "vllm-p3", "vllm-d0", "vllm-d1", "vllm-d2"]}
    reference = run.resource("pulumi:pulumi:StackReference", OWN)
    assert reference.inputs["name"] == OWN


def test_new_instances_start_at_once_and_only_running_ones_are_chained() -> None:
    run = render(four_and_three(prefill={"max_unavailable_instances": 1}), stack_references=engines_before(2, 3)).run
    waits = engine_waits(run)
    assert {name: waits[name] for name in ("vllm-p0", "vllm-p1", "vllm-p2", "vllm-p3")} == {
        "vllm-p0": [], "vllm-p1": ["vllm-p0"], "vllm-p2": [], "vllm-p3": [],
    }


def test_all_at_once_restores_the_parallel_roll() -> None:
    values = four_and_three(prefill={"max_unavailable_instances": "100%"}, decode={"max_unavailable_instances": 3})
    run = render(values, stack_references=engines_before(4, 3)).run
    assert all(waits == [] for waits in engine_waits(run).values())


def test_each_engine_deployment_is_awaited_until_all_its_new_pods_are_available() -> None:
    """The provider's own Deployment await ends before a Recreate update's new pods exist (kvpool/internal/rollout.py);
    the annotation makes it wait for every pod of the instance, prefill's 2 and decode's 1."""
    values = four_and_three()
    values["motor_deploy_config"]["single_p_instance_pod_num"] = 2
    run = render(values, stack_references=engines_before(4, 3)).run
    annotations = {r.inputs["metadata"]["name"]: r.inputs["metadata"]["annotations"] for r in run.resources
                   if r.type == DEPLOYMENT and r.inputs["metadata"]["name"].startswith("vllm-")}
    wait = '["jsonpath={{.status.updatedReplicas}}={0}", "jsonpath={{.status.availableReplicas}}={0}"]'
    assert annotations == {
        **{f"vllm-p{i}": {"pulumi.com/waitFor": wait.format(2)} for i in range(4)},
        **{f"vllm-d{i}": {"pulumi.com/waitFor": wait.format(1)} for i in range(3)},
    }


def test_a_service_set_reads_no_previous_outputs_and_exports_no_rollout() -> None:
    values = stack_values("service-set")
    run = render(values, stack_references=engines_before(1, 1)).run
    assert [r for r in run.resources if r.type == "pulumi:pulumi:StackReference"] == []
    assert "rollout" not in run.outputs
    # The operator creates and awaits the instances: the provider awaits nothing of them.
    assert "pulumi.com/waitFor" not in json.dumps([r.inputs for r in run.resources])
    assert json.loads(json.dumps(run.outputs["engines"])) == {"prefill": ["vllm-p0"], "decode": ["vllm-d0"]}
