"""Objects and pieces every backend's store shares: names, labels, the Service, NetworkPolicy and ServiceMonitor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.workloads import Workloads
from kvpool.errors import KvpoolError
from kvpool.internal import dashboards
from kvpool.internal.checksums import annotations
from kvpool.internal.child_names import ChildNames
from kvpool.internal.labels import (
    KV_CLIENT_LABEL,
    METRICS_SCRAPER_LABEL,
    app_selector,
    common_labels,
)
from kvpool.internal.ports import Port
from kvpool.settings.pods import ContainerResources

# deploy.py's names (kv_cache_store_template.yaml), kept so that Motor's in-pod scripts and docs still apply.
STORE_NAME = "mindie-motor-kv-store"
STORE_SERVICE = "mindie-motor-kvs-master"
COMPONENT = "kv-store"


R = TypeVar("R", bound=pulumi.Resource | None)


class StoreEnvConflict(KvpoolError):
    """env.json's store section sets a variable the store container's contract sets."""


# Who a store port admits (network_policy below):
CLIENTS = "clients"  # engine pods of this and the allowed consumers' namespaces, and the store's own peers
# metrics: pods labelled METRICS_SCRAPER_LABEL here and in the allowed consumers' namespaces (their coordinators), and
# the metrics_scraper_namespaces
SCRAPERS = "scrapers"
MEMBERS = "members"  # the store's own members only (etcd's peer port)
# The store server's metrics port: its ServiceMonitor scrapes it and its NetworkPolicy admits the SCRAPERS to it.
METRICS_PORT = "metrics"


@dataclass(frozen=True)
class StoreContext:
    """What every backend builder needs, decided once by the KVStore component."""

    namespace: str
    workloads: Workloads
    image: str
    hardware_type: str
    labels: dict[str, str]  # the user's additional labels; app_labels() adds ours
    annotations: dict[str, str]
    node_selector: dict[str, str]
    engine_node_labels: dict[str, str]  # what engine nodes carry (stores that run beside the engines use it)
    resources: ContainerResources
    parent: pulumi.Resource
    names: ChildNames  # the KVStore's children's Pulumi names
    protect: bool
    retain_on_delete: bool
    allowed_consumers: tuple[str, ...]
    metrics_scraper_namespaces: tuple[str, ...]
    # env.json's motor_kv_cache_store_env, which deploy.py exports in the store pod (kv_cache_store.sh). Not
    # motor_common_env: the store runs no Motor process, and a common change would restart it and empty the pool.
    env: dict[str, str]
    # Every Kubernetes object the backend creates, in order: the KVStore component keeps and registers them.
    children: list[pulumi.Resource] = field(default_factory=list)

    def opts(self, depends_on: Sequence[pulumi.Resource] = ()) -> pulumi.ResourceOptions:
        """Children get parent=self and the store's protection explicitly (never the component's own opts)."""
        return pulumi.ResourceOptions(
            parent=self.parent,
            protect=self.protect,
            retain_on_delete=self.retain_on_delete,
            depends_on=list(depends_on),
        )

    def child_opts(self, name: str, depends_on: Sequence[pulumi.Resource] = ()) -> pulumi.ResourceOptions:
        """opts() of the child whose Kubernetes name is `name` (its Pulumi name is names.name(name))."""
        return self.names.opts(name, self.opts(depends_on))

    def app_labels(self, app: str) -> dict[str, str]:
        # `app` and `deploy-name` are deploy.py's selector labels; the user's additional labels come first so
        # that they cannot override the selector.
        return {**self.labels, **common_labels(self.namespace, COMPONENT, app), "app": app, "deploy-name": app}

    def keep(self, resource: R) -> R:
        """Record a child object (None: a workload that went into the InferServiceSet)."""
        if resource is not None:
            self.children.append(resource)
        return resource

    def with_store_env(self, container: dict[str, Any]) -> dict[str, Any]:
        """The store server's container with motor_kv_cache_store_env added; a variable the container already
        sets (its own contract) may not be overridden."""
        own = {entry["name"] for entry in container.get("env") or []}
        clashes = sorted(own & set(self.env))
        if clashes:
            raise StoreEnvConflict(
                f"env.motor_kv_cache_store_env sets {', '.join(clashes)}, which motor-kvpool sets for the store "
                f"container {container['name']}; remove them from env.json"
            )
        extra = [{"name": name, "value": value} for name, value in self.env.items()]
        return {**container, "env": [*(container.get("env") or []), *extra]} if extra else container

    def metadata(self, name: str, app: str) -> dict[str, Any]:
        metadata = {"name": name, "namespace": self.namespace, "labels": self.app_labels(app)}
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        return metadata


def container_ports(ports: Sequence[Port]) -> list[dict[str, Any]]:
    return [port.container_port() for port in ports]


RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
POD_IP_ENV = {"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}


def _service_spec(app: str, ports: Sequence[Port], headless: bool = False) -> dict[str, Any]:
    return {
        "type": "ClusterIP",
        **({"clusterIP": "None", "publishNotReadyAddresses": True} if headless else {}),
        "selector": app_selector(app),
        "ports": [port.service_port() for port in ports],
    }


def service(ctx: StoreContext, name: str, app: str, ports: Sequence[Port]) -> None:
    """The store's own Service: part of the kv-store role in a service set."""
    ctx.keep(ctx.workloads.service(ctx.names.name(name), COMPONENT, ctx.metadata(name, app), _service_spec(app, ports),
                                   ctx.child_opts(name)))


