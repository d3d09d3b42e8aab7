"""Motor's engine server accepts the configuration every engine reads, and hands vLLM exactly the kv_transfer_config
the preview shows (the pod annotation motor-kvpool.io/kv-transfer-config), with the parallel sizes the preview's
user_config.json gives: on every engine instance of every example stack, and on every connector layout the settings
admit. Motor's code runs as tests/conformance/engine_server.py describes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator

from kvpool.components.engine_pool import KV_TRANSFER_ANNOTATION
from kvpool.errors import SettingsError
from kvpool.internal.connectors import INSTANCE_ID, parallel_sizes
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.conformance.engine_server import EngineCase, EngineStart, start_engines
from tests.conformance.motor_boot import container_env
from tests.conformance.test_motor_boot import STACKS, pod_spec, user_config_of
from tests.program_runs import Rendered, render
from tests.service_configs import engine, memcache_pool, mooncake_pool

# The example stacks whose engines are one Deployment per instance (the service set's are its roles' templates).
WORKLOAD_PREFIX = {"prefill": "vllm-p", "decode": "vllm-d"}
# Parallel sizes Motor hands vLLM (`--name value`), by Motor's internal name (kvpool/internal/connectors.py).
PARALLEL_ARGUMENTS = {"dp_size": "data-parallel-size", "tp_size": "tensor-parallel-size", "pp_size": "pipeline-parallel-size"}


def with_instance_id(value: Any, instance_id: int) -> Any:
    """The previewed configuration with INSTANCE_ID replaced by the id Motor's controller gave the instance."""
    if isinstance(value, dict):
        return {key: with_instance_id(item, instance_id) for key, item in value.items()}
    if isinstance(value, list):
        return [with_instance_id(item, instance_id) for item in value]
    return str(instance_id) if value == INSTANCE_ID else value


def engine_pods(rendered: Rendered) -> Iterator[tuple[str, dict[str, Any]]]:
    """(side, pod template) of every engine instance: each vllm-p<i>/vllm-d<i> Deployment, or a service set's role."""
    for side, prefix in WORKLOAD_PREFIX.items():
        names = [name for name in rendered.names("Deployment") if name.startswith(prefix)]
        if names:
            yield from ((side, rendered.get("Deployment", name)["spec"]["template"]) for name in names)
        else:
            yield side, {"metadata": {"annotations": _service_set_annotations(rendered, f"{prefix}0")},
                         "spec": pod_spec(rendered, f"{prefix}0")}


def _service_set_annotations(rendered: Rendered, workload: str) -> dict[str, str]:
    from kvpool.policies.rules.service_set import (
        is_service_set,
        role_pod_template,
        service_set_roles,
    )
    from tests.conformance.test_motor_boot import ROLES

    role_name = next(role for role, (name, _) in ROLES.items() if name == workload)
    roles = [role for body in rendered.objects.values() if is_service_set(body) for role in service_set_roles(body)]
    return next(role_pod_template(role) for role in roles if role["name"] == role_name)["metadata"]["annotations"]


def engine_cases(rendered: Rendered) -> list[tuple[EngineCase, dict[str, Any]]]:
    """(case, its pod template) per engine instance. Instance ids run in the reverse of the preview's order, decode
    first: Motor's controller numbers instances as they register, and the preview must not depend on that order."""
    user_config = rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"]
    pods = list(engine_pods(rendered))
    cases = []
    for instance_id, (side, template) in enumerate(reversed(pods)):
        container = next(c for c in template["spec"]["containers"] if c["name"] == "vllm")
        cases.append((EngineCase(user_config, side, instance_id, container_env(container)), template))
    return list(reversed(cases))


def previewed_mismatches(rendered: Rendered, case: EngineCase, template: dict[str, Any], start: EngineStart) -> list[str]:
    """What Motor's engine server derived differently from the preview, field by field; [] when all agree."""
    if start.error is not None:
        return [f"{case.role} instance {case.instance_id}: Motor's engine server failed: {start.error}"]
    problems = []
    annotation = template["metadata"]["annotations"].get(KV_TRANSFER_ANNOTATION)
    previewed = None if annotation is None else with_instance_id(json.loads(annotation), case.instance_id)
    if start.kv_transfer_config != previewed:
        problems.append(f"{case.role} instance {case.instance_id}: kv_transfer_config: Motor {start.kv_transfer_config}"
                        f" != preview {previewed}")
    section = user_config_of(rendered)[rules.engine_section(case.role)]["engine_config"]
    for size, value in parallel_sizes(section).items():
        if start.args[PARALLEL_ARGUMENTS[size]] != str(value):
            problems.append(f"{case.role}: --{PARALLEL_ARGUMENTS[size]} {start.args[PARALLEL_ARGUMENTS[size]]} != {value}")
    return problems


