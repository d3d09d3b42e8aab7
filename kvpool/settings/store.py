"""kv_cache_store_config: one model per KV store backend (mooncake, memcache, yuanrong) over the keys they share,
their etcd, resources and HA, and which keys only say how motor-kvpool deploys the store."""

from __future__ import annotations

import ipaddress
from typing import Annotated, Any, Literal, Mapping, Union

from pydantic import (
    AfterValidator,
    BeforeValidator,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    field_validator,
    model_validator,
)

from kvpool.policies import rules
from kvpool.settings.pods import StoreResources
from kvpool.settings.types import (
    IMAGE_REFERENCE,
    INT64_MAX,
    MAX_NODE_MEMORY,
    STACK_REFERENCE,
    Annotations,
    Closed,
    DnsLabel,
    Labels,
    MooncakeSize,
    NonEmpty,
    PortNumber,
    VolumeSize,
    no_bool,
)

class StoreCommon(Closed):
    target_stack: str | None = Field(
        None,
        pattern=STACK_REFERENCE,
        description="<org>/<project>/<stack> whose KV store this service uses instead of creating one.",
    )
    additional_labels: Labels = Field(default_factory=dict, description="Extra labels on the store objects.")
    additional_annotations: Annotations = Field(default_factory=dict, description="Extra annotations on the store.")
    image: str | None = Field(
        None, pattern=IMAGE_REFERENCE, description="Image of the store server; default the Motor image (deploy.py's)."
    )
    resources: StoreResources = Field(default_factory=StoreResources)
    protect: StrictBool = Field(
        False, description="Pulumi protect on the store objects: `pulumi destroy` refuses until it is set false."
    )
    retain_on_delete: StrictBool = Field(
        False, description="Leave the store running in the cluster when Pulumi deletes it from the stack."
    )
    service_monitor: StrictBool = Field(False, description="Create a Prometheus-operator ServiceMonitor for the metrics port.")
    dashboards: StrictBool = Field(
        False,
        description="Mooncake and MemCache: render the pool's Grafana dashboard as a ConfigMap labelled "
        "grafana_dashboard: \"1\" (kube-prometheus-stack's dashboard sidecar loads it) and a PrometheusRule with the "
        "pool's alerts, their thresholds from these settings. Needs service_monitor (the queries read its series). "
        "With them the Motor service's dashboard and alerts (coordinator workers against the instance counts, "
        "tokens, the engines' KV cache, TTFT/TPOT) and a ServiceMonitor on the coordinator's obs Service, which scrapes "
        "plain http (refused with motor_deploy_config.tls_config.mgmt_tls_config.enable_tls).",
    )
    allowed_consumers: list[DnsLabel] = Field(
        default_factory=list,
        description="Namespaces of other services whose engines may use this store (their target_stack names "
        "this stack); the store's NetworkPolicy admits their engine pods and nobody else's.",
    )
    metrics_scraper_namespaces: list[DnsLabel] = Field(
        default_factory=list,
        description="Namespaces whose pods may scrape the store's metrics port (where Prometheus runs). Besides "
        "them, only pods of the service's own namespace labelled motor-kvpool.io/metrics-scraper: \"true\".",
    )
    @model_validator(mode="after")
    def _owner_decides(self) -> StoreCommon:
        """A consumer's pool is the owner's: what only the owner's store reads would be dropped without a word (the
        consumer's client files dial the owner's port; only the owner's NetworkPolicy admits consumers)."""
        if self.target_stack is None:
            return self
        written = [key for key in ("port", "allowed_consumers") if key in self.model_fields_set]
        if written:
            raise ValueError(
                f"{', '.join(written)}: the owner's to set: {self.target_stack} runs the store this service uses "
                f"(target_stack); remove {'them' if len(written) > 1 else 'it'} here (the client files dial the "
                f"owner's port; list this namespace in the owner's allowed_consumers)"
            )
        return self

    @model_validator(mode="after")
    def _no_system_consumers(self) -> StoreCommon:
        system = [name for name in self.allowed_consumers if name in rules.SYSTEM_NAMESPACES]
        if system:
            raise ValueError(
                f"allowed_consumers: {', '.join(system)} is a namespace Kubernetes itself uses, where no service's "
                f"engines run; admitting it opens the pool to the cluster's system pods: list the consumers' own "
                f"namespaces"
            )
        return self

    @model_validator(mode="after")
    def _dashboards_read_the_service_monitor(self) -> StoreCommon:
        if self.dashboards and not self.service_monitor:
            raise ValueError("dashboards: true needs service_monitor: true; the dashboard and alerts query the series "
                             "Prometheus scrapes through the store's ServiceMonitor")
        return self


