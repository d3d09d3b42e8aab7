"""The shape of MindIE Motor's InferServiceSet, walked in one place: `spec.template.roles[]`, each role with its
pod template (`spec.template`), its workload's kind and the Services it asks the set's controller to create.

The policy pack, the blast-radius report and both schema checks (offline, API server) read a set through these."""

from __future__ import annotations

from typing import Any, Mapping

SERVICE_SET_API_VERSION = "mindcluster.huawei.com/v1"
SERVICE_SET_KIND = "InferServiceSet"
SERVICE_SET_TYPE = f"kubernetes:{SERVICE_SET_API_VERSION}:{SERVICE_SET_KIND}"  # its Pulumi resource type
ROLES_PATH = ("spec", "template", "roles")

PropertyPath = tuple[Any, ...]


def is_service_set(body: Mapping[str, Any]) -> bool:
    return body.get("apiVersion") == SERVICE_SET_API_VERSION and body.get("kind") == SERVICE_SET_KIND


def service_set_roles(body: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The roles of an InferServiceSet's manifest or registered properties (an empty list when there are none)."""
    return list(((body.get("spec") or {}).get("template") or {}).get("roles") or [])


def role_pod_template(role: Mapping[str, Any]) -> Mapping[str, Any]:
    return (role.get("spec") or {}).get("template") or {}


def service_set_objects(body: Mapping[str, Any]) -> list[tuple[PropertyPath, dict[str, Any]]]:
    """The workloads and Services a set's roles describe, as the objects its controller creates (and a schema
    checks), each named after its role: (where its spec sits in the set, object). Empty for any other kind."""
    if not is_service_set(body):
        return []
    embedded: list[tuple[PropertyPath, dict[str, Any]]] = []
    for index, role in enumerate(service_set_roles(body)):
        where = (*ROLES_PATH, index)
        workload = role.get("workload") or {}
        embedded.append(((*where, "spec"), {
            "apiVersion": workload.get("apiVersion", "apps/v1"), "kind": workload.get("kind", "Deployment"),
            "metadata": {"name": role.get("name", "")}, "spec": role.get("spec") or {},
        }))
        for number, service in enumerate(role.get("services") or []):
            embedded.append(((*where, "services", number, "spec"), {
                "apiVersion": "v1", "kind": "Service", "metadata": {"name": service.get("name", "")},
                "spec": service.get("spec") or {},
            }))
    return embedded
