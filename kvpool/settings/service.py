"""The typed settings of one inference service: MindIE Motor's user_config.json sections plus env.json.

The model refuses unknown keys at every level and carries every default the seeds and deploy.py define; the
loaders that build it and turn its errors into one line per problem are in `kvpool/settings/loader.py`.

Engine options that motor-kvpool does not interpret (vLLM arguments, Motor's controller/coordinator
sections) pass through untouched into the effective user_config.json that Motor's in-pod code reads.

This module holds the service (ServiceSettings: defaults derived across sections, checks that span them, the
effective user_config.json and env.json), kv_conductor_config and env.json. The other sections have their own
modules: motor_deploy_config in kvpool/settings/deploy.py, the engine sections in kvpool/settings/engine.py,
kv_cache_store_config in kvpool/settings/store.py, kv_pool_sizing in kvpool/settings/sizing.py, pods in
kvpool/settings/pods.py, rollout in kvpool/settings/rollout.py; the field types they share are in
kvpool/settings/types.py.
"""

from __future__ import annotations

import json
import re
import typing
from typing import Any, Literal, Mapping

from pydantic import (
    Field,
    StrictBool,
    StrictInt,
    ValidationInfo,
    field_validator,
    model_validator,
)

from kvpool.internal.connectors import with_store_connector_config
from kvpool.internal.hardware import MEMCACHE_LOCAL_SERVICE_MODE
from kvpool.internal.labels import DEFAULT_CLUSTER_DOMAIN, engine_job_name
from kvpool.internal.pod_layout import (
    CLIENT_CONFIG_DIR,
    CONFIGMAP_PATH,
    YUANRONG_SOCKET_DIR,
    host_files,
)
from kvpool.internal.units import DNS_SUBDOMAIN, is_dns_label
from kvpool.policies import rules
from kvpool.settings.deploy import DeployConfig, mount_point
from kvpool.settings.engine import EngineSection
from kvpool.settings.namespace import PROJECT
from kvpool.settings.pods import DEFAULT_SCHEDULER, VOLCANO_QUEUE_ANNOTATION, PodsConfig
from kvpool.settings.rollout import SERVICE_SET_MESSAGE, RolloutConfig
from kvpool.settings.sizing import PoolSizingConfig
from kvpool.settings.store import (
    DEPLOYMENT_ONLY_STORE_KEYS,
    MemcacheStoreConfig,
    StoreConfig,
)
from kvpool.settings.types import Closed, ClusterName, EnvName, EnvValue

DEFAULT_CLUSTER = "default"
USER_CONFIG_VERSION = "v2.0"


# --- kv_conductor_config (Motor's KV conductor: KV-cache affinity scheduling) ----------------------------------
# Motor's docs (docs/zh/user_guide/features/KV_cache_affinity.md) and code: deploy.py deploys the conductor for this
# top-level section; Motor's kv_conductor.sh hands the section, completed by mooncake_config.py `conductor`, to the
# conductor; Motor's coordinator reads http_server_port from it (config_utils._resolve_kv_conductor_http_port).

# What Motor's mooncake_config.py writes into kvevent_instance.mooncake_master itself, and from where.
CONDUCTOR_DERIVED_KEYS = {
    "endpoint": "tcp://<KVS_MASTER_SERVICE>:<kv_cache_store_config.port>, the pool's master",
    "modelname": "motor_engine_prefill_config.engine_config.served_model_name",
}


class MooncakeMasterEvents(Closed):
    """The pool's master as a KV-event source of the conductor (Motor supports Mooncake only)."""

    type: Literal["Mooncake"] = Field("Mooncake", description="KV event backend; Motor supports Mooncake only.")

    @model_validator(mode="before")
    @classmethod
    def _derived_by_motor(cls, data: Any) -> Any:
        if isinstance(data, Mapping):
            for key, source in CONDUCTOR_DERIVED_KEYS.items():
                if key in data:
                    raise ValueError(
                        f"{key}: Motor's mooncake_config.py writes it in the pod ({source}) and would replace "
                        "what is written here; remove it"
                    )
        return data