def motor_mismatches(rendered: dict[str, Rendered], motor_build: Path, folder: Path) -> dict[str, list[str]]:
    """Per stack, what Motor's engine server derived differently from the preview, for all stacks in one run."""
    cases = [(stack, case, template) for stack, run in rendered.items() for case, template in engine_cases(run)]
    starts = start_engines([case for _, case, _ in cases], motor_build, folder)
    found: dict[str, list[str]] = {stack: [] for stack in rendered}
    for (stack, case, template), start in zip(cases, starts, strict=True):
        found[stack] += previewed_mismatches(rendered[stack], case, template, start)
    return found


def test_every_engine_of_every_example_stack_starts_with_the_previewed_config(rendered, motor_build, tmp_path) -> None:
    assert set(rendered) == set(STACKS)
    counts = {stack: len(engine_cases(run)) for stack, run in rendered.items()}
    assert counts == {"dev": 2, "mooncake-layerwise": 2, "mooncake-ha": 2, "yuanrong": 2, "ucm": 3, "service-set": 2,
                      "service-a": 2, "service-b": 2, "kv-affinity": 3}
    assert motor_mismatches(rendered, motor_build, tmp_path) == {stack: [] for stack in STACKS}


def test_a_store_connector_without_extra_config_starts(motor_build, tmp_path) -> None:
    """service-a's and service-b's AscendStoreConnector carry no kv_connector_extra_config, where Motor's engine
    server writes lookup_rpc_port; motor-config's user_config.json carries it, with the pool's backend."""
    rendered = render(without_store_extra_config(memcache_pool()))
    store = user_config_of(rendered)["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"][
        "kv_connector_extra_config"]["connectors"][1]
    assert store == {"kv_connector": "AscendStoreConnector", "kv_role": "kv_producer",
                     "kv_connector_extra_config": {"backend": "memcache"}}
    assert motor_mismatches({"svc": rendered}, motor_build, tmp_path) == {"svc": []}


def without_store_extra_config(service: dict[str, Any]) -> dict[str, Any]:
    service = copy.deepcopy(service)
    for side in rules.SIDES:
        connectors = service[rules.engine_section(side)]["engine_config"]["kv_transfer_config"][
            "kv_connector_extra_config"]["connectors"]
        connectors[1].pop("kv_connector_extra_config", None)
    return service


def test_the_harness_reports_motors_refusal(motor_build, tmp_path) -> None:
    """Motor's own refusal reaches the report: the file as motor-config held it before the fix, whose store
    connector has no kv_connector_extra_config."""
    rendered = render(without_store_extra_config(memcache_pool()))
    config_map = rendered.get("ConfigMap", "motor-config")
    user_config = json.loads(config_map["data"]["user_config.json"])
    for side in rules.SIDES:
        del user_config[rules.engine_section(side)]["engine_config"]["kv_transfer_config"][
            "kv_connector_extra_config"]["connectors"][1]["kv_connector_extra_config"]
    objects = {**rendered.objects, ("ConfigMap", "motor-config"): {
        **config_map, "data": {**config_map["data"], "user_config.json": json.dumps(user_config)}}}
    found = motor_mismatches({"svc": Rendered(rendered.run, objects)}, motor_build, tmp_path)
    assert found == {"svc": [
        "prefill instance 1: Motor's engine server failed: ValueError: Failed to process kv_transfer_config: "
        "'kv_connector_extra_config'",
        "decode instance 0: Motor's engine server failed: ValueError: Failed to process kv_transfer_config: "
        "'kv_connector_extra_config'",
    ]}


# ---- every connector layout the settings admit -------------------------------------------------------------------

TRANSFER_CONNECTORS = rules.DISPATCH_CONNECTORS
STORE_CONNECTORS = (rules.STORE_CONNECTOR, "MooncakeConnectorStoreV1", rules.UCM_CONNECTOR)
UCM_STORE = {"ucm_connectors": [{"ucm_connector_name": "UcmPipelineStore", "ucm_connector_config": {
    "store_pipeline": "Cache|Posix", "storage_backends": "/mnt/ucm", "cache_buffer_capacity_gb": 8, "posix_capacity_gb": 32}}]}
UCM_VOLUME = {"type": "pvc", "storage_class_name": "nfs-rwx-sc", "access_mode": "ReadWriteMany", "size": "64Gi",
              "mount_path": "/mnt/ucm"}


def _connector(name: str, role: str, extra: dict[str, Any] | None, kv_port: str | None = None) -> dict[str, Any]:
    connector: dict[str, Any] = {"kv_connector": name}
    if kv_port is not None:
        connector["kv_port"] = kv_port
    if extra is not None:
        connector["kv_connector_extra_config"] = extra
    return connector


def _store_extra(store: str, backend: str, with_extra: bool) -> dict[str, Any] | None:
    if store == rules.UCM_CONNECTOR:
        return copy.deepcopy(UCM_STORE)  # UCM's own configuration lives there: never optional
    if not with_extra:
        return None
    return {"backend": backend} if store == rules.STORE_CONNECTOR else {"register_buffer": True}