class EtcdConfig(Closed):
    """The etcd a store keeps its cluster state in (Mooncake HA leader election and oplog; Yuanrong's ring)."""

    replicas: Annotated[Literal[1, 3, 5], BeforeValidator(no_bool)] = Field(1, description="Members; 3 survives the loss of one.")
    image: str = Field("registry.k8s.io/etcd:3.5.15-0", pattern=IMAGE_REFERENCE, description="etcd image.")
    port: PortNumber = Field(2379, description="etcd client port.")
    peer_port: PortNumber = Field(2380, description="etcd peer port.")
    storage_size: VolumeSize = Field("1Gi", description="Data volume per member.")

    @model_validator(mode="after")
    def _distinct_ports(self) -> EtcdConfig:
        if self.port == self.peer_port:
            raise ValueError(f"peer_port: {self.peer_port} is also port; etcd listens on each separately (and the "
                             "Service would list one port twice), give each its own")
        return self


class MooncakeHA(Closed):
    """mooncake_master leader election through etcd. The oplog is always on: without it a failover loses every
    object's metadata (reference/research/backends.md measured 0/20 kept without, 20/20 with)."""

    master_replicas: StrictInt = Field(2, ge=2, le=5, description="Masters: one leader, the rest hot standbys.")
    etcd: EtcdConfig = Field(default_factory=lambda: EtcdConfig(replicas=3))


# The transfer engine's metadata mode without a metadata server (peers exchange it directly): the seeds' and
# Motor's examples' value.
P2P_HANDSHAKE = "P2PHANDSHAKE"


class MooncakeStoreConfig(StoreCommon):
    backend: Literal["mooncake"]
    port: PortNumber = Field(50088, description="mooncake_master RPC port (seed default 50088).")
    metrics_port: PortNumber = Field(9003, description="mooncake_master --metrics_port (the master's own default).")
    metadata_server: NonEmpty = Field(P2P_HANDSHAKE, description="Transfer-engine metadata mode.")
    protocol: Literal["ascend", "tcp", "rdma"] = Field("ascend", description="Transport; vllm-ascend needs ascend.")
    device_name: str = Field("", description="NIC to bind; empty selects automatically.")
    global_segment_size: MooncakeSize = Field("1GB", description="Memory each engine contributes to the pool.")
    default_kv_lease_ttl: StrictInt = Field(
        rules.MOONCAKE_LEASE_TTL_DEFAULT_MS, gt=0, le=INT64_MAX,
        description="Lease of a read object in ms; must exceed both ASCEND timeouts of the engines.",
    )
    eviction_high_watermark_ratio: StrictFloat | None = Field(None, description="Required: usage that starts eviction.")
    eviction_ratio: StrictFloat | None = Field(None, description="Required: fraction of the pool freed per eviction.")
    store_mode: Literal["embedded", "standalone"] = Field(
        "embedded", description="embedded: engines hold the pool; standalone: Motor's node manager starts a "
        "mooncake_store_service in each engine container that holds global_segment_size, so an engine crash keeps "
        "the pool (needs a Motor whose node manager has the Mooncake store service).",
    )
    local_buffer_size: MooncakeSize = Field("1GB", description="Engine staging buffer in standalone mode.")
    store_http_port: StrictInt = Field(
        0, ge=0, le=65535, description="Standalone store process's REST port; 0 = kernel-chosen (nothing reads it)."
    )
    prefer_alloc_in_same_node: StrictBool | None = Field(None, description="vllm-ascend mooncake.json option.")
    client_ttl: StrictInt = Field(
        10, ge=1, le=INT64_MAX, description="Seconds before mooncake_master drops a silent client and its segment (master flag)."
    )
    ha: MooncakeHA | None = Field(None, description="Set to run masters with etcd leader election and the oplog.")

    @model_validator(mode="after")
    def _distinct_ports(self) -> MooncakeStoreConfig:
        if self.port == self.metrics_port:
            raise ValueError(f"metrics_port: {self.metrics_port} is also port; mooncake_master binds each separately "
                             "(and the Service would list one port twice), give each its own")
        return self


