"""The blast radius of a change between two previews: which workloads roll and why, which objects Pulumi replaces,
and what happens to the KV pool and to in-flight requests. `python -m kvpool diff` prints it after the file listing
(the text: kvpool/cli/views/blast_radius_report.py).

Pure functions over parsed manifests ({file name: object}, as `python -m kvpool preview` writes them).

- A workload (Deployment, StatefulSet, DaemonSet, or a role of an InferServiceSet) rolls when its pod template
  changes. Each pod template carries `checksum/<input>` annotations, one digest per input its processes read at
  start and cannot reload; a changed digest is reported as "<input> changed", any other change by its path in the
  pod template (`containers[vllm].image`, `volumes[motor-config]`, `nodeSelector`...).
- An object is replaced (deleted, then created: its name is fixed) when a field changes that the Kubernetes
  provider cannot update in place (FORCE_NEW). A replaced workload is reported as replaced, not as a roll.
- The KV pool is emptied when a store workload that holds its metadata or memory restarts, keeps its contents when
  the store is Mooncake HA with the oplog (bench/results/mooncake-ha-failover*.md: 50000 of 50000 keys across each
  of two leader failovers; a put in flight at the kill returned success and lost 15 of its 16 keys), and loses a
  share when an engine pod that holds a pool segment restarts (Mooncake embedded store or standalone store process,
  MemCache LocalService); an engine restart also drops its in-flight requests.
- Engine instances that ran before (the old preview's `engines` output) roll in waves of the new preview's
  `rollout` output (kvpool/internal/rollout.py, the program's own arithmetic); an instance whose template is unchanged
  holds no wave up. A service set's engines roll as its operator decides.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from kvpool.internal.rollout import (
    ENGINES_OUTPUT,
    ROLLOUT_OUTPUT,
    previous_instances,
    waves,
)
from kvpool.policies import rules
from kvpool.policies.rules.service_set import (
    is_service_set,
    role_pod_template,
    service_set_roles,
)

CHECKSUM_PREFIX = "checksum/"
COMPONENT_LABEL = "app.kubernetes.io/component"
STORE_COMPONENT = "kv-store"  # kvpool/components/kv_store/common.py COMPONENT: every object of the store
ENGINE_COMPONENTS = ("prefill", "decode")  # kvpool/components/engine_pool.py: one per side
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

# Fields whose change makes the Kubernetes provider replace the object instead of updating it, from
# pulumi/pulumi-kubernetes provider/pkg/provider/diff.go (the `forceNew` tables read by `forceNewProperties`;
# metadataForceNewProperties adds .metadata.name and .metadata.namespace for every kind, which a preview shows as
# one file deleted and another created). Only the kinds motor-kvpool renders that have entries there; the others
# (NetworkPolicy, Role, ClusterRole, ServiceAccount, Namespace, InferServiceSet, ServiceMonitor, PrometheusRule) update
# in place; the pool dashboard is a ConfigMap, replaced when it changes (nothing mounts it).
# ConfigMap data and Secret data/stringData replace unless the provider sets enableConfigMapMutable /
# enableSecretMutable (off by default, and this program does not set them) and the object is not `immutable`.
FORCE_NEW: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps/v1", "Deployment"): ("spec.selector",),
    ("apps/v1", "DaemonSet"): ("spec.selector",),
    ("apps/v1", "StatefulSet"): (
        "spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.selector", "spec.serviceName",
        "spec.volumeClaimTemplates",
    ),
    ("v1", "Service"): ("spec.clusterIP",),
    ("v1", "PersistentVolumeClaim"): (
        "spec.accessModes", "spec.selector", "spec.storageClassName", "spec.volumeName",
    ),
    ("v1", "ConfigMap"): ("binaryData", "data"),
    ("v1", "Secret"): ("type", "data", "stringData"),
    ("rbac.authorization.k8s.io/v1", "RoleBinding"): ("roleRef",),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): ("roleRef",),
}
MUTABLE_SWITCH = {"ConfigMap": "enableConfigMapMutable", "Secret": "enableSecretMutable"}
KEYED_FIELDS = ("data", "binaryData", "stringData")  # reported per key: data[user_config.json]


@dataclass(frozen=True)
class Workload:
    key: tuple[str, str]  # (manifest file, role name or "")
    label: str  # "Deployment dev/vllm-p0", "InferServiceSet dev/vllm role prefill"
    name: str  # "vllm-p0", "vllm/prefill": what the summary line names
    component: str
    template: Mapping[str, Any]  # the pod template

    @property
    def containers(self) -> list[Mapping[str, Any]]:
        return list((self.template.get("spec") or {}).get("containers") or [])


@dataclass(frozen=True)
class Roll:
    workload: Workload
    inputs: tuple[str, ...]  # changed checksum/<input> names, e.g. ("engine-config",)
    input_changes: tuple[str, ...]  # "engine-config changed", "env added"
    paths: tuple[tuple[str, str], ...]  # (path in the pod template, its short name) of every other change

    @property
    def why(self) -> str:
        """The summary line's reason: the inputs, then the kinds of other changes (image, env, volumes...)."""
        return ", ".join(dict.fromkeys([*self.inputs, *(short for _, short in self.paths)]))