def layouts() -> Iterator[tuple[str, dict[str, Any]]]:
    """(name, stack values) of every connector layout: MultiConnector with each transfer and each store connector,
    with and without kv_connector_extra_config on each; each connector alone; a store connector as connectors[0];
    a transfer connector as connectors[1]; three connectors; no kv_transfer_config; vLLM's dashed parallel keys."""
    for transfer in TRANSFER_CONNECTORS:
        for store in STORE_CONNECTORS:
            for transfer_extra in (False, True):
                for store_extra in (False, True):
                    if store == rules.UCM_CONNECTOR and not store_extra:
                        continue
                    name = f"multi-{transfer}-{store}-{'x' if transfer_extra else 'o'}{'x' if store_extra else 'o'}"
                    yield name, _multi(transfer, store, transfer_extra, store_extra)
        yield f"single-{transfer}", _single(transfer)
    for store in STORE_CONNECTORS:
        yield f"single-{store}", _single(store)
        yield f"multi-store-first-{store}", _multi_of(lambda role, store=store: [
            _connector(store, role, _store_extra(store, "mooncake", True)),
            _connector("MooncakeConnectorV1", role, None, "30001")])
    yield "multi-transfer-second", _multi_of(lambda role: [
        _connector("MooncakeConnectorV1", role, None, "30001"), _connector("MooncakeLayerwiseConnector", role, None)])
    yield "multi-three", _multi_of(lambda role: [
        _connector("MooncakeConnectorV1", role, None, "30001"), _connector(rules.STORE_CONNECTOR, role, None),
        _connector("MooncakeConnectorStoreV1", role, None)])
    plain = _single("MooncakeConnectorV1")
    for side in rules.SIDES:
        del plain[rules.engine_section(side)]["engine_config"]["kv_transfer_config"]
    yield "no-kv-transfer-config", plain
    dashed = _multi("MooncakeConnectorV1", rules.STORE_CONNECTOR, False, False)
    dashed["motor_deploy_config"].update(p_pod_npu_num=4, d_pod_npu_num=4)
    dashed["motor_engine_prefill_config"]["engine_config"]["tensor-parallel-size"] = 4
    dashed["motor_engine_decode_config"]["engine_config"]["data-parallel-size"] = 2
    yield "dashed-parallel-sizes", dashed


def _multi(transfer: str, store: str, transfer_extra: bool, store_extra: bool) -> dict[str, Any]:
    backend = "mooncake"

    def connectors(role: str) -> list[dict[str, Any]]:
        extra = {"send_type": "PUT"} if transfer_extra else None
        return [_connector(transfer, role, extra, "30001"), _connector(store, role, _store_extra(store, backend, store_extra))]

    service = _multi_of(connectors)
    if store == rules.UCM_CONNECTOR:  # UCM runs on prefill only (decode keeps the transfer connector), on a volume
        decode = service["motor_engine_decode_config"]["engine_config"]
        decode["kv_transfer_config"] = connectors("kv_consumer")[0]
        service["motor_deploy_config"].update(storage=[dict(UCM_VOLUME)], dshm_size="16Gi")
    return service


def _multi_of(connectors) -> dict[str, Any]:
    service = mooncake_pool()
    for side in rules.SIDES:
        service[rules.engine_section(side)] = engine(rules.ROLE_BY_SIDE[side], connectors(rules.ROLE_BY_SIDE[side]))
        del service[rules.engine_section(side)]["engine_config"]["kv_transfer_config"]["kv_role"]
    return service


def _single(name: str) -> dict[str, Any]:
    service = mooncake_pool()
    for side in rules.SIDES:
        extra = copy.deepcopy(UCM_STORE) if name == rules.UCM_CONNECTOR else None
        service[rules.engine_section(side)]["engine_config"]["kv_transfer_config"] = _connector(name, "", extra, "30001")
    return service


LAYOUTS = dict(layouts())


def admitted_layouts() -> dict[str, dict[str, Any]]:
    admitted = {}
    for name, service in LAYOUTS.items():
        try:
            load_from_pulumi_config(copy.deepcopy(service), "svc")
        except SettingsError:
            continue
        admitted[name] = service
    return admitted


def test_every_connector_layout_the_settings_admit_starts_with_the_previewed_config(motor_build, tmp_path) -> None:
    admitted = admitted_layouts()
    rendered = {name: render(copy.deepcopy(service)) for name, service in admitted.items()}
    found = motor_mismatches(rendered, motor_build, tmp_path)
    assert {name: problems for name, problems in found.items() if problems} == {}
    assert len(LAYOUTS) == 54
    assert sorted(set(LAYOUTS) - set(admitted)) == REFUSED_LAYOUTS


# Layouts the settings refuse, each because Motor would: its dispatch whitelist refuses a store connector as the
# transfer connector, UCM belongs in connectors[1], and its engine server refuses the last two (kvpool/policies/rules,
# check_engine_server_layout).
REFUSED_LAYOUTS = sorted([
    "multi-store-first-AscendStoreConnector", "multi-store-first-MooncakeConnectorStoreV1",
    "multi-store-first-UCMConnector", "single-AscendStoreConnector", "single-MooncakeConnectorStoreV1",
    "single-UCMConnector", "multi-transfer-second", "no-kv-transfer-config",
])
