"""Every Kubernetes API call of Motor's controller is allowed by our RBAC, and our RBAC allows nothing else.

Motor's own client code (motor/controller/fault_tolerance/k8s/, imported from the checkout) runs against a
recording API server; each request it makes is mapped to what the API server authorizes (verb, group, resource,
namespace) and evaluated against the RBAC objects: those kvpool/internal/rbac.py builds, and those each example
stack renders. Only Motor's logger is replaced (by the standard one): it needs ZeroMQ and makes no API call."""

from __future__ import annotations

import ast
import importlib
import logging
import re
import sys
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_references import resolve as resolve_references
from kvpool.cli.views.manifests import kubernetes_objects, pod_specs
from kvpool.internal.labels import common_labels
from kvpool.internal.rbac import (
    ALL_NAMESPACES,
    CLUSTER,
    CONFIGMAP_NAMESPACE,
    CONTROLLER_PROCESS,
    DEFAULT_CONFIGMAP_NAMESPACE,
    MOTOR_API_CALLS,
    configmap_namespace,
    controller_calls,
    rbac_objects,
)
from tests.conformance.apiserver import Authorizer, RecordingApiServer, RequestInfo
from tests.program_runs import PROJECT_DIR, stack_values

CONTROLLER_SA = "mindie-motor-controller"
NAMESPACE = "svc"
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))
MOTOR_K8S_PACKAGE = "motor.controller.fault_tolerance.k8s"


@pytest.fixture(scope="module")
def motor_k8s(motor_checkout: Path) -> Iterator[types.ModuleType]:
    """Motor's k8s package, imported from the checkout without running the parent packages' __init__ (they pull
    in FaultManager, etcd and ZeroMQ); sys.modules is restored afterwards."""
    root = motor_checkout / "motor"
    saved = {name: module for name, module in sys.modules.items() if name == "motor" or name.startswith("motor.")}
    for name in saved:
        del sys.modules[name]
    for dotted in ("motor", "motor.common", "motor.controller", "motor.controller.fault_tolerance"):
        package = types.ModuleType(dotted)
        package.__path__ = [str(root.joinpath(*dotted.split(".")[1:]))]
        sys.modules[dotted] = package
    motor_logger = types.ModuleType("motor.common.logger")
    motor_logger.get_logger = logging.getLogger  # type: ignore[attr-defined]
    sys.modules["motor.common.logger"] = motor_logger
    try:
        yield importlib.import_module(MOTOR_K8S_PACKAGE)
    finally:
        for name in [n for n in sys.modules if n == "motor" or n.startswith("motor.")]:
            del sys.modules[name]
        sys.modules.update(saved)


def run_motor_controller_calls(motor_k8s: types.ModuleType, tmp_path: Path, cm_namespace: str) -> set[RequestInfo]:
    """What Motor's controller asks the API server when fault tolerance resolves a node manager's pod and watches
    its node: K8sClient.get_node_hostname_by_pod_ip, then a ResourceMonitor for that node until its handlers have
    fired and no new kind of request has appeared for half a second."""
    server = RecordingApiServer()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.delenv("KUBERNETES_SERVICE_HOST", raising=False)  # in-cluster config fails, as outside a pod
            patch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
            patch.setattr(
                kubernetes.config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION",
                str(server.kubeconfig(tmp_path / f"kubeconfig-{cm_namespace}")),
            )
            client = motor_k8s.K8sClient()
            assert client.is_available()
            assert client.get_node_hostname_by_pod_ip(server.POD_IP) == server.NODE

            node_events: list[Any] = []
            fault_events: list[Any] = []
            monitor = motor_k8s.ResourceMonitor(
                node_name=server.NODE,
                namespace=cm_namespace,
                configmap_name_prefix="mindx-dl-deviceinfo-",
                node_change_handler=lambda status, node: node_events.append((status, node)),
                configmap_change_handler=lambda faults, node: fault_events.append((faults, node)),
            )
            monitor.start_monitoring()
            try:
                deadline = time.monotonic() + 15
                seen, stable_since = server.infos(), time.monotonic()
                while time.monotonic() < deadline:
                    time.sleep(0.05)
                    now = server.infos()
                    if now != seen:
                        seen, stable_since = now, time.monotonic()
                    elif node_events and fault_events and time.monotonic() - stable_since > 0.5:
                        break
                assert node_events and fault_events, "Motor's ResourceMonitor never reported the node or its faults"
            finally:
                monitor.stop_monitoring()
            kubernetes.client.Configuration.set_default(None)
        return server.infos()
    finally:
        server.close()