def headless_service(ctx: StoreContext, name: str, app: str, ports: Sequence[Port]) -> k8s.core.v1.Service:
    """A StatefulSet's peer Service: always a plain object (service sets hold Deployments only)."""
    return ctx.keep(k8s.core.v1.Service(
        ctx.names.name(name), metadata=ctx.metadata(name, app), spec=_service_spec(app, ports, headless=True),
        opts=ctx.child_opts(name),
    ))


def network_policy(
    ctx: StoreContext, name: str, app: str, ports: Sequence[Port], peers: Sequence[str] = (),
    members: Sequence[str] = (), engines: bool = True, node_cidrs: Sequence[str] = (),
    admits: Mapping[str, str] | None = None,
) -> k8s.networking.v1.NetworkPolicy:
    """Each port admits exactly who needs it, as `admits` says by port name (CLIENTS unless named there):
    - CLIENTS: with `engines`, engine pods (labelled KV_CLIENT_LABEL) of this namespace and of the allowed
      consumers' namespaces; the pods named in `peers` (the store's own pods that use it); and `node_cidrs`
      (clients on the host network, which no pod selector names);
    - SCRAPERS: pods labelled METRICS_SCRAPER_LABEL in this namespace and in the allowed consumers' namespaces
      (Motor's coordinator, which fetches the pool's /metrics, and Prometheus) and every pod of the configured
      metrics_scraper_namespaces (where Prometheus runs);
    - MEMBERS: the pods named in `members` only.
    The kubelet's probes come from the node, which the common network plugins admit regardless of policy."""
    engine_pods = {"matchLabels": {KV_CLIENT_LABEL: "true"}}
    clients: list[dict[str, Any]] = []
    if engines:
        clients.append({"podSelector": engine_pods})
        clients += [
            {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}, "podSelector": engine_pods}
            for namespace in ctx.allowed_consumers
        ]
    clients += [{"podSelector": {"matchLabels": app_selector(peer)}} for peer in peers]
    member_pods = [{"podSelector": {"matchLabels": app_selector(member)}} for member in members]
    clients += [{"ipBlock": {"cidr": cidr}} for cidr in node_cidrs]
    scraper_pods = {"matchLabels": {METRICS_SCRAPER_LABEL: "true"}}
    scrapers: list[dict[str, Any]] = [{"podSelector": scraper_pods}]
    scrapers += [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}, "podSelector": scraper_pods}
        for namespace in ctx.allowed_consumers
    ]
    scrapers += [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}
        for namespace in ctx.metrics_scraper_namespaces
    ]
    sources = {CLIENTS: clients, SCRAPERS: scrapers, MEMBERS: member_pods}
    group_of = {port.name: (admits or {}).get(port.name, CLIENTS) for port in ports}
    ingress = []
    for group in (CLIENTS, SCRAPERS, MEMBERS):
        admitted = [{"port": p.port, "protocol": "TCP"} for p in ports if group_of[p.name] == group]
        if admitted:
            ingress.append({"from": sources[group], "ports": admitted})
    return ctx.keep(k8s.networking.v1.NetworkPolicy(
        ctx.names.name(name),
        metadata=ctx.metadata(name, app),
        spec={"podSelector": {"matchLabels": app_selector(app)}, "policyTypes": ["Ingress"], "ingress": ingress},
        opts=ctx.child_opts(name),
    ))


