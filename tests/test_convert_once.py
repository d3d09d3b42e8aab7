"""policies/convert_once.py: within one analyzer call pulumi_policy converts each resource's properties once, and
every policy still gets properties of its own. Run on pulumi_policy's own servicer, in-process."""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, StackValidationPolicy
from pulumi_policy import policy as policy_module

from policies import convert_once
from tests.program_runs import PROJECT_DIR


def test_the_installed_pulumi_policy_is_the_one_it_was_written_for() -> None:
    assert version("pulumi-policy") == convert_once.PULUMI_POLICY_VERSION
    pins = (PROJECT_DIR / "policies" / "requirements.txt").read_text().splitlines()
    assert f"pulumi-policy=={convert_once.PULUMI_POLICY_VERSION}" in pins


def stack_request(count: int) -> analyzer_pb2.AnalyzeStackRequest:
    resources = []
    for index in range(count):
        properties = struct_pb2.Struct()
        properties.update({"metadata": {"name": f"engine-{index}", "labels": {"role": "decode"}}, "replicas": 1})
        resources.append(analyzer_pb2.AnalyzerResource(
            type="kubernetes:apps/v1:Deployment", urn=f"urn:pulumi:dev::p::kubernetes:apps/v1:Deployment::engine-{index}",
            name=f"engine-{index}", properties=properties))
    return analyzer_pb2.AnalyzeStackRequest(resources=resources)


def servicer(policies: list[Any]) -> Any:
    return policy_module._PolicyAnalyzerServicer(
        "pack", "0.0.1", policies, EnforcementLevel.MANDATORY, None, None, None, None, None, None, None)


@pytest.fixture
def conversions(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every MessageToDict pulumi_policy really does (convert_once calls json_format's at call time)."""
    converted: list[Any] = []
    real = json_format.MessageToDict

    def counting(message: Any, *args: Any, **kwargs: Any) -> Any:
        converted.append(message)
        return real(message, *args, **kwargs)

    monkeypatch.setattr(json_format, "MessageToDict", counting)
    return converted


def test_three_stack_policies_over_four_resources_convert_each_resource_once(conversions: list[Any]) -> None:
    seen: list[list[str]] = []

    def names(args: Any, report: Any) -> None:
        seen.append([resource.props["metadata"]["name"] for resource in args.resources])

    convert_once.install()
    policies = [StackValidationPolicy(name=f"policy-{n}", description="d", validate=names) for n in range(3)]
    servicer(policies).AnalyzeStack(stack_request(4), None)
    assert len(conversions) == 4
    assert seen == [[f"engine-{index}" for index in range(4)]] * 3
    servicer(policies).AnalyzeStack(stack_request(4), None)  # the next call converts its own request again
    assert len(conversions) == 8


def test_a_policy_that_writes_to_its_properties_does_not_change_the_next_policys() -> None:
    seen: list[Any] = []

    def overwrite(args: Any, report: Any) -> None:
        args.resources[0].props["metadata"]["name"] = "changed"
        args.resources[0].props["replicas"] = 5

    def read(args: Any, report: Any) -> None:
        seen.append((args.resources[0].props["metadata"]["name"], args.resources[0].props["replicas"]))

    convert_once.install()
    servicer([StackValidationPolicy(name="overwrite", description="d", validate=overwrite),
              StackValidationPolicy(name="read", description="d", validate=read)]).AnalyzeStack(stack_request(1), None)
    assert seen == [("engine-0", 1)]


def test_installing_twice_wraps_the_calls_once() -> None:
    convert_once.install()
    analyze_stack = policy_module._PolicyAnalyzerServicer.AnalyzeStack
    convert_once.install()
    assert policy_module._PolicyAnalyzerServicer.AnalyzeStack is analyze_stack
