"""One service's configuration as the rules want it, read from what the program registered.

The effective user_config.json comes from ConfigMap motor-config, the engines' environment from their pods (the
real values, motor-kvpool's defaults included), and what Motor does not carry (hybrid attention, the vllm-ascend
version, kv_pool_sizing) from the stack's configuration, which the CLI hands the pack in PULUMI_CONFIG.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping

import pulumi

from .rules import (
    SERVICE_SET_TYPE,
    SIDES,
    Service,
    engine_env_section,
    engine_section,
    role_pod_template,
    service_set_roles,
)

PROJECT = "motor-kvpool"
CONFIGMAP = "kubernetes:core/v1:ConfigMap"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
ENGINE_CONTAINER = "vllm"
STORE_COMPONENT = "kv-store"  # app.kubernetes.io/component of the store's objects, and its service-set role


@dataclass(kw_only=True)
class ServiceView(Service):
    config_urn: str  # where a finding about the configuration is reported


def _name(resource: Any) -> str:
    return str((resource.props.get("metadata") or {}).get("name", resource.name))


def _engine_container(pod_template: Mapping[str, Any]) -> Mapping[str, Any]:
    containers = (pod_template.get("spec") or {}).get("containers") or []
    return next((c for c in containers if c.get("name") == ENGINE_CONTAINER), None) or {}


def _engine_containers(resources: Iterable[Any]) -> dict[str, Mapping[str, Any]]:
    """side -> its engine container, from the side's first Deployment or its InferServiceSet role."""
    engines: dict[str, Mapping[str, Any]] = {}
    for resource in resources:
        if resource.resource_type == DEPLOYMENT:
            side = ((resource.props.get("metadata") or {}).get("labels") or {}).get("app.kubernetes.io/component")
            if side in SIDES and side not in engines:
                engines[side] = _engine_container((resource.props.get("spec") or {}).get("template") or {})
        elif resource.resource_type == SERVICE_SET_TYPE:
            for role, template in role_templates(resource.props):
                if role in SIDES:
                    engines[role] = _engine_container(template)
    return engines


def role_templates(props: Mapping[str, Any]) -> Iterator[tuple[Any, Mapping[str, Any]]]:
    """(name, pod template) of every role of an InferServiceSet."""
    for role in service_set_roles(props):
        yield role.get("name"), role_pod_template(role)


def pod_templates(resource_type: str, props: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The pod templates of a workload: each role's of an InferServiceSet, a Deployment's (or other owner's) own."""
    if resource_type == SERVICE_SET_TYPE:
        for _, template in role_templates(props):
            yield template
    elif "template" in (props.get("spec") or {}):
        yield props["spec"]["template"]


def holds_store(resource_type: str, props: Mapping[str, Any]) -> bool:
    """Whether an object belongs to the KV store: labelled as its component, or a service set with its role."""
    labels = (props.get("metadata") or {}).get("labels") or {}
    return labels.get("app.kubernetes.io/component") == STORE_COMPONENT or (
        resource_type == SERVICE_SET_TYPE and any(role == STORE_COMPONENT for role, _ in role_templates(props))
    )


def _stack_flags() -> tuple[dict[str, bool], str | None, dict[str, Any]]:
    config = pulumi.Config(PROJECT)
    hybrid = {side: bool((config.get_object(engine_section(side)) or {}).get("hybrid_attention")) for side in SIDES}
    return hybrid, config.get("vllm_ascend_version") or None, dict(config.get_object("kv_pool_sizing") or {})


def service_view(resources: Iterable[Any]) -> ServiceView | None:
    """None when the stack holds no motor-config: not a motor-kvpool service, nothing to check."""
    resources = list(resources)
    config_map = next((r for r in resources if r.resource_type == CONFIGMAP and _name(r) == "motor-config"), None)
    if config_map is None:
        return None
    user_config = json.loads((config_map.props.get("data") or {}).get("user_config.json", "{}"))
    hybrid, version, sizing = _stack_flags()
    engines = _engine_containers(resources)
    # Props arrive wrapped in pulumi_policy's proxies (not dict instances): read them with .get only.
    references = [
        (r.name, (r.props.get("outputs") or {}).get("kv_store"))
        for r in resources
        if r.resource_type == STACK_REFERENCE and (r.props.get("outputs") or {}).get("kv_store")
    ]
    envs = {side: {e["name"]: e["value"] for e in engine.get("env") or [] if "value" in e}
            for side, engine in engines.items()}
    return ServiceView(
        user_config=user_config,
        env_sections={engine_env_section(side): env for side, env in envs.items()},
        engine_envs=envs,
        engine_resources={side: engine.get("resources") or {} for side, engine in engines.items()},
        config_urn=config_map.urn,
        owns_store=any(holds_store(r.resource_type, r.props) for r in resources),
        hybrid_attention=hybrid,
        vllm_ascend_version=version,
        sizing=sizing,
        referenced_store=references[0] if references else None,
    )
