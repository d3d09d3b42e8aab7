"""Where Deployments and their Services go, by deploy_mode.

multi_deployment: each is its own Kubernetes object (deploy.py's output_yamls). infer_service_set: each becomes a
role of one InferServiceSet (mindcluster.huawei.com/v1), whose operator creates the workloads and names the
Services `<service>-<iss name>-0-<role>` (motor-deployer.md §1.3). Components call the same two methods either
way, and ask `service_host` for the name other pods must dial.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from kvpool.internal.child_names import ChildNames
from kvpool.internal.labels import DEFAULT_CLUSTER_DOMAIN, common_labels, service_fqdn
from kvpool.internal.motor_pod import (
    CONFIG_PATH,
    CONFIGMAP_PATH,
    CONTROLLER_ROLE,
    CONTROLLER_SERVICE,
    COORDINATOR_INFER_SERVICE,
    COORDINATOR_MGMT_SERVICE,
    COORDINATOR_OBS_SERVICE,
    COORDINATOR_ROLE,
)
from kvpool.policies.rules.service_set import SERVICE_SET_API_VERSION, SERVICE_SET_KIND

ISS_NAME = "vllm"  # deploy.py's default InferServiceSet name
SERVICE_SET_TYPE = "kvpool:index:ServiceSet"


@dataclass
class Role:
    name: str
    replicas: int
    spec: dict[str, Any]
    labels: dict[str, str]
    services: list[dict[str, Any]] = field(default_factory=list)


class Workloads:
    """Deployments and Services of one stack, rendered as deploy_mode says."""

    def __init__(self, namespace: str, deploy_mode: str, cluster_domain: str = DEFAULT_CLUSTER_DOMAIN) -> None:
        self.namespace = namespace
        self.deploy_mode = deploy_mode
        self.cluster_domain = cluster_domain
        self._roles: dict[str, Role] = {}

    @property
    def is_service_set(self) -> bool:
        return self.deploy_mode == "infer_service_set"

    def service_name(self, service: str, role: str) -> str:
        return f"{service}-{ISS_NAME}-0-{role}" if self.is_service_set else service

    def service_host(self, service: str, role: str) -> str:
        return self.fqdn(self.service_name(service, role))

    def fqdn(self, service_name: str) -> str:
        """The DNS name of a Service of this namespace, named as it is in the cluster."""
        return service_fqdn(service_name, self.namespace, self.cluster_domain)

    def deployment(
        self,
        name: str,
        role: str,
        metadata: dict[str, Any],
        spec: dict[str, Any],
        opts: pulumi.ResourceOptions,
        instances: int = 1,
    ) -> k8s.apps.v1.Deployment | None:
        """`spec` is a Deployment spec; `name` its Pulumi name. In a service set, `instances` workloads of it form the
        role `role`."""
        if self.is_service_set:
            if role in self._roles:
                # One workload per role: a second would be dropped by the operator, so it is a bug here.
                raise ValueError(f"role {role!r} already has a workload in the InferServiceSet; "
                                 f"{metadata['name']!r} would replace it")
            self._roles[role] = Role(role, instances, spec, metadata.get("labels", {}))
            return None
        return k8s.apps.v1.Deployment(name, metadata=metadata, spec=spec, opts=opts)

    def service(
        self, name: str, role: str, metadata: dict[str, Any], spec: dict[str, Any], opts: pulumi.ResourceOptions
    ) -> k8s.core.v1.Service | None:
        """`name`: the Service's Pulumi name (a role's Service is named as in metadata)."""
        if self.is_service_set:
            # The operator selects the role's pods itself; the selector would name pods it renames.
            self._roles[role].services.append({"name": metadata["name"], "spec": {k: v for k, v in spec.items() if k != "selector"}})
            return None
        return k8s.core.v1.Service(name, metadata=metadata, spec=spec, opts=opts)

    def finish(self, name: str = ISS_NAME, opts: pulumi.ResourceOptions | None = None,
               component_opts: pulumi.ResourceOptions | None = None) -> ServiceSet | None:
        """The ServiceSet component named `name`, owning the InferServiceSet that holds every role (nothing in
        multi_deployment). `opts`: the InferServiceSet's own (depends_on, protect, retain_on_delete);
        `component_opts`: the component's own (its name from before as an alias: kvpool/internal/child_names.py)."""
        if not self.is_service_set:
            return None
        return ServiceSet(name, self.namespace, list(self._roles.values()), opts, component_opts)


def motor_env(role: str, workloads: Workloads, job_name: str) -> dict[str, str]:
    """What every Motor container is told about itself and where the control plane's Services are."""
    return {
        "ROLE": role,
        "JOB_NAME": job_name,
        "CONFIGMAP_PATH": CONFIGMAP_PATH,
        "CONFIG_PATH": CONFIG_PATH,
        "CONTROLLER_SERVICE": workloads.service_host(CONTROLLER_SERVICE, CONTROLLER_ROLE),
        "COORDINATOR_SERVICE": workloads.service_host(COORDINATOR_MGMT_SERVICE, COORDINATOR_ROLE),
        "COORDINATOR_INFER_SERVICE": workloads.service_host(COORDINATOR_INFER_SERVICE, COORDINATOR_ROLE),
        "COORDINATOR_OBS_SERVICE": workloads.service_host(COORDINATOR_OBS_SERVICE, COORDINATOR_ROLE),
    }


class ServiceSet(pulumi.ComponentResource):
    """Owns the InferServiceSet. Its children keep their protection as given: the component's own options are
    never copied onto them."""

    infer_service_set: k8s.apiextensions.CustomResource

    def __init__(self, name: str, namespace: str, roles: list[Role], child_opts: pulumi.ResourceOptions | None,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(SERVICE_SET_TYPE, name, None, opts)  # `opts`: the component's own (its aliases)
        role_specs = [
            {
                "name": role.name,
                "replicas": role.replicas,
                "workload": {"apiVersion": "apps/v1", "kind": "Deployment"},
                "metadata": {"labels": role.labels},
                "services": role.services,
                "spec": role.spec,
            }
            for role in roles
        ]
        names = ChildNames.of(name, ISS_NAME, opts)
        # Created at the stack's root before this component existed: the alias keeps a running stack's object.
        own = names.opts(ISS_NAME, pulumi.ResourceOptions(parent=self), was_at_root=True)
        self.infer_service_set = k8s.apiextensions.CustomResource(
            names.name(ISS_NAME),
            api_version=SERVICE_SET_API_VERSION,
            kind=SERVICE_SET_KIND,
            metadata={
                "name": ISS_NAME,
                "namespace": namespace,
                "labels": common_labels(namespace, "infer-service-set", ISS_NAME),
            },
            spec={"replicas": 1, "template": {"roles": role_specs}},
            opts=pulumi.ResourceOptions.merge(child_opts, own) if child_opts else own,
        )
        self.register_outputs({"infer_service_set": self.infer_service_set})
