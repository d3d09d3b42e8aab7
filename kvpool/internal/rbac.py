"""RBAC for Motor's processes: every Kubernetes API call they make, and the narrowest rules that allow exactly those.

Only Motor's controller talks to the Kubernetes API, and only from its fault-tolerance module
(`motor/controller/fault_tolerance/k8s/`, loaded when `fault_tolerance_config.enable_fault_tolerance` is true,
Motor's default). The coordinator, the node manager and the engines make no API call (no module of theirs imports
`kubernetes` or talks to the API server), so their pods get no service account and no token, as deploy.py's
templates have it (`automountServiceAccountToken: false`). tests/conformance/test_motor_rbac.py runs Motor's own
client code against a recording API server and checks this table and the rules built from it both ways.

Why not narrower: none of the reads can name its object in advance (`resourceNames`): the nodes are those Motor's
engines land on and the ConfigMaps are `<configmap_prefix><node>`, both known only at run time. The pod lookup by
IP spans all namespaces (`list_pod_for_all_namespaces`), so it needs a ClusterRole; a narrower grant is only
possible by changing Motor.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.internal.child_names import ChildNames

RBAC_API = "rbac.authorization.k8s.io"
# Where a call reaches: a cluster-scoped resource, a namespaced resource across all namespaces, or the namespace
# Motor's controller config names (fault_tolerance_config.configmap_namespace).
CLUSTER = "cluster"
ALL_NAMESPACES = "all namespaces"
CONFIGMAP_NAMESPACE = "fault_tolerance_config.configmap_namespace"
# Motor's FaultToleranceConfig defaults (motor/config/controller.py:110,120): MindX DL's device plugin publishes
# mindx-dl-deviceinfo-<node> in kube-system.
DEFAULT_CONFIGMAP_NAMESPACE = "kube-system"
VERB_ORDER = ("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection")
READ_VERBS = frozenset({"get", "list", "watch"})

CONTROLLER_PROCESS = "controller"


@dataclass(frozen=True)
class ApiCall:
    process: str  # Motor's process making the call
    call: str  # the kubernetes client call, as Motor's code writes it
    verb: str  # the RBAC verb the API server authorizes it as
    group: str  # API group ("" is the core group)
    resource: str
    scope: str  # CLUSTER, ALL_NAMESPACES or CONFIGMAP_NAMESPACE
    why: str
    source: str  # file:line in Motor (njuyuan/PyMotor@8919e55)


MOTOR_API_CALLS: tuple[ApiCall, ...] = (
    ApiCall(
        CONTROLLER_PROCESS, "CoreV1Api.list_pod_for_all_namespaces(field_selector=status.podIP=<ip>)", "list", "",
        "pods", ALL_NAMESPACES,
        "map each node manager's pod IP to the Kubernetes node it runs on, to watch that node for faults",
        "motor/controller/fault_tolerance/k8s/k8s_client.py:44",
    ),
    ApiCall(
        CONTROLLER_PROCESS, "CoreV1Api.list_node(field_selector=metadata.name=<node>)", "list", "", "nodes", CLUSTER,
        "the node's Ready condition, and the resourceVersion to watch from",
        "motor/controller/fault_tolerance/k8s/resource_monitor.py:183",
    ),
    ApiCall(
        CONTROLLER_PROCESS, "watch.Watch().stream(CoreV1Api.list_node, field_selector=metadata.name=<node>)", "watch",
        "", "nodes", CLUSTER,
        "node Ready/NotReady changes, to move instances off a failed node",
        "motor/controller/fault_tolerance/k8s/resource_monitor.py:207",
    ),
    ApiCall(
        CONTROLLER_PROCESS,
        "CoreV1Api.list_namespaced_config_map(<configmap_namespace>, field_selector=metadata.name=<prefix><node>)",
        "list", "", "configmaps", CONFIGMAP_NAMESPACE,
        "the node's NPU and switch fault report (MindX DL's mindx-dl-deviceinfo-<node>)",
        "motor/controller/fault_tolerance/k8s/resource_monitor.py:256",
    ),
    ApiCall(
        CONTROLLER_PROCESS,
        "watch.Watch().stream(CoreV1Api.list_namespaced_config_map, <configmap_namespace>, "
        "field_selector=metadata.name=<prefix><node>)",
        "watch", "", "configmaps", CONFIGMAP_NAMESPACE,
        "changes of that fault report",
        "motor/controller/fault_tolerance/k8s/resource_monitor.py:291",
    ),
)


@dataclass(frozen=True)
class Grant:
    """One rule and where it applies: `namespace` None is cluster-wide (a ClusterRole), else a Role there."""

    namespace: str | None
    group: str
    resource: str
    verbs: tuple[str, ...]

    def rule(self) -> dict[str, Any]:
        return {"apiGroups": [self.group], "resources": [self.resource], "verbs": list(self.verbs)}


def controller_calls(motor_controller_config: Mapping[str, Any] | None) -> tuple[ApiCall, ...]:
    """The controller's calls under this (pass-through) motor_controller_config: none with fault tolerance off.
    Motor applies the section's keys as they are (setattr), so any truthy value enables it, as in Motor."""
    section = (motor_controller_config or {}).get("fault_tolerance_config") or {}
    if not section.get("enable_fault_tolerance", True):
        return ()
    return tuple(call for call in MOTOR_API_CALLS if call.process == CONTROLLER_PROCESS)


