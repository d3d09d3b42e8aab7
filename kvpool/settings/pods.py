"""pods: what the Motor pods ask the cluster for, the engines' scheduler and each role's CPU and memory. deploy.py
writes them fixed in its yaml_template/ files and Motor 8919e55's user_config.json has no key for them (its config
classes and examples/deployer read none), so they are motor-kvpool's own and stay out of user_config.json. The
store's own are kv_cache_store_config.resources."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import Field, model_validator

from kvpool.policies import rules
from kvpool.settings.types import Closed, NodeMemory, ObjectName

CpuQuantity = Annotated[str, Field(pattern=r"^[0-9]+(\.[0-9]+)?m?$")]


class ResourceAmounts(Closed):
    cpu: CpuQuantity | None = Field(None, description="CPU cores, e.g. 4 or 500m.")
    memory: NodeMemory | None = Field(None, description="Memory with a unit, e.g. 2Gi.")


def _cpu_cores(amount: str) -> Decimal:
    return Decimal(amount[:-1]) / 1000 if amount.endswith("m") else Decimal(amount)


class ContainerResources(Closed):
    """A container's CPU and memory: what the scheduler reserves on a node for it (requests) and the most it may use
    (limits). An amount left unset is not asked for; requests or limits written replace that part's default whole."""

    requests: ResourceAmounts = Field(default_factory=ResourceAmounts)
    limits: ResourceAmounts = Field(default_factory=ResourceAmounts)

    @model_validator(mode="after")
    def _requests_within_limits(self) -> ContainerResources:
        """Kubernetes refuses a request above its limit (core validation, ValidateResourceRequirements)."""
        amounts = {"cpu": _cpu_cores, "memory": rules.k8s_quantity_bytes}
        for name, amount in amounts.items():
            request, limit = getattr(self.requests, name), getattr(self.limits, name)
            if request is not None and limit is not None and amount(request) > amount(limit):
                raise ValueError(f"requests.{name}: {request} is more than limits.{name} {limit}; Kubernetes refuses a "
                                 "request above its limit")
        return self

    def manifest(self) -> dict[str, dict[str, str]]:
        """The container's `resources` as Kubernetes takes it: the amounts set, requests then limits."""
        return {
            kind: {key: value for key, value in amounts.model_dump().items() if value is not None}
            for kind, amounts in (("requests", self.requests), ("limits", self.limits))
        }


def amounts(**values: str) -> Any:
    """A requests or limits field whose default is these amounts (deploy.py's for the role)."""
    return Field(default_factory=lambda: ResourceAmounts(**values))


class StoreResources(ContainerResources):
    """Container resources of the store server; defaults are deploy.py's kv_cache_store_template.yaml."""

    requests: ResourceAmounts = amounts(cpu="4", memory="2Gi")
    limits: ResourceAmounts = amounts(cpu="8", memory="4Gi")


class EngineResources(ContainerResources):
    """CPU and memory of each engine container of the side, besides its NPUs (motor_deploy_config.p_pod_npu_num,
    d_pod_npu_num); defaults are deploy.py's engine_template.yaml, which sets no CPU or memory limit. requests.memory
    must hold the pool memory of the pod's ranks (kvpool-configure-engine-pod-pool-memory)."""

    requests: ResourceAmounts = amounts(cpu="16", memory=rules.ENGINE_MEMORY_REQUEST)


class ControllerResources(ContainerResources):
    """The controller's container; defaults are deploy.py's mindie_motor_controller.yaml."""

    requests: ResourceAmounts = amounts(cpu="4", memory="2Gi")
    limits: ResourceAmounts = amounts(cpu="8", memory="4Gi")


class CoordinatorResources(ContainerResources):
    """The coordinator's container; defaults are deploy.py's, four times the controller's CPU: it routes every
    request."""

    requests: ResourceAmounts = amounts(cpu="16", memory="4Gi")
    limits: ResourceAmounts = amounts(cpu="64", memory="8Gi")


class ConductorResources(ContainerResources):
    """The KV conductor's container (with kv_conductor_config); defaults are deploy.py's kv_conductor_template.yaml."""

    requests: ResourceAmounts = amounts(cpu="4", memory="2Gi")
    limits: ResourceAmounts = amounts(cpu="8", memory="4Gi")


DEFAULT_SCHEDULER = "volcano"  # deploy.py's engine templates
# The annotation only Volcano reads (motor_deploy_config.scheduling_queue): another scheduler would leave it inert.
VOLCANO_QUEUE_ANNOTATION = "scheduling.volcano.sh/queue-name"


class PodsConfig(Closed):
    """What Motor's pods ask the cluster for. Every default is deploy.py's template's, so a stack that leaves a role
    out renders it as deploy.py does; a role's requests or limits, once written, replace that part's default whole
    (as kv_cache_store_config.resources)."""

    scheduler_name: ObjectName = Field(
        DEFAULT_SCHEDULER,
        description="The scheduler of the engine pods (their schedulerName; default deploy.py's volcano). Another "
        "scheduler needs motor_deploy_config.scheduling_queue unset: the queue is Volcano's annotation "
        f"{VOLCANO_QUEUE_ANNOTATION}. The control plane and the KV conductor use the cluster's default scheduler, "
        "as deploy.py's.",
    )
    prefill: EngineResources = Field(default_factory=EngineResources, description="The prefill engines.")
    decode: EngineResources = Field(default_factory=EngineResources, description="The decode engines.")
    controller: ControllerResources = Field(default_factory=ControllerResources)
    coordinator: CoordinatorResources = Field(default_factory=CoordinatorResources)
    kv_conductor: ConductorResources = Field(default_factory=ConductorResources)

    def engine_resources(self) -> dict[str, dict[str, dict[str, str]]]:
        """side -> the engine container's resources as rendered, without its NPUs (what the pool-memory rule reads)."""
        return {side: getattr(self, side).manifest() for side in rules.SIDES}