class KvEventInstance(Closed):
    mooncake_master: MooncakeMasterEvents = Field(description="The Mooncake master of kv_cache_store_config.")


class KvConductorConfig(Closed):
    """Motor's KV conductor (Deployment mindie-motor-kv-conductor, Service kv-conductor) indexes the prefill
    engines' KV events and answers the coordinator's overlap queries (scheduler_type kv_cache_affinity)."""

    http_server_port: StrictInt = Field(
        13333, ge=1024, le=65535,
        description="The conductor's HTTP port (Motor's docs: 1024-65535, default 13333); the coordinator dials it.",
    )
    kvevent_instance: KvEventInstance | None = Field(
        None, description="Also index the Mooncake pool master's events (kv_cache_store_config must be Mooncake).",
    )


# --- env.json --------------------------------------------------------------------------------------------


# Set on every engine unless env.json sets them, so the rules hold by construction: one hash seed everywhere
# (different seeds make every pool lookup miss), and ASCEND timeouts below the 11000 ms default lease
# (unset, vllm-ascend's transfer timeout is 33064 ms). 10000/10000 is what vllm-ascend's examples use.
ENGINE_ENV_DEFAULTS = {"PYTHONHASHSEED": "0", "ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000"}
_ENGINE_ENV = (
    "; unless set here or in motor_common_env, " + ", ".join(f"{name}={value}" for name, value in ENGINE_ENV_DEFAULTS.items())
    + f": one hash seed on every engine, and ASCEND timeouts below the default {rules.MOONCAKE_LEASE_TTL_DEFAULT_MS} ms "
    f"Mooncake lease (unset, vllm-ascend's transfer timeout is {rules.effective_transfer_timeout_ms({})} ms, which "
    "outlives it)."
)


class EnvConfig(Closed):
    """env.json's sections: each is set as container env (visible to `kubectl describe` and the policy pack) and as
    deploy.py's set_*_env function in Motor's scripts, so it applies where deploy.py applies it."""

    motor_common_env: dict[EnvName, EnvValue] = Field(
        default_factory=dict, description="Every Motor pod: controller, coordinator, engines, KV conductor; not the "
        "store, which runs no Motor process."
    )
    motor_controller_env: dict[EnvName, EnvValue] = Field(default_factory=dict, description="The controller.")
    motor_coordinator_env: dict[EnvName, EnvValue] = Field(default_factory=dict, description="The coordinator.")
    motor_engine_prefill_env: dict[EnvName, EnvValue] = Field(
        default_factory=dict, description=f"The prefill engines{_ENGINE_ENV}"
    )
    motor_engine_decode_env: dict[EnvName, EnvValue] = Field(
        default_factory=dict, description=f"The decode engines{_ENGINE_ENV}"
    )
    motor_kv_cache_store_env: dict[EnvName, EnvValue] = Field(
        default_factory=dict, description="The store's container (kv_cache_store_config)."
    )
    motor_kv_conductor_env: dict[EnvName, EnvValue] = Field(
        default_factory=dict, description="The KV conductor (kv_conductor.sh's set_kv_conductor_env)."
    )


# --- the service -----------------------------------------------------------------------------------------

LABEL_VALUE_MAX = 63
# A Service's FQDN (<service>.<namespace>.svc.<domain>, two labels of up to 63) must stay within DNS's 253.
CLUSTER_DOMAIN_MAX = 253 - 2 * 64 - len(".svc.")