@pytest.fixture(scope="module")
def motor_calls(motor_k8s: types.ModuleType, tmp_path_factory: pytest.TempPathFactory):
    """Recorded requests per configmap namespace (cached: each run takes about a second)."""
    cache: dict[str, set[RequestInfo]] = {}

    def calls(cm_namespace: str) -> set[RequestInfo]:
        if cm_namespace not in cache:
            cache[cm_namespace] = run_motor_controller_calls(motor_k8s, tmp_path_factory.mktemp("k8s"), cm_namespace)
        return cache[cm_namespace]

    return calls


def authorize(objects: list[dict[str, Any]], namespace: str, service_account: str, calls: set[RequestInfo]):
    authorizer = Authorizer(objects, namespace, service_account)
    denied = sorted((c for c in calls if not authorizer.allows(c)), key=repr)
    return denied, authorizer.unused_grants()


def test_only_the_controllers_fault_tolerance_module_uses_the_kubernetes_api(motor_checkout):
    """No other Motor module (coordinator, node manager, engine server, common) imports the kubernetes client or
    reaches the API server by hand, so the calls exercised here are all there are."""
    users, raw = set(), set()
    for path in sorted((motor_checkout / "motor").rglob("*.py")):
        source = path.read_text(encoding="utf-8", errors="replace")
        relative = path.relative_to(motor_checkout).as_posix()
        for node in ast.walk(ast.parse(source)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            )
            if any(n == "kubernetes" or n.startswith("kubernetes.") for n in names):
                users.add(relative)
        if re.search(r"KUBERNETES_SERVICE_HOST|/var/run/secrets/kubernetes\.io|/api/v1/|kubectl", source):
            raw.add(relative)
    documented = {call.source.split(":")[0] for call in MOTOR_API_CALLS}
    assert users == documented
    assert raw == set()
    assert all(user.startswith("motor/controller/") for user in users)


def test_documented_calls_point_at_motors_code(motor_checkout):
    for call in MOTOR_API_CALLS:
        file, line = call.source.split(":")
        method = re.search(r"CoreV1Api\.(\w+)", call.call).group(1)
        text = (motor_checkout / file).read_text(encoding="utf-8").splitlines()[int(line) - 1]
        assert method in text, f"{call.source} no longer makes {method}: {text.strip()!r}"


@pytest.mark.parametrize("cm_namespace", [DEFAULT_CONFIGMAP_NAMESPACE, NAMESPACE])
def test_motors_controller_makes_exactly_the_documented_calls(motor_calls, cm_namespace):
    recorded = {(c.verb, c.group, c.resource, c.namespace) for c in motor_calls(cm_namespace)}
    where = {CLUSTER: "", ALL_NAMESPACES: "", CONFIGMAP_NAMESPACE: cm_namespace}
    documented = {
        (c.verb, c.group, c.resource, where[c.scope]) for c in MOTOR_API_CALLS if c.process == CONTROLLER_PROCESS
    }
    assert recorded == documented


def test_motors_controller_lists_pods_across_all_namespaces(motor_calls):
    """The call behind issue 9's 403: a namespaced Role can never allow it."""
    assert any(
        (c.verb, c.group, c.resource, c.namespace) == ("list", "", "pods", "")
        for c in motor_calls(DEFAULT_CONFIGMAP_NAMESPACE)
    )