class MemcacheStoreConfig(StoreCommon):
    backend: Literal["memcache"]
    port: PortNumber = Field(50088, description="MetaService port (seed default 50088).")
    config_store_port: PortNumber = Field(50089, description="MetaService config-store port.")
    metrics_port: PortNumber = Field(50090, description="MetaService metrics port.")
    local_service_mode: Literal["inprocess", "standalone"] | None = Field(
        None, description="LocalService in the vLLM process or its own; default follows hardware_type."
    )
    local_service_conf: str | None = Field(
        None,
        description="Your own mmc-local.conf (path relative to the project, read at deploy time). Keys "
        "motor-kvpool sets (the MetaService and config-store URLs) must be absent or equal to ours.",
    )
    dram_size: str | None = Field(
        None,
        pattern=r"^[1-9][0-9]*GB$",
        description="DRAM each engine pod gives the pool, whole GB (e.g. 100GB); Motor's node manager reads it "
        "(motor/node_manager/core/services/local_service.py). standalone: the pool of the pod's one LocalService; "
        "inprocess: split over the pod's ranks, each its floor in whole GB and at least 1GB. Unset, Motor takes 80 % "
        "of the node's free memory when the pod starts, which the preview cannot know (its sizing shows ?).",
    )

    @model_validator(mode="after")
    def _distinct_ports(self) -> MemcacheStoreConfig:
        ports = {"port": self.port, "config_store_port": self.config_store_port, "metrics_port": self.metrics_port}
        clashes = [name for name, value in ports.items() if list(ports.values()).count(value) > 1]
        if clashes:
            raise ValueError(
                f"{' and '.join(clashes)} are the same port {ports[clashes[0]]}; the MetaService binds each "
                "separately (seed FAQ 4), give each its own"
            )
        return self


# The widest range etcd_client_cidrs takes: 256 addresses (an IPv4 /24, an IPv6 /120) is a rack of engine nodes; a
# wider one reaches past them, and etcd has no authentication.
MAX_ETCD_CLIENT_ADDRESSES = 256


def _cidr(text: str) -> str:
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError:
        raise ValueError(f"{text!r} is not a network address such as 192.168.10.11/32") from None
    if network.num_addresses > MAX_ETCD_CLIENT_ADDRESSES:
        widest = 32 - 8 if network.version == 4 else 128 - 8
        raise ValueError(
            f"{text!r} admits {'every address' if network.prefixlen == 0 else f'{network.num_addresses} addresses'} "
            f"to Yuanrong's etcd, which has no authentication; list "
            f"the engine nodes' own addresses (each /{network.max_prefixlen}) or ranges of at most "
            f"{MAX_ETCD_CLIENT_ADDRESSES} (/{widest})")
    return str(network)