@dataclass(frozen=True)
class Replacement:
    label: str
    name: str  # "ConfigMap/motor-config"
    paths: tuple[str, ...]
    switch: str | None  # the provider setting that would update it in place instead


@dataclass(frozen=True)
class StoreRestart:
    workload: Workload
    how: str  # "rolls", "is replaced", "is deleted"
    why: str
    short: str  # the summary line's reason when the pool keeps its contents


@dataclass(frozen=True)
class RolePlan:
    side: str
    waves: tuple[tuple[str, ...], ...]  # the rolling instances, wave by wave
    running: int  # instances of the side serving before the update
    by_operator: bool = False  # a service set: its operator orders the roll

    @property
    def keep(self) -> int:
        """The fewest instances of the side that serve during the roll."""
        return self.running - max((len(wave) for wave in self.waves), default=0)


@dataclass
class BlastRadius:
    rolls: list[Roll] = field(default_factory=list)
    replaced: list[Replacement] = field(default_factory=list)
    created: list[Workload] = field(default_factory=list)
    deleted: list[Workload] = field(default_factory=list)
    pool_emptied: list[StoreRestart] = field(default_factory=list)
    pool_kept: list[StoreRestart] = field(default_factory=list)
    # (engine name, reason): an engine pod holding a pool segment restarts or goes away
    pool_shares_lost: list[tuple[str, str]] = field(default_factory=list)
    dropped_requests: list[str] = field(default_factory=list)  # engine names
    has_pool: bool = False
    role_plans: list[RolePlan] = field(default_factory=list)  # how each side's engines roll (when outputs are known)


# --- workloads -----------------------------------------------------------------------------------------------