@pytest.mark.parametrize("cm_namespace", [DEFAULT_CONFIGMAP_NAMESPACE, NAMESPACE])
def test_rbac_allows_every_controller_call_and_nothing_more(motor_calls, cm_namespace):
    objects = rbac_objects(
        NAMESPACE, CONTROLLER_SA, "mindie-controller", controller_calls({}),
        common_labels(NAMESPACE, CONTROLLER_SA, CONTROLLER_SA), cm_namespace,
    )
    denied, unused = authorize(objects, NAMESPACE, CONTROLLER_SA, motor_calls(cm_namespace))
    assert denied == []
    assert unused == []
    assert all(set(rule["verbs"]) <= {"list", "watch"} for o in objects for rule in o.get("rules", []))


def test_the_evaluator_denies_what_issue_9_reported(motor_calls):
    """The RBAC rendered before (a namespaced Role for configmaps and pods, nodes cluster-wide) denies the
    cluster-wide pod list and the kube-system ConfigMaps, and grants `get`s nobody makes."""
    labels = {"labels": {}}
    subjects = [{"kind": "ServiceAccount", "name": CONTROLLER_SA, "namespace": NAMESPACE}]
    reads = ["get", "list", "watch"]
    before = [
        {"kind": "Role", "metadata": {"name": "r", "namespace": NAMESPACE, **labels},
         "rules": [{"apiGroups": [""], "resources": ["configmaps", "pods"], "verbs": reads}]},
        {"kind": "RoleBinding", "metadata": {"name": "r", "namespace": NAMESPACE, **labels},
         "roleRef": {"kind": "Role", "name": "r"}, "subjects": subjects},
        {"kind": "ClusterRole", "metadata": {"name": "c", **labels},
         "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": reads}]},
        {"kind": "ClusterRoleBinding", "metadata": {"name": "c", **labels},
         "roleRef": {"kind": "ClusterRole", "name": "c"}, "subjects": subjects},
    ]
    denied, unused = authorize(before, NAMESPACE, CONTROLLER_SA, motor_calls(DEFAULT_CONFIGMAP_NAMESPACE))
    assert {(c.verb, c.resource, c.namespace) for c in denied} == {
        ("list", "pods", ""), ("list", "configmaps", "kube-system"), ("watch", "configmaps", "kube-system"),
    }
    assert ("get", "", "nodes") in {u[1:] for u in unused}


@pytest.mark.parametrize("stack", STACKS)
def test_rendered_rbac_allows_every_controller_call_and_nothing_more(motor_calls, stack):
    """The stack as rendered: the controller pod runs as a service account with its token mounted, that
    account's bound rules allow every call Motor's controller makes under the stack's motor_controller_config
    and nothing else, and no other pod (coordinator, engines, store) gets a token."""
    config = load_stack_config(PROJECT_DIR, stack)
    run = run_program(PROJECT_DIR, config, stack_references=resolve_references(PROJECT_DIR, config))
    objects = [o.body for o in kubernetes_objects(run.resources)]
    controller_config = stack_values(stack).get("motor_controller_config") or {}
    pods = [spec for obj in objects for spec in pod_specs(obj)]
    controllers = [s for s in pods if [c["name"] for c in s["containers"]] == [CONTROLLER_PROCESS]]
    assert len(controllers) == 1
    controller = controllers[0]
    namespace = next(
        o["metadata"]["namespace"] for o in objects
        if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == controller["serviceAccountName"]
    )
    for spec in pods:
        if spec is not controller:
            assert spec.get("automountServiceAccountToken") is False, [c["name"] for c in spec["containers"]]

    calls = motor_calls(configmap_namespace(controller_config)) if controller_calls(controller_config) else set()
    if calls:
        assert controller.get("automountServiceAccountToken") is True
    denied, unused = authorize(objects, namespace, controller["serviceAccountName"], calls)
    assert denied == []
    assert unused == []
