"""Hand-written manifests, one or a few rules of the API server broken in each: the corpus of the manifest checks'
own tests (tests/hostile/test_apiserver_rules.py asserts each offline reason) and of the differential test against
the real API server (tests/e2e/test_apiserver_differential.py sends each there)."""

from __future__ import annotations

from typing import Any


def deployment(**pod: Any) -> dict[str, Any]:
    labels = {"app": "x"}
    spec = {"containers": [{"name": "c", "image": "busybox"}], **pod}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "x", "namespace": "ns"},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels}, "spec": spec}}}


def container(**fields: Any) -> dict[str, Any]:
    return {"name": "c", "image": "busybox", **fields}


def service(name: str, *ports: dict[str, Any], kind: str = "ClusterIP") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name, "namespace": "ns"},
            "spec": {"type": kind, "selector": {"app": "x"}, "ports": list(ports)}}


def _with(body: dict[str, Any], change: Any) -> dict[str, Any]:
    change(body)
    return body


def _stateful_set() -> dict[str, Any]:
    body = deployment(containers=[container(volumeMounts=[{"name": "data", "mountPath": "/var/lib/etcd"}])])
    body["kind"] = "StatefulSet"
    body["spec"]["serviceName"] = "x"
    body["spec"]["volumeClaimTemplates"] = [{"metadata": {"name": "data"}, "spec": {
        "storageClassName": "Bad_Class", "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]
    return body


def _labels_and_annotations() -> dict[str, Any]:
    body = deployment(nodeSelector={"accelerator": "a" * 64})
    body["metadata"]["labels"] = {"job-name": "j" * 63 + "-p0", "bad key": "v", "example.com/ok": ""}
    body["metadata"]["annotations"] = {"Example.com/Note": "fine", "a/b/c": "x", "big": "x" * (256 * 1024)}
    return body


def _service_set() -> dict[str, Any]:
    role_spec = deployment(containers=[container(volumeMounts=[{"name": "v", "mountPath": "/a"},
                                                               {"name": "v", "mountPath": "/a"}])],
                           volumes=[{"name": "v", "emptyDir": {}}])["spec"]
    return {
        "apiVersion": "mindcluster.huawei.com/v1", "kind": "InferServiceSet", "metadata": {"name": "s", "namespace": "ns"},
        "spec": {"template": {"roles": [{
            "name": "prefill", "workload": {"apiVersion": "apps/v1", "kind": "Deployment"}, "spec": role_spec,
            "services": [{"name": "p", "spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}}],
        }]}},
    }


MANIFESTS: dict[str, list[dict[str, Any]]] = {
    "clean-deployment": [deployment()],
    "clean-service": [service("svc", {"name": "a", "port": 80}, {"name": "b", "port": 81})],
    "int32-beyond-range": [_with(deployment(containers=[container(ports=[{"containerPort": 80, "hostPort": 2**31}])]),
                                 lambda body: body["spec"].update(replicas=10**20))],
    "int32-fraction": [_with(deployment(), lambda body: body["spec"].update(replicas=1.5))],
    "int32-just-beyond": [_with(deployment(), lambda body: body["spec"].update(replicas=2**31))],
    "int32-wraps-to-one": [_with(deployment(), lambda body: body["spec"].update(replicas=2**32 + 1))],
    "int32-float-beyond": [_with(deployment(), lambda body: body["spec"].update(replicas=3e9))],
    "host-path-backsteps": [deployment(volumes=[{"name": "v", "hostPath": {"path": "/mnt/../etc"}},
                                                {"name": "w", "hostPath": {"path": "/mnt/..x/ok"}}])],
    "duplicate-mounts-volumes-containers": [deployment(
        volumes=[{"name": "a", "emptyDir": {}}, {"name": "a", "emptyDir": {}}],
        containers=[container(volumeMounts=[{"name": "a", "mountPath": "/dev/shm"}, {"name": "a", "mountPath": "/dev/shm"},
                                            {"name": "missing", "mountPath": "/m"}]),
                    container()],
    )],
    "stateful-set-claim-template": [_stateful_set()],
    "labels-and-annotations": [_labels_and_annotations()],
    "selector-not-matching": [_with(deployment(), lambda body: body["spec"]["selector"].update(matchLabels={"app": "y"}))],
    "container-ports-env-host-ports": [deployment(hostNetwork=True, containers=[
        container(ports=[{"name": "rpc", "containerPort": 50088}, {"name": "metrics", "containerPort": 50088},
                         {"name": "rpc", "containerPort": 9000, "protocol": "UDP"}, {"name": "Bad_Name", "containerPort": 1}],
                  env=[{"name": "POD_IP", "value": "a"}, {"name": "POD_IP", "value": "b"}, {"name": "1X", "value": ""}]),
    ])],
    "requests-and-limits": [deployment(containers=[container(resources={
        "requests": {"cpu": "16", "memory": "1Gi", "huawei.com/Ascend910": 2, "example.com/dev": 1},
        "limits": {"cpu": "8", "memory": "1024Mi", "huawei.com/Ascend910": 4},
    })])],
    "service-port-clash": [service("a", {"name": "rpc", "port": 50088}, {"name": "metrics", "port": 50088},
                                   {"port": 80, "targetPort": 70000})],
    "node-port-on-cluster-ip": [service("b", {"name": "a", "port": 1, "nodePort": 31000})],
    "node-port-allocated-twice": [
        service("infer", {"name": "a", "port": 1, "nodePort": 31015}, kind="NodePort"),
        service("obs", {"name": "a", "port": 2, "nodePort": 31015}, {"name": "b", "port": 3, "nodePort": 29999},
                kind="NodePort"),
    ],
    "service-name": [service("Svc1", {"port": 1})],
    "config-map-keys": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "ns"},
                         "data": {"../../escape": "x", "ok.json": "{}", "..hidden": ""}, "binaryData": {"ok.json": ""}}],
    "secret-keys": [{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "ns"},
                     "stringData": {"DB PASS": "x"}}],
    "namespace-name": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}}],
    "cluster-role-name": [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "x:y/z"}}],
    "service-set-role": [_service_set()],
}