def engine_mount_paths(hardware_type: str, store: Any) -> dict[str, str]:
    """The paths every engine container mounts besides the weights and storage[] (kvpool/components/engine_pool.py):
    path -> what it holds. A path ending in '/' stands for the folder and everything below it."""
    taken = {CONFIGMAP_PATH: "ConfigMap motor-config", "/dev/shm": "the shared-memory volume (dshm_size)"}
    taken.update({spec[0]: f"the host file {spec[0]}" for spec in host_files(hardware_type).values()})
    taken[f"{CLIENT_CONFIG_DIR}/"] = "the KV store's client configuration"
    if store is not None and store.backend == rules.YUANRONG.name:
        taken[YUANRONG_SOCKET_DIR] = "the openYuanrong worker sockets"
    return taken


# Kernel filesystems a container runtime mounts itself: a volume there hides them (or is refused by the runtime).
KERNEL_MOUNTS = ("/proc", "/sys", "/dev")
FILE_NAME_MAX = 255  # bytes of one path component (Linux NAME_MAX)


def _nested(one: str, other: str) -> bool:
    """Whether either normalised path lies inside the other."""
    return one.startswith(other.rstrip("/") + "/") or other.startswith(one.rstrip("/") + "/")


def _mount_path_problem(path: str, taken: Mapping[str, str], anywhere: bool) -> str | None:
    """Why a volume cannot be mounted at `path` in an engine container, or None. Compared as paths, not strings
    (/mnt/ucm/ is /mnt/ucm): the same path and one inside another collide, and so, for a path that may be `anywhere`
    (a storage entry's; the weights' is a host path the allow-list keeps below /mnt or /data), one holding another."""
    normal = mount_point(path)
    if not anywhere:
        return next((f"is where engine pods already mount {what}" for where, what in taken.items()
                     if normal == mount_point(where)
                     or normal.startswith(mount_point(where) + "/")), None)
    if normal == "/":
        return "is the container's root, which a volume would replace"
    if any(normal == root or normal.startswith(root + "/") for root in KERNEL_MOUNTS if normal != "/dev/shm"):
        return f"lies in {', '.join(KERNEL_MOUNTS)}, the kernel's filesystems, which a volume would hide"
    long = next((part for part in normal.split("/") if len(part.encode("utf-8")) > FILE_NAME_MAX), None)
    if long is not None:
        return f"has a component of {len(long.encode('utf-8'))} bytes, more than the {FILE_NAME_MAX} a file name takes"
    for where, what in taken.items():
        place = mount_point(where)
        if normal == place or (where.endswith("/") and normal.startswith(place + "/")):
            return f"is where engine pods already mount {what}"
        if normal.startswith(place + "/"):
            return f"lies inside {place}, where engine pods mount {what}"
        if place.startswith(normal.rstrip("/") + "/"):
            return f"holds {place}, where engine pods mount {what}: a volume here would hide it"
    return None


class _MotorKvpoolOwn:
    """Field metadata: a top-level key only motor-kvpool reads, so the effective user_config.json leaves it out."""

    def __repr__(self) -> str:
        return "motor-kvpool's own"


MOTOR_KVPOOL_OWN = _MotorKvpoolOwn()
MOTOR_KVPOOL_OWN_NOTE = "Not Motor's: kept out of user_config.json."


def motor_kvpool_own(default: Any = ..., *, description: str, **field: Any) -> Any:
    """A ServiceSettings field Motor never reads: marked, and its description saying so, from this one call."""
    info = Field(default, description=f"{description} {MOTOR_KVPOOL_OWN_NOTE}", **field)
    info.metadata.append(MOTOR_KVPOOL_OWN)
    return info


