"""The Analyzer gRPC protocol's messages, built as the engine builds them, and the pack's answers read back.

What each request carries, and where it differs offline, is in kvpool/cli/policy_host/runner.py, which holds the
conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2

from kvpool.cli.engine.mock_engine import RecordedResource
from kvpool.cli.engine.property_values import encode_properties
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.policy_host.pack_config import PolicyConfig, PolicyInfo
from kvpool.internal.local_backend import LOCAL_ORGANIZATION
from kvpool.internal.units import integral_floats_to_ints

LEVEL_NAMES = {
    analyzer_pb2.ADVISORY: "advisory",
    analyzer_pb2.MANDATORY: "mandatory",
    analyzer_pb2.REMEDIATE: "remediate",
    analyzer_pb2.DISABLED: "disabled",
}
_LEVEL_VALUES = {name: value for value, name in LEVEL_NAMES.items()}
_POLICY_KINDS = {analyzer_pb2.POLICY_TYPE_RESOURCE: "resource", analyzer_pb2.POLICY_TYPE_STACK: "stack"}


def configure_stack_request(config: StackConfig) -> analyzer_pb2.AnalyzerStackConfigureRequest:
    return analyzer_pb2.AnalyzerStackConfigureRequest(
        stack=config.stack,
        project=config.project,
        organization=LOCAL_ORGANIZATION,
        dry_run=True,
        config=config.values,
        config_secret_keys=config.secret_keys,
    )


def policy_info(policy: analyzer_pb2.PolicyInfo) -> PolicyInfo:
    schema = policy.configSchema
    # Protobuf made every number of the schema a float; `"minimum": 1` reads better in messages than 1.0.
    properties = integral_floats_to_ints(json_format.MessageToDict(schema.properties))
    return PolicyInfo(
        name=policy.name,
        description=policy.description,
        enforcement_level=LEVEL_NAMES[policy.enforcementLevel],
        kind=_POLICY_KINDS.get(policy.policy_type, "unknown"),
        config_properties=properties,
        config_required=tuple(schema.required),
    )


def initial_config(info: analyzer_pb2.AnalyzerInfo) -> dict[str, PolicyConfig]:
    # proto3 cannot leave the level out, so an entry that sets only properties carries ADVISORY (0); the CLI
    # applies that as a level, and so does this.
    return {
        name: PolicyConfig(LEVEL_NAMES[entry.enforcementLevel], json_format.MessageToDict(entry.properties))
        for name, entry in info.initialConfig.items()
    }


def configure_request(settings: Mapping[str, PolicyConfig]) -> analyzer_pb2.ConfigureAnalyzerRequest:
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    for name, config in settings.items():
        entry = request.policyConfig[name]
        entry.enforcementLevel = _LEVEL_VALUES[config.enforcement_level or "advisory"]
        entry.properties.update(config.properties)
    return request


def resource_properties(resource: RecordedResource) -> struct_pb2.Struct:
    # The engine leaves out top-level internal keys (`__defaults`, ...) when it marshals for an analyzer.
    inputs = {key: value for key, value in resource.inputs.items() if not key.startswith("__")}
    return encode_properties(inputs, resource.secret_paths, resource.unknown_paths)


def _options(resource: RecordedResource, parent: str = "") -> analyzer_pb2.AnalyzerResourceOptions:
    # The engine always sends custom timeouts (zero when unset).
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=resource.protect,
        parent=parent,
        customTimeouts=analyzer_pb2.AnalyzerResourceOptions.CustomTimeouts(),
    )


def _provider(
    resource: RecordedResource, by_urn: Mapping[str, RecordedResource], inputs: Mapping[str, struct_pb2.Struct]
) -> analyzer_pb2.AnalyzerProviderResource | None:
    """The resource's explicit provider (a reference is `<urn>::<id>`), with the provider's inputs."""
    provider = by_urn.get(resource.provider.rsplit("::", 1)[0]) if resource.provider else None
    if provider is None:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, urn=provider.urn, name=provider.name, properties=inputs[provider.urn]
    )


def _resource_fields(
    resource: RecordedResource,
    properties: struct_pb2.Struct,
    by_urn: Mapping[str, RecordedResource],
    inputs: Mapping[str, struct_pb2.Struct],
) -> dict[str, Any]:
    """What Analyze and AnalyzeStack both send about a resource."""
    return {
        "type": resource.type,
        "urn": resource.urn,
        "name": resource.name,
        "properties": properties,
        "provider": _provider(resource, by_urn, inputs),
    }


def analyze_request(
    resource: RecordedResource,
    properties: struct_pb2.Struct,
    by_urn: Mapping[str, RecordedResource],
    inputs: Mapping[str, struct_pb2.Struct],
) -> analyzer_pb2.AnalyzeRequest:
    return analyzer_pb2.AnalyzeRequest(
        **_resource_fields(resource, properties, by_urn, inputs),
        options=_options(resource, parent=resource.parent_urn or ""),
    )


def stack_resource(
    resource: RecordedResource,
    properties: struct_pb2.Struct,
    by_urn: Mapping[str, RecordedResource],
    inputs: Mapping[str, struct_pb2.Struct],
) -> analyzer_pb2.AnalyzerResource:
    # AnalyzeStack carries the parent beside the options, not in them (the engine's AnalyzeResources).
    return analyzer_pb2.AnalyzerResource(
        **_resource_fields(resource, properties, by_urn, inputs),
        options=_options(resource),
        parent=resource.parent_urn or "",
        dependencies=resource.dependencies,
    )


def reported_message(message: str, description: str) -> str:
    """The pack sends `description + "\\n" + message` (the description alone for an empty message)."""
    if message == description:
        return ""
    prefix = description + "\n"
    return message[len(prefix) :] if message.startswith(prefix) else message