def configmap_namespace(motor_controller_config: Mapping[str, Any] | None) -> str:
    section = (motor_controller_config or {}).get("fault_tolerance_config") or {}
    return str(section.get("configmap_namespace") or DEFAULT_CONFIGMAP_NAMESPACE)


def grants(calls: tuple[ApiCall, ...], cm_namespace: str = DEFAULT_CONFIGMAP_NAMESPACE) -> tuple[Grant, ...]:
    """The narrowest rules covering `calls`: one per (place, group, resource) with exactly the verbs used there."""
    verbs: dict[tuple[str | None, str, str], set[str]] = {}
    for call in calls:
        namespace = {CLUSTER: None, ALL_NAMESPACES: None, CONFIGMAP_NAMESPACE: cm_namespace}[call.scope]
        verbs.setdefault((namespace, call.group, call.resource), set()).add(call.verb)
    ordered = sorted(verbs.items(), key=lambda item: (item[0][0] or "", item[0][1:]))
    return tuple(
        Grant(namespace, group, resource, tuple(v for v in VERB_ORDER if v in used))
        for (namespace, group, resource), used in ordered
    )


def role_name(prefix: str, resource: str, namespace: str) -> str:
    """Per stack (`namespace`) and resource: ClusterRoles and Roles outside the stack's namespace are shared by
    every stack of the cluster, so the stack's namespace is in the name (today's `mindie-controller-nodes-<ns>`)."""
    return f"{prefix}-{resource}-{namespace}"


def rbac_objects(
    namespace: str,
    service_account: str,
    role_prefix: str,
    calls: tuple[ApiCall, ...],
    labels: Mapping[str, str],
    cm_namespace: str = DEFAULT_CONFIGMAP_NAMESPACE,
) -> list[dict[str, Any]]:
    """The manifests: the ServiceAccount, then per grant a Role+RoleBinding (in the grant's namespace) or a
    ClusterRole+ClusterRoleBinding, each binding only `service_account`."""
    namespaced_labels = {**labels, "app": service_account}
    objects: list[dict[str, Any]] = [
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": service_account, "namespace": namespace, "labels": namespaced_labels},
        }
    ]
    subjects = [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}]
    for grant in grants(calls, cm_namespace):
        name = role_name(role_prefix, grant.resource, namespace)
        kind = "ClusterRole" if grant.namespace is None else "Role"
        metadata: dict[str, Any] = {"name": name, "labels": dict(labels)}
        if grant.namespace is not None:
            metadata = {"name": name, "namespace": grant.namespace, "labels": namespaced_labels}
        objects.append({"apiVersion": f"{RBAC_API}/v1", "kind": kind, "metadata": metadata, "rules": [grant.rule()]})
        objects.append(
            {
                "apiVersion": f"{RBAC_API}/v1",
                "kind": f"{kind}Binding",
                "metadata": dict(metadata),
                "roleRef": {"apiGroup": RBAC_API, "kind": kind, "name": name},
                "subjects": subjects,
            }
        )
    names = [(o["kind"], o["metadata"]["name"], o["metadata"].get("namespace")) for o in objects]
    if len(names) != len(set(names)):
        raise ValueError(f"RBAC object names collide: {names}")
    return objects


def create_rbac(
    namespace: str,
    service_account: str,
    role_prefix: str,
    calls: tuple[ApiCall, ...],
    labels: Mapping[str, str],
    parent: pulumi.Resource,
    names: ChildNames,
    cm_namespace: str = DEFAULT_CONFIGMAP_NAMESPACE,
) -> k8s.core.v1.ServiceAccount:
    """Create rbac_objects(...) as Pulumi resources under `parent`, named by `names` (the parent's)."""
    account: k8s.core.v1.ServiceAccount | None = None
    for obj in rbac_objects(namespace, service_account, role_prefix, calls, labels, cm_namespace):
        kind, metadata = obj["kind"], obj["metadata"]
        name, opts = names.name(metadata["name"]), names.opts(metadata["name"], pulumi.ResourceOptions(parent=parent))
        if kind == "ServiceAccount":
            account = k8s.core.v1.ServiceAccount(name, metadata=metadata, opts=opts)
        elif kind == "Role":
            k8s.rbac.v1.Role(name, metadata=metadata, rules=obj["rules"], opts=opts)
        elif kind == "ClusterRole":
            k8s.rbac.v1.ClusterRole(name, metadata=metadata, rules=obj["rules"], opts=opts)
        elif kind == "RoleBinding":
            k8s.rbac.v1.RoleBinding(
                name, metadata=metadata, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts
            )
        else:
            k8s.rbac.v1.ClusterRoleBinding(
                name, metadata=metadata, role_ref=obj["roleRef"], subjects=obj["subjects"], opts=opts
            )
    assert account is not None
    return account
