"""The policies of the motor-kvpool pack: one per entry of the rules' registry (rules/registry.py: name, level,
stacks, words), in its order; here only how the pack runs each, over the configuration or the rendered objects.

Names say kind, verb and property; descriptions start "Checks that" and cite where the rule comes from; the
message of a violation is the rule's own text, naming the field to edit and what to write.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable, Iterable

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    Severity,
    StackValidationArgs,
    StackValidationPolicy,
)

from . import rules
from .service_view import holds_store, pod_templates, service_view


def _on_configuration(rule: rules.Rule) -> Callable[[StackValidationArgs, ReportViolation], None]:
    """The rule over the service's configuration as motor-config and the engine pods carry it."""
    if rule.check is None:
        raise ValueError(f"{rule.name} has no check over the configuration and none over the objects (_ON_OBJECTS)")

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        view = service_view(args.resources)
        if view is None:
            return
        for finding in rule.findings(view, dict(args.get_config() or {})):
            report(str(finding), view.config_urn)

    return validate


def _duplicate_names(args: StackValidationArgs, report: ReportViolation) -> None:
    # By URN, not in the order the engine lists them (its snapshot order, unlike the offline runner's): the same
    # object of a pair is "the second" under `pulumi preview` and offline.
    kube = sorted((r for r in args.resources
                   if r.resource_type.startswith("kubernetes:") and not r.resource_type.startswith("kubernetes:pulumi")),
                  key=lambda r: r.urn)
    keys = [(r.resource_type, (r.props.get("metadata") or {}).get("namespace", ""),
             (r.props.get("metadata") or {}).get("name", r.name)) for r in kube]
    for index, message in rules.check_duplicate_names(keys):
        report(message, kube[index].urn)


def _env_values(containers: Iterable[dict]) -> Iterable[tuple[str, dict[str, Any]]]:
    for container in containers:
        yield container.get("name", "?"), {e["name"]: e.get("value") for e in container.get("env") or []}


def _plaintext_secrets(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type == "kubernetes:core/v1:ConfigMap":
        data = args.props.get("data") or {}
        findings = rules.check_plaintext_secrets(data, "data")
        for key in data:
            if str(key).endswith(".json"):  # motor-config's user_config.json: its pass-through sections
                try:
                    document = json.loads(data[key])
                except (TypeError, ValueError, RecursionError):
                    continue
                findings += rules.check_plaintext_config_secrets(document, f"data[{key}]")
            elif str(key).endswith(".conf") and isinstance(data[key], str):  # the MemCache LocalService conf
                findings += rules.check_plaintext_conf_secrets(data[key], f"data[{key}]")
        for finding in findings:
            report(f"ConfigMap {args.name}: {finding}")
    for template in pod_templates(args.resource_type, args.props):
        for container, env in _env_values((template.get("spec") or {}).get("containers") or []):
            for finding in rules.check_plaintext_secrets(env, f"containers[{container}].env"):
                report(f"{args.resource_type.split(':')[-1]} {args.name}: {finding}")


def _kind(resource_type: str) -> str:
    return resource_type.split(":")[-1]


def _undeclared_host_paths(args: StackValidationArgs, report: ReportViolation) -> None:
    """Every hostPath of every pod against the service's allow-list, built from the user_config.json in motor-config
    as the settings build it (a stack without motor-config: Motor's node paths and the default weights only)."""
    view = service_view(args.resources)
    allowed = rules.allowed_host_paths(view.user_config if view is not None else {})
    for resource in args.resources:
        for template in pod_templates(resource.resource_type, resource.props):
            for finding in rules.check_pod_host_paths(template.get("spec") or {}, allowed):
                report(f"{_kind(resource.resource_type)} {resource.name}: {finding}", resource.urn)


def _privileged_containers(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for template in pod_templates(args.resource_type, args.props):
        for finding in rules.check_privileged_pod(template.get("spec") or {}, "spec"):
            report(f"{_kind(args.resource_type)} {args.name}: {finding}")


def _shell_env_names(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for template in pod_templates(args.resource_type, args.props):
        spec = template.get("spec") or {}
        names = {f"{_kind(args.resource_type)} {args.name}: containers.{container.get('name', '?')}.env":
                 [entry.get("name", "") for entry in container.get("env") or []]
                 for container in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]}
        for finding in rules.check_shell_env_names(names):
            report(str(finding))


def _system_namespaces(args: StackValidationArgs, report: ReportViolation) -> None:
    """Nothing in a namespace Kubernetes owns, but for the read-only ConfigMap Role Motor's controller needs there
    (kvpool/internal/rbac.py: MindX DL writes its device reports to kube-system) and its binding to our account."""
    kube = [r for r in args.resources if r.resource_type.startswith("kubernetes:")]
    readers = {
        ((r.props.get("metadata") or {}).get("namespace"), (r.props.get("metadata") or {}).get("name"))
        for r in kube
        if _kind(r.resource_type) == "Role" and rules.is_read_only_configmap_role(list(r.props.get("rules") or []))
    }
    for resource in kube:
        kind, metadata = _kind(resource.resource_type), resource.props.get("metadata") or {}
        namespace = metadata.get("name") if kind == "Namespace" else metadata.get("namespace")
        if (namespace, metadata.get("name")) in readers and kind == "Role":
            continue
        if kind == "RoleBinding":
            ref = resource.props.get("roleRef") or {}
            subjects = list(resource.props.get("subjects") or [])
            if ref.get("kind") == "Role" and (namespace, ref.get("name")) in readers and subjects and all(
                s.get("kind") == "ServiceAccount" and not rules.check_system_namespace(s.get("namespace"), "")
                for s in subjects
            ):
                continue
        for finding in rules.check_system_namespace(namespace, f"{kind} {metadata.get('name', resource.name)}"):
            report(str(finding), resource.urn)


def _store_protection(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if not holds_store(args.resource_type, args.props):
        return
    stack = os.environ.get("PULUMI_STACK", "")
    problem = rules.store_protection_problem(args.name, stack, args.get_config()["productionStacks"], args.opts.protect)
    if problem:
        report(problem)


# The rules the pack checks on the rendered objects (the settings check the configuration, where a rule has a check).
_ON_OBJECTS: dict[str, tuple[type, Callable[..., None]]] = {
    "kvpool-disallow-duplicate-names": (StackValidationPolicy, _duplicate_names),
    "kvpool-disallow-plaintext-secrets": (ResourceValidationPolicy, _plaintext_secrets),
    "kvpool-disallow-undeclared-host-paths": (StackValidationPolicy, _undeclared_host_paths),
    "kvpool-disallow-system-namespaces": (StackValidationPolicy, _system_namespaces),
    "kvpool-disallow-shell-env-names": (ResourceValidationPolicy, _shell_env_names),
    "kvpool-disallow-privileged-containers": (ResourceValidationPolicy, _privileged_containers),
    "kvpool-enable-store-protection": (ResourceValidationPolicy, _store_protection),
}


def _policy(rule: rules.Rule) -> StackValidationPolicy | ResourceValidationPolicy:
    kind, validate = _ON_OBJECTS.get(rule.name) or (StackValidationPolicy, _on_configuration(rule))
    return kind(
        name=rule.name, description=rule.description, validate=validate,
        enforcement_level=EnforcementLevel(rule.level), severity=Severity(rule.severity),
        config_schema=PolicyConfigSchema(properties=dict(rule.config)) if rule.config else None,
        remediation_steps=rule.remediation,
    )


POLICIES = [_policy(rule) for rule in rules.RULES]