class YuanrongStoreConfig(StoreCommon):
    backend: Literal["yuanrong"]
    port: PortNumber = Field(31501, description="openYuanrong datasystem worker port on every engine node.")
    etcd: EtcdConfig = Field(default_factory=lambda: EtcdConfig(), description="etcd for the datasystem cluster state.")
    shared_memory_size_mb: StrictInt = Field(
        65536, ge=64, le=MAX_NODE_MEMORY // 2**20, description="Shared memory each worker offers to the engines on its node, in MiB."
    )
    etcd_client_cidrs: list[Annotated[str, AfterValidator(_cidr)]] = Field(
        default_factory=list,
        validate_default=True,
        description="Addresses (CIDRs) of the engine nodes: the workers use the host network, so they reach etcd "
        "from their node's address, which no pod selector names. etcd's NetworkPolicy admits its client port from "
        "these only (etcd has no authentication). Required: list the nodes' own addresses, not a range that also "
        "holds the pod network (a range admits at most 256 addresses).",
    )

    @field_validator("dashboards")
    @classmethod
    def _no_yuanrong_dashboards(cls, dashboards: bool) -> bool:
        if dashboards:
            raise ValueError("is for mooncake and memcache only: the openYuanrong worker exposes no Prometheus "
                             "metrics endpoint for a dashboard to query; leave it false")
        return dashboards

    @field_validator("etcd_client_cidrs")
    @classmethod
    def _engine_nodes_named(cls, cidrs: list[str]) -> list[str]:
        if not cidrs:
            raise ValueError(
                "is unset, and Yuanrong's etcd (plain HTTP, no authentication) would admit every address; list the "
                "engine nodes' addresses, each as /32, e.g. from `kubectl get nodes -l accelerator -o "
                "jsonpath='{.items[*].status.addresses[?(@.type==\"InternalIP\")].address}'`, and never a range "
                "that holds the cluster's pod network, whose every pod would then reach etcd"
            )
        return cidrs


def _default_backend(store: Any) -> Any:
    """seed 000: an absent backend means memcache. Written explicitly so the effective config says it."""
    if isinstance(store, Mapping) and "backend" not in store:
        return {"backend": rules.DEFAULT_BACKEND, **store}
    return store


# The keys only a Mooncake pool has: kv_cache_pool_config, the block of deploy.py's Mooncake-only generation (seed
# 001), names no backend, and these keys say which backend it describes.
MOONCAKE_ONLY_KEYS = frozenset(MooncakeStoreConfig.model_fields).difference(
    MemcacheStoreConfig.model_fields, YuanrongStoreConfig.model_fields)


def pool_config_as_store_config(pool: Any) -> Any:
    """kv_cache_pool_config read as kv_cache_store_config: without a backend but with Mooncake's keys it is a
    Mooncake pool (seed 001's block), not the current default memcache, which would refuse every key it has."""
    if isinstance(pool, Mapping) and "backend" not in pool and MOONCAKE_ONLY_KEYS.intersection(pool):
        return {"backend": rules.MOONCAKE.name, **pool}
    return pool


# One settings class per backend of rules.BACKENDS (tests/test_backend_facts.py), in its order.
STORE_CONFIGS: tuple[type[StoreCommon], ...] = (MooncakeStoreConfig, MemcacheStoreConfig, YuanrongStoreConfig)
StoreConfig = Annotated[
    Union[STORE_CONFIGS],  # type: ignore[valid-type]
    Field(discriminator="backend"),
    BeforeValidator(_default_backend),
]


# kv_cache_store_config keys that only say how motor-kvpool deploys the store: Motor's in-pod code (which copies
# the section into mooncake.json) never reads them, so they stay out of the effective user_config.json.
DEPLOYMENT_ONLY_STORE_KEYS = {
    "target_stack", "image", "resources", "protect", "retain_on_delete", "service_monitor", "dashboards", "ha", "etcd",
    "local_service_conf", "client_ttl", "allowed_consumers", "metrics_scraper_namespaces",
    "etcd_client_cidrs",
}