class ServiceSettings(Closed):
    # Field order is the order of the stack's keys wherever they are listed (PULUMI_CONFIG_KEYS, the docs).
    create_namespace: StrictBool = motor_kvpool_own(
        True, description="Create the namespace job_id (deploy.py expects it to exist).")
    motor_deployer_dir: str | None = motor_kvpool_own(
        None,
        description="Motor's examples/deployer folder (the one holding deploy.py), relative to the project; its "
        "startup/, probe/ and prestop/ files are read at deploy time into ConfigMap motor-config, as deploy.py does, "
        "and pods run boot.sh from there. Required by `pulumi up`. The Motor sections are checked against the config "
        "classes (motor/config/*.py, read with ast, never run) of the checkout it lies in, two folders up, so a newer "
        "Motor's keys are accepted; a folder outside a Motor checkout is refused. Unset: against the bundled schema "
        "of Motor 8919e55, which the unknown-key message names.",
    )
    vllm_ascend_version: str | None = motor_kvpool_own(
        None,
        description="vllm-ascend version in the image, e.g. v0.17.0rc2; lets the policy pack say when layerwise "
        "transfer with a pool needs Motor's MultiConnector patch (before v0.17.0rc2).",
    )
    cluster_domain: str = motor_kvpool_own(
        DEFAULT_CLUSTER_DOMAIN,
        description="The cluster's DNS domain (the kubelet's clusterDomain): every Service name motor-kvpool writes "
        "ends in .svc.<cluster_domain>, another stack's store included, whatever that stack's output says. (Motor "
        "itself assumes cluster.local only when its node manager restores a snapshot that lacks its namespace, "
        "motor/node_manager/core/engine_manager.py:157.)",
    )
    cluster: ClusterName = motor_kvpool_own(
        DEFAULT_CLUSTER,
        description="The cluster this stack deploys to, by a name of your choosing (e.g. the kubeconfig context). "
        "What a cluster allocates once (NodePorts, namespaces and the names in them, host ports, cluster-scoped "
        "objects) is checked across the project's stacks of one cluster: `kvpool fleet` lists every clash and "
        f"`kvpool preview` refuses one. Default {DEFAULT_CLUSTER!r}: every stack of the project shares one cluster; "
        "give stacks that deploy elsewhere another name. A consumer (kv_cache_store_config.target_stack) must have "
        "its owner's cluster, which the owner exports (kv_store.cluster): the store's Service exists there only.",
    )
    motor_deploy_config: DeployConfig = Field(
        description="Where and how the service runs: namespace, deploy mode, instances, pods and NPUs, image, "
        "hardware, storage[], node selectors, NodePorts."
    )
    motor_controller_config: dict[str, Any] = Field(
        default_factory=dict,
        description="Motor's controller section, passed to Motor untouched and checked against Motor's config "
        f"dataclasses; logging_config.host_log_dir is the node folder its pods log to (default "
        f"{rules.DEFAULT_HOST_LOG_DIR}; or a folder below a root declared in motor_deploy_config.host_path_roots.logs).",
    )
    motor_coordinator_config: dict[str, Any] = Field(
        default_factory=dict,
        description="Motor's coordinator section, passed to Motor untouched and checked against Motor's config "
        f"dataclasses; logging_config.host_log_dir is the node folder its pods log to (default "
        f"{rules.DEFAULT_HOST_LOG_DIR}; or a folder below a root declared in motor_deploy_config.host_path_roots.logs).",
    )
    motor_nodemanger_config: dict[str, Any] | None = Field(
        None,
        description="Motor's node manager section (sic, Motor's spelling), passed to Motor untouched and checked "
        "against Motor's config dataclasses; logging_config.host_log_dir is the node folder the engine pods log to "
        f"(default {rules.DEFAULT_HOST_LOG_DIR}; or a folder below a root declared in motor_deploy_config.host_path_roots.logs).",
    )
    motor_engine_prefill_config: EngineSection = Field(
        description="The prefill engines: engine_type and engine_config, vLLM's arguments (checked against vLLM's "
        "serve options) with kv_transfer_config as a single connector or a MultiConnector."
    )
    motor_engine_decode_config: EngineSection = Field(
        description="The decode engines, with the keys of motor_engine_prefill_config."
    )
    kv_cache_store_config: StoreConfig | None = Field(
        None,
        description="The KV pool: backend mooncake, memcache (the default) or yuanrong, or target_stack to use "
        "another stack's store. Absent, a MemCache store is created when prefill uses a MultiConnector (deploy.py's "
        "rule).",
    )
    kv_conductor_config: KvConductorConfig | None = Field(
        None, description="Deploy Motor's KV conductor for KV-cache affinity scheduling (README, KV-cache affinity)."
    )
    env: EnvConfig = Field(default_factory=EnvConfig, description="env.json's sections.")
    rollout: RolloutConfig = motor_kvpool_own(
        default_factory=RolloutConfig,
        description="How many engine instances of each role an update stops at once (multi_deployment; README, "
        "Rolls). infer_service_set leaves rolling to its operator.",
    )
    kv_pool_sizing: PoolSizingConfig = motor_kvpool_own(
        default_factory=PoolSizingConfig,
        description="What the pool planner cannot read from the rest of the stack: the model's shape, the "
        "writers' measured rate, the shortest block lifetime to accept (docs/sizing.md).",
    )
    pods: PodsConfig = motor_kvpool_own(
        default_factory=PodsConfig,
        description="What Motor's pods ask the cluster for: the engines' scheduler, the CPU and memory of the "
        "engines, controller, coordinator and KV conductor (deploy.py's amounts by default; the store's are "
        "kv_cache_store_config.resources).",
    )

    @field_validator("cluster_domain", mode="before")
    @classmethod
    def _dns_domain(cls, domain: Any) -> Any:
        if not isinstance(domain, str) or len(domain) > CLUSTER_DOMAIN_MAX or not re.fullmatch(DNS_SUBDOMAIN, domain):
            raise ValueError(f"{domain!r} is not a DNS domain such as {DEFAULT_CLUSTER_DOMAIN} (the kubelet's "
                             f"clusterDomain; lower-case labels joined by dots)")
        # DNS caps each label at 63 characters: a longer one leaves every Service host name unresolvable.
        long = [label for label in domain.split(".") if not is_dns_label(label)]
        if long:
            raise ValueError(f"{domain!r} has the label {long[0]!r} of {len(long[0])} characters; DNS allows at most "
                             f"63 in a label, so no Service host name in it would resolve; shorten it to the "
                             f"kubelet's clusterDomain")
        return domain

    @model_validator(mode="after")
    def _derived_defaults(self, info: ValidationInfo) -> ServiceSettings:
        deploy = self.motor_deploy_config
        if deploy.job_id is None:
            stack = (info.context or {}).get("stack")
            if stack is None:
                raise ValueError("motor_deploy_config.job_id is required when no stack name is known")
            if not is_dns_label(stack):
                raise ValueError(
                    f"motor_deploy_config.job_id defaults to the stack name {stack!r}, which is not a valid "
                    "namespace name; set motor_deploy_config.job_id"
                )
            deploy.job_id = stack
        store = self.kv_cache_store_config
        context = info.context or {}
        itself = [context.get("project", PROJECT), context.get("stack")]
        if store is not None and store.target_stack and store.target_stack.split("/")[1:] == itself:
            raise ValueError(
                f"kv_cache_store_config.target_stack {store.target_stack!r} is this stack itself; remove target_stack "
                "to own the store here, or name the stack that owns it"
            )
        if store is None and self.kv_store_wanted:
            store = self.kv_cache_store_config = MemcacheStoreConfig(backend=rules.MEMCACHE.name)
        if store is not None and store.backend == rules.MEMCACHE.name and store.local_service_mode is None:
            mode = MEMCACHE_LOCAL_SERVICE_MODE.get(deploy.hardware_type)
            if mode is None:
                raise ValueError(
                    f"kv_cache_store_config.local_service_mode has no default for hardware_type "
                    f"{deploy.hardware_type!r}; set inprocess or standalone"
                )
            store.local_service_mode = mode
        return self

    def host_log_dir(self, role: str) -> str:
        """The node folder a Motor role's pods (controller, coordinator, engine) mount as their log folder, as
        deploy.py's modify_log_mount picks it; rules.check_host_paths has checked it."""
        sections = {section: getattr(self, section) for section in rules.LOG_SECTION_BY_ROLE.values()}
        return rules.host_log_dir(sections, role)

    @model_validator(mode="after")
    def _rollout_needs_deployments(self) -> ServiceSettings:
        if "rollout" in self.model_fields_set and self.motor_deploy_config.deploy_mode == "infer_service_set":
            raise ValueError(f"rollout: {SERVICE_SET_MESSAGE}")
        return self

    @model_validator(mode="after")
    def _queue_needs_volcano(self) -> ServiceSettings:
        """The queue is an annotation only Volcano reads: under another scheduler it would stay on the pods, inert."""
        queue, scheduler = self.motor_deploy_config.scheduling_queue, self.pods.scheduler_name
        if queue is not None and scheduler != DEFAULT_SCHEDULER:
            raise ValueError(
                f"motor_deploy_config.scheduling_queue: {queue!r} is a Volcano queue ({VOLCANO_QUEUE_ANNOTATION}), "
                f"but pods.scheduler_name is {scheduler!r}, which never reads it; remove scheduling_queue, or set "
                f"pods.scheduler_name: {DEFAULT_SCHEDULER}"
            )
        return self

    @model_validator(mode="after")
    def _dashboards_scrape_plain_http(self) -> ServiceSettings:
        """The coordinator's obs port serves /metrics with mgmt_tls_config (Motor's observability_server.py), and the
        ServiceMonitor scrapes plain http, holding no client certificate: every scrape would fail and
        MotorCoordinatorDown fire for good. enable_tls is read as Motor reads it, `if ...enable_tls:` (observability_
        server.py:146), so "false", "true" and 1 all turn TLS on."""
        store = self.kv_cache_store_config
        mgmt_tls = (self.motor_deploy_config.tls_config or {}).get("mgmt_tls_config")
        enable_tls = mgmt_tls.get("enable_tls") if isinstance(mgmt_tls, dict) else None
        if store is not None and store.dashboards and enable_tls:
            written = "true" if enable_tls is True else f"{json.dumps(enable_tls)}, which Motor reads as true"
            raise ValueError(
                "kv_cache_store_config.dashboards: true scrapes the coordinator's /metrics over plain http, but "
                f"motor_deploy_config.tls_config.mgmt_tls_config.enable_tls is {written} (the obs port then serves "
                "TLS): set dashboards: false, or mgmt_tls_config.enable_tls: false"
            )
        return self

    @model_validator(mode="after")
    def _engine_labels_fit(self) -> ServiceSettings:
        """Engine pods carry the label job-name=<job_id>-<p|d><instance> (labels.engine_job_name);
        Kubernetes refuses a label value over 63 characters."""
        deploy = self.motor_deploy_config
        if deploy.job_id is None:
            return self
        service_set = deploy.deploy_mode == "infer_service_set"  # one role template per side
        last = {"prefill": deploy.p_instances_num - 1, "decode": deploy.d_instances_num - 1}
        longest = max(
            (engine_job_name(deploy.job_id, side, None if service_set else index) for side, index in last.items()),
            key=len,
        )
        if len(longest) > LABEL_VALUE_MAX:
            example = longest.replace(deploy.job_id, "<job_id>", 1)
            raise ValueError(
                f"motor_deploy_config.job_id: {deploy.job_id!r} is {len(deploy.job_id)} characters: the label "
                f"job-name={example} would be {len(longest)} characters (max {LABEL_VALUE_MAX}); use at most "
                f"{LABEL_VALUE_MAX - (len(longest) - len(deploy.job_id))}"
            )
        return self

    @model_validator(mode="after")
    def _engine_mount_paths(self) -> ServiceSettings:
        """Every mountPath of a container is unique (Kubernetes' ValidateVolumeMounts): the weights and the storage
        entries may not land on a path the engine container already mounts."""
        deploy = self.motor_deploy_config
        taken = engine_mount_paths(deploy.hardware_type, self.kv_cache_store_config)
        wanted = [("motor_deploy_config.weight_mount_path", deploy.weight_mount_path)]
        wanted += [
            (f"motor_deploy_config.storage[{index}].mount_path", entry.mount_path)
            for index, entry in enumerate(deploy.storage) if entry.enable and entry.mount_path
        ]
        for field, path in wanted:
            if problem := _mount_path_problem(path, taken, anywhere=field != "motor_deploy_config.weight_mount_path"):
                raise ValueError(f"{field}: {path!r} {problem}; choose another path")
        weight = mount_point(deploy.weight_mount_path)
        for index, entry in enumerate(deploy.storage):
            if not (entry.enable and entry.mount_path):
                continue
            normal = mount_point(entry.mount_path)
            if normal == weight:
                raise ValueError(f"motor_deploy_config.storage[{index}].mount_path: {entry.mount_path!r} is "
                                 "weight_mount_path, where engine pods mount the weights; choose another path")
            if _nested(normal, weight):
                raise ValueError(f"motor_deploy_config.storage[{index}].mount_path: {entry.mount_path!r} and "
                                 f"weight_mount_path {deploy.weight_mount_path!r} lie one inside the other; mount "
                                 "each at a path of its own")
        return self

    @property
    def namespace(self) -> str:
        return typing.cast(str, self.motor_deploy_config.job_id)

    @property
    def kv_store_wanted(self) -> bool:
        """deploy.py's rule: a store exists when prefill uses a MultiConnector or kv_cache_store_config is set."""
        kv = self.motor_engine_prefill_config.engine_config.kv_transfer_config
        return self.kv_cache_store_config is not None or (kv is not None and kv.kv_connector == rules.MULTI_CONNECTOR)

    def pool_sizing(self) -> rules.PoolSizing | None:
        """The pool as this service's own engines write it (kvpool/policies/rules/pool_sizing.py; None: no store, or no
        engine writes to it)."""
        return rules.pool_sizing(self.user_config(), self.kv_pool_sizing.as_rule_input())

    def user_config(self) -> dict[str, Any]:
        """The effective user_config.json that Motor's in-pod code reads from ConfigMap motor-config."""
        effective: dict[str, Any] = {"version": USER_CONFIG_VERSION}
        effective.update(
            self.model_dump(
                mode="json",
                exclude_none=True,
                exclude={
                    **dict.fromkeys(MOTOR_KVPOOL_OWN_KEYS, True),
                    "env": True,  # env.json's, a file of its own
                    "kv_cache_store_config": DEPLOYMENT_ONLY_STORE_KEYS,
                    "motor_engine_prefill_config": {"hybrid_attention"},
                    "motor_engine_decode_config": {"hybrid_attention"},
                },
            )
        )
        store_backend = self.kv_cache_store_config.backend if self.kv_cache_store_config is not None else None
        for kv_transfer_config in rules.kv_transfer_configs(effective).values():
            if kv_transfer_config is not None:
                with_store_connector_config(kv_transfer_config, store_backend)
        return effective

    def env_sections(self) -> dict[str, dict[str, Any]]:
        """env.json as the engines get it: ENGINE_ENV_DEFAULTS fill an engine section where neither it nor
        motor_common_env sets the variable."""
        sections = self.env.model_dump(mode="json")
        common = sections["motor_common_env"]
        for side in rules.SIDES:
            key = rules.engine_env_section(side)
            defaults = {name: value for name, value in ENGINE_ENV_DEFAULTS.items() if name not in common}
            sections[key] = {**defaults, **sections[key]}
        return sections


# The one list of the top-level keys Motor never reads: the effective user_config.json, `kvpool settings` and the
# loader's key lists are derived from it.
MOTOR_KVPOOL_OWN_KEYS = tuple(name for name, info in ServiceSettings.model_fields.items()
                              if MOTOR_KVPOOL_OWN in info.metadata)