def service_monitor(ctx: StoreContext, name: str, app: str, metrics_port: str) -> k8s.apiextensions.CustomResource:
    return ctx.keep(dashboards.service_monitor(ctx.names.name(name), ctx.metadata(name, app), app, metrics_port,
                                               ctx.child_opts(name)))


def deployment(
    ctx: StoreContext,
    name: str,
    containers: list[dict[str, Any]],
    volumes: Sequence[dict[str, Any]] = (),
    replicas: int = 1,
    depends_on: Sequence[pulumi.Resource] = (),
    checksums: Mapping[str, Any] | None = None,
) -> None:
    # Pod labels are the object's labels; nothing in them changes between runs, so re-running restarts nothing.
    pod_annotations = {**ctx.annotations, **annotations(checksums or {})}
    ctx.keep(ctx.workloads.deployment(
        ctx.names.name(name),
        COMPONENT,
        metadata=ctx.metadata(name, name),
        spec={
            "replicas": replicas,
            "selector": {"matchLabels": app_selector(name)},
            "template": {
                "metadata": {"labels": ctx.app_labels(name), "annotations": pod_annotations or None},
                "spec": {
                    "automountServiceAccountToken": False,
                    "nodeSelector": ctx.node_selector or None,
                    "containers": containers,
                    "volumes": list(volumes) or None,
                },
            },
        },
        opts=ctx.child_opts(name, depends_on),
    ))


def store_server(
    ctx: StoreContext,
    container: dict[str, Any],
    ports: Sequence[Port],
    monitored: bool,
    volumes: Sequence[dict[str, Any]] = (),
    replicas: int = 1,
    depends_on: Sequence[pulumi.Resource] = (),
    config_files: Mapping[str, str] | None = None,
) -> None:
    """The store server every Service-fronted backend runs: its Deployment, the Service engines dial (deploy.py's
    names), the NetworkPolicy in front of it (the port named METRICS_PORT admits the SCRAPERS, every other one the
    CLIENTS), and the optional ServiceMonitor. `config_files`: what the server reads from a mounted ConfigMap at
    start, so that a change of it rolls the server."""
    deployment(
        ctx, STORE_NAME, [ctx.with_store_env(container)], volumes, replicas=replicas, depends_on=depends_on,
        checksums={"store-config": config_files},
    )
    service(ctx, STORE_SERVICE, STORE_NAME, ports)
    network_policy(ctx, STORE_NAME, STORE_NAME, ports, admits={METRICS_PORT: SCRAPERS})
    if monitored:
        service_monitor(ctx, STORE_NAME, STORE_NAME, METRICS_PORT)


def service_engine_env(host: str, backend: str, engine_env: Mapping[str, str]) -> dict[str, str]:
    """KVS_MASTER_SERVICE and KV_STORE_BACKEND first, as deploy.py sets them, then the backend's own."""
    return {"KVS_MASTER_SERVICE": host, "KV_STORE_BACKEND": backend, **engine_env}


def service_endpoint(
    ctx: StoreContext, backend: str, host: str, port: int, metrics_port: int, engine_env: dict[str, str], **parts: Any
) -> KVStoreEndpoint:
    """The endpoint of a Service-fronted store (`host`: hosts.store_host): KVS_MASTER_SERVICE and KV_STORE_BACKEND
    first, as deploy.py sets."""
    return KVStoreEndpoint(
        backend=backend,
        host=host,
        port=port,
        metrics_port=metrics_port,
        namespace=ctx.namespace,
        deploy_mode=ctx.workloads.deploy_mode,
        engine_env=service_engine_env(host, backend, engine_env),
        **parts,
    )
