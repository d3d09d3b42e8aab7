"""kvpool/policies/convert_once.py: within one analyzer call pulumi_policy converts each resource's properties once, and
every policy still gets properties of its own. Run on pulumi_policy's own servicer, in-process."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib.metadata import version
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, StackValidationPolicy, proxy
from pulumi_policy import policy as policy_module
from pulumi_policy.proxy import UnknownValueError

from kvpool.policies import convert_once
from tests.program_runs import PROJECT_DIR


def test_the_installed_pulumi_policy_is_the_one_it_was_written_for() -> None:
    assert version("pulumi-policy") == convert_once.PULUMI_POLICY_VERSION
    pins = (PROJECT_DIR / "kvpool" / "policies" / "requirements.txt").read_text().splitlines()
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


def walked(props: Any) -> Any:
    """Every value a policy can read, as plain data; an unknown value as ("unknown", its message, its path)."""
    if isinstance(props, Mapping):
        keys = list(props)
        return {"mapping": [(key, read(props, key)) for key in keys], "len": len(props), "get-missing": props.get("x-none")}
    if isinstance(props, Sequence) and not isinstance(props, str):
        return {"sequence": [read(props, index) for index in range(len(props))], "last": read(props, -1) if props else None,
                "slice": [walked(item) if not isinstance(item, str) else item for item in props[0:2]]}
    return props


def read(container: Any, key: Any) -> Any:
    try:
        return walked(container[key])
    except UnknownValueError as error:
        return ("unknown", error.message, error.props)


PROPERTIES = {
    "metadata": {"name": "engine", "labels": {"role": "decode"}, "annotations": {}},
    "spec": {"replicas": 2.0, "ports": [{"port": 80.0}, proxy.UNKNOWN_NUMBER_VALUE, [1.0, proxy.UNKNOWN_STRING_VALUE]],
             "host": proxy.UNKNOWN_STRING_VALUE, "empty": [], "flag": True, "none": None},
}


def test_what_a_policy_reads_is_what_pulumi_policys_own_proxy_shows() -> None:
    convert_once.install()
    convert_once._this_call.memo = {}  # inside an analyzer call
    try:
        on_read = policy_module.unknown_checking_proxy(PROPERTIES)
    finally:
        convert_once._this_call.memo = None
    assert isinstance(on_read, convert_once._DictOnRead)
    assert walked(on_read) == walked(proxy.unknown_checking_proxy(PROPERTIES))
    assert read(on_read["spec"], "host") == ("unknown", "string value at .spec.host can't be known during preview",
                                              ["spec", "host"])
    assert read(on_read["spec"]["ports"][2], 1)[2] == ["spec", "ports", "2", "1"]


def test_outside_an_analyzer_call_the_proxy_is_pulumi_policys_own() -> None:
    convert_once.install()
    assert isinstance(policy_module.unknown_checking_proxy(PROPERTIES), proxy._DictProxy)