def _labels(metadata: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return (metadata or {}).get("labels") or {}


def _object_label(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{obj.get('kind')} {namespace + '/' if namespace else ''}{metadata.get('name')}"


def workloads(objects: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], Workload]:
    """Every workload of a preview, keyed by (file, role); a service set's roles are workloads of their own."""
    found = {}
    for file, obj in sorted(objects.items()):
        kind, metadata = obj.get("kind"), obj.get("metadata") or {}
        if kind in WORKLOAD_KINDS:
            template = (obj.get("spec") or {}).get("template") or {}
            component = _labels(metadata).get(COMPONENT_LABEL) or _labels(template.get("metadata")).get(COMPONENT_LABEL)
            found[(file, "")] = Workload(
                (file, ""), _object_label(obj), str(metadata.get("name")), str(component or ""), template
            )
        elif is_service_set(obj):
            for role in service_set_roles(obj):
                role_name = str(role.get("name"))
                component = _labels(role.get("metadata")).get(COMPONENT_LABEL) or role_name
                template = role_pod_template(role)
                found[(file, role_name)] = Workload(
                    (file, role_name), f"{_object_label(obj)} role {role_name}", f"{metadata.get('name')}/{role_name}",
                    str(component), template,
                )
    return found


# --- what changed in a pod template ----------------------------------------------------------------------------


def _by_name(items: Iterable[Any]) -> dict[str, Any]:
    return {str(item.get("name")): item for item in items or [] if isinstance(item, Mapping)}


def _container_paths(list_name: str, old: list[Any], new: list[Any]) -> list[tuple[str, str]]:
    paths = []
    old_by, new_by = _by_name(old), _by_name(new)
    for name in [*new_by, *(name for name in old_by if name not in new_by)]:
        before, after = old_by.get(name), new_by.get(name)
        prefix = f"{list_name}[{name}]"
        if before is None or after is None:
            paths.append((prefix, list_name))
            continue
        for key in sorted(before.keys() | after.keys()):
            if before.get(key) == after.get(key):
                continue
            if key == "env":
                old_env, new_env = _by_name(before.get(key) or []), _by_name(after.get(key) or [])
                paths += [(f"{prefix}.env[{var}]", "env") for var in sorted(old_env.keys() | new_env.keys())
                          if old_env.get(var) != new_env.get(var)] or [(f"{prefix}.env", "env")]
            else:
                paths.append((f"{prefix}.{key}", key))
    return paths


def template_changes(
    old: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(checksum inputs as (input, "changed"|"added"|"removed"), other changes as (path, short name))."""
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    inputs, paths = [], []
    old_ann, new_ann = old_meta.get("annotations") or {}, new_meta.get("annotations") or {}
    for key in sorted(old_ann.keys() | new_ann.keys()):
        if old_ann.get(key) == new_ann.get(key):
            continue
        if key.startswith(CHECKSUM_PREFIX):
            how = "added" if key not in old_ann else "removed" if key not in new_ann else "changed"
            inputs.append((key[len(CHECKSUM_PREFIX):], how))
        else:
            paths.append((f"metadata.annotations[{key}]", "annotations"))
    for key in sorted((old_meta.keys() | new_meta.keys()) - {"annotations"}):
        before, after = old_meta.get(key) or {}, new_meta.get(key) or {}
        if before == after:
            continue
        if isinstance(before, Mapping) and isinstance(after, Mapping):
            paths += [(f"metadata.{key}[{k}]", key) for k in sorted(before.keys() | after.keys())
                      if before.get(k) != after.get(k)]
        else:
            paths.append((f"metadata.{key}", key))
    old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
    for key in sorted(old_spec.keys() | new_spec.keys(), key=lambda k: (k not in CONTAINER_LISTS, k)):
        before, after = old_spec.get(key), new_spec.get(key)
        if before == after:
            continue
        if key in CONTAINER_LISTS:
            paths += _container_paths(key, before or [], after or [])
        elif key == "volumes":
            old_by, new_by = _by_name(before or []), _by_name(after or [])
            paths += [(f"volumes[{name}]", "volumes") for name in [*new_by, *(n for n in old_by if n not in new_by)]
                      if old_by.get(name) != new_by.get(name)]
        else:
            paths.append((key, key))
    return inputs, paths


# --- replacements ----------------------------------------------------------------------------------------------


def _at(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj.get(part) if isinstance(obj, Mapping) else None
    return obj


def replaced_paths(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    """The force-new fields that differ between two versions of one object (same kind, name and namespace)."""
    paths = []
    for dotted in FORCE_NEW.get((str(new.get("apiVersion")), str(new.get("kind"))), ()):
        before, after = _at(old, dotted), _at(new, dotted)
        if before == after:
            continue
        if dotted in KEYED_FIELDS and isinstance(before or {}, Mapping) and isinstance(after or {}, Mapping):
            before, after = before or {}, after or {}
            paths += [f"{dotted}[{key}]" for key in sorted(before.keys() | after.keys())
                      if before.get(key) != after.get(key)]
        else:
            paths.append(dotted)
    return paths


# --- the KV pool -----------------------------------------------------------------------------------------------


def _env(container: Mapping[str, Any]) -> dict[str, Any]:
    return {e.get("name"): e.get("value") for e in container.get("env") or [] if isinstance(e, Mapping)}


def _is_zero_size(value: Any) -> bool:
    match = re.match(r"\s*(\d+(?:\.\d+)?)", str(value))
    return bool(match) and float(match.group(1)) == 0


def _config_file(objects: Mapping[str, Mapping[str, Any]], key: str) -> str | None:
    """The text of the first ConfigMap data entry named `key` (mooncake.json, user_config.json), None without one."""
    for obj in objects.values():
        text = (obj.get("data") or {}).get(key) if obj.get("kind") == "ConfigMap" else None
        if text:
            return text
    return None


def _json_object(text: str | None) -> Mapping[str, Any] | None:
    try:
        value = json.loads(text) if text else None
    except ValueError:
        return None
    return value if isinstance(value, Mapping) else None


def mooncake_segment_size(objects: Mapping[str, Mapping[str, Any]]) -> Any:
    """global_segment_size of the engines' mooncake.json (the kv-client ConfigMap), None when there is none."""
    client = _json_object(_config_file(objects, "mooncake.json"))
    return client.get("global_segment_size") if client is not None else None


def _user_config(objects: Mapping[str, Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """motor-config's user_config.json, what Motor's processes read; None when there is none or it does not parse."""
    return _json_object(_config_file(objects, "user_config.json"))


def pool_sides(objects: Mapping[str, Mapping[str, Any]]) -> frozenset[str] | None:
    """The sides whose engines have a store connector, read from motor-config's user_config.json; None when it names
    no engine's kv_transfer_config (every engine configured for a store is then taken to hold its share)."""
    user_config = _user_config(objects)
    try:
        configs = rules.kv_transfer_configs(user_config) if user_config is not None else {}
    except AttributeError:
        return None
    if all(config is None for config in configs.values()):
        return None
    return frozenset(side for side, config in configs.items() if rules.store_connector_backends(config))


def standalone_store_runs(objects: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether Motor's node manager starts a Mooncake store process in each engine pod: read as it reads it, from
    user_config.json's kv_cache_store_config."""
    user_config = _user_config(objects) or {}
    return rules.runs_standalone_store(user_config.get("kv_cache_store_config"))


def engine_pool_share(workload: Workload, segment_size: Any, sides: frozenset[str] | None = None,
                      standalone: bool = False) -> str | None:
    """Why the engine's pod holds part of the pool's memory, or None when it holds none (`sides`: those whose
    engines have a store connector; an engine without one joins no pool whatever its env says; `standalone`: Motor's
    node manager runs a store process in each engine pod)."""
    if sides is not None and workload.component not in sides:
        return None
    if standalone:
        return "its standalone Mooncake store process holds a pool segment"
    backends = {_env(c).get("KV_STORE_BACKEND") for c in workload.containers}
    held = next((facts for facts in rules.BACKENDS.values() if facts.name in backends and facts.engine_pool_share), None)
    if held is None:  # a node's worker holds the memory (Yuanrong); or no pool
        return None
    if held is rules.MOONCAKE and segment_size is not None and _is_zero_size(segment_size):
        return None
    return held.engine_pool_share


def _is_mooncake_ha(workload: Workload) -> bool:
    args = [str(a) for c in workload.containers for a in (c.get("args") or [])]
    return "--enable_ha=true" in args and "--enable_oplog=true" in args


def store_restart(old: Workload, new: Workload | None, how: str) -> tuple[bool, str, str]:
    """(pool emptied?, why, why in a few words) when store workload `old` restarts; how is "rolls", "is replaced"
    or "is deleted" (the last two stop every pod at once)."""
    containers = old.containers
    names = {str(c.get("name")) for c in containers}
    commands = {str((c.get("command") or [""])[0]) for c in containers}
    all_at_once = how != "rolls"
    if "mooncake_master" in commands or "mooncake-master" in names:
        if _is_mooncake_ha(old) and (new is None or _is_mooncake_ha(new)):
            if all_at_once:
                return True, "every Mooncake master stops at once, so Mooncake HA cannot hand the metadata over", ""
            # bench/results/mooncake-ha-failover.md and -during-writes.md (mooncake_master 0.3.13, 50000 keys of
            # 4 KiB); the oplog's collection is not measured (nothing removed), Mooncake issues 3774, 3561 and 2188.
            why = (
                "Mooncake HA (--enable_ha, --enable_oplog) kept 50000 of 50000 keys across each of two leader "
                "failovers; a put in flight at the kill returned success and lost 15 of its 16 keys"
            )
            return False, why, "Mooncake HA"
        return True, "the Mooncake master holds the pool's metadata, without HA", ""
    if "etcd" in names:
        if all_at_once:
            return True, "every etcd member stops at once: the store loses its cluster state", ""
        return False, "etcd members restart one at a time and keep their data volumes", "etcd rolls member by member"
    if "memcache-meta-service" in names:
        return True, "the MemCache MetaService holds the pool's metadata, without HA", ""
    if "datasystem-worker" in names:
        return True, "the datasystem workers hold the pool's memory", ""
    return True, "a KV store workload restarts", ""


# --- the whole analysis ----------------------------------------------------------------------------------------


def _has_pool(found: Mapping[tuple[str, str], Workload]) -> bool:
    """A store workload, or engines configured for a pool (another stack's store: target_stack)."""
    return any(
        w.component == STORE_COMPONENT or any(_env(c).get("KV_STORE_BACKEND") for c in w.containers)
        for w in found.values()
    )


def mutable_kinds(provider_config: Mapping[str, str]) -> frozenset[str]:
    """The kinds whose data the provider updates in place, from the stack's `kubernetes:*` config."""
    return frozenset(kind for kind, switch in MUTABLE_SWITCH.items() if provider_config.get(f"kubernetes:{switch}") == "true")


# --- how the engines roll --------------------------------------------------------------------------------------


def role_plans(rolls: list[Roll], old_outputs: Mapping[str, Any], new_outputs: Mapping[str, Any]) -> list[RolePlan]:
    """Per side whose engines roll: the waves the Pulumi engine runs them in, as the program chains them."""
    plans = []
    wave_sizes = new_outputs.get(ROLLOUT_OUTPUT)
    for side in ENGINE_COMPONENTS:
        side_rolls = [roll.workload for roll in rolls if roll.workload.component == side]
        rolling = {workload.name for workload in side_rolls}
        if any(workload.key[1] for workload in side_rolls):  # a role of a service set: its operator rolls it
            plans.append(RolePlan(side, (tuple(sorted(rolling)),), 0, by_operator=True))
            continue
        if not rolling or not isinstance(wave_sizes, Mapping) or side not in wave_sizes:
            continue  # nothing rolls, or a preview from before the `rollout` output: the order is not known
        before = previous_instances(old_outputs, side)
        now = previous_instances(new_outputs, side)
        running = [name for name in (new_outputs.get(ENGINES_OUTPUT) or {}).get(side, []) if name in before & now]
        size = int(wave_sizes[side]["max_unavailable_instances"])
        chained = [tuple(name for name in wave if name in rolling) for wave in waves(running, size)]
        plans.append(RolePlan(side, tuple(wave for wave in chained if wave), len(running)))
    return plans


def blast_radius(
    old: Mapping[str, Mapping[str, Any]],
    new: Mapping[str, Mapping[str, Any]],
    mutable: frozenset[str] = frozenset(),
    old_outputs: Mapping[str, Any] | None = None,
    new_outputs: Mapping[str, Any] | None = None,
) -> BlastRadius:
    """What applying `new` over `old` restarts, replaces and loses. Both map a manifest file to its object;
    `mutable`: kinds whose data the provider updates in place (mutable_kinds); `old_outputs`, `new_outputs`: the
    previews' outputs.json, which say how engines roll (none given: not reported)."""
    result = BlastRadius()
    old_workloads, new_workloads = workloads(old), workloads(new)
    result.has_pool = _has_pool(old_workloads) or _has_pool(new_workloads)
    segment_size = mooncake_segment_size(old)  # the running pods are the old ones
    sides, standalone = pool_sides(old), standalone_store_runs(old)

    replaced_files = set()
    for file in sorted(old.keys() & new.keys()):
        paths = replaced_paths(old[file], new[file])
        if paths:
            replaced_files.add(file)
            kind = str(new[file].get("kind"))
            # An `immutable` ConfigMap or Secret is replaced whatever the provider's settings.
            data_only = not new[file].get("immutable") and all(p.split("[")[0] in KEYED_FIELDS for p in paths)
            switch = MUTABLE_SWITCH.get(kind) if data_only else None
            if switch and kind in mutable:
                continue  # the provider updates this data in place
            result.replaced.append(
                Replacement(_object_label(new[file]), f"{kind}/{(new[file].get('metadata') or {}).get('name')}",
                            tuple(paths), switch)
            )

    restarts: list[tuple[Workload, Workload | None, str]] = []  # (old, new, how)
    for key in sorted(old_workloads.keys() | new_workloads.keys()):
        before, after = old_workloads.get(key), new_workloads.get(key)
        if before is None:
            result.created.append(after)
        elif after is None:
            result.deleted.append(before)
            restarts.append((before, None, "is deleted"))
        elif key[0] in replaced_files and not key[1]:
            restarts.append((before, after, "is replaced"))
        elif before.template != after.template:
            inputs, paths = template_changes(before.template, after.template)
            result.rolls.append(Roll(
                after, tuple(name for name, _ in inputs), tuple(f"{name} {how}" for name, how in inputs), tuple(paths),
            ))
            restarts.append((before, after, "rolls"))

    for before, after, how in restarts:
        if before.component == STORE_COMPONENT:
            emptied, why, short = store_restart(before, after, how)
            (result.pool_emptied if emptied else result.pool_kept).append(StoreRestart(before, how, why, short))
        elif before.component in ENGINE_COMPONENTS:
            result.dropped_requests.append(before.name)
            share = engine_pool_share(before, segment_size, sides, standalone)
            if share:
                result.pool_shares_lost.append((before.name, share))
    if old_outputs is not None and new_outputs is not None:
        result.role_plans = role_plans(result.rolls, old_outputs, new_outputs)
    return result
