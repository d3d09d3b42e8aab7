"""Which pods a single change restarts: exactly the workloads whose processes read the changed input at start.

A pod restarts when its workload's pod template changes (Kubernetes rolls it), so each row compares every
workload's template before and after one change of a 2P+2D Mooncake service (plus one MemCache, one UCM stack).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Callable

import pytest

from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.views.manifests import kubernetes_objects
from kvpool.internal.restarts import RESTARTS
from tests.program_runs import PROJECT, PROJECT_DIR, Rendered, deployer_folder, render, stack_values

WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")
ENGINES = {"vllm-p0", "vllm-p1", "vllm-d0", "vllm-d1"}
PREFILL, DECODE = {"vllm-p0", "vllm-p1"}, {"vllm-d0", "vllm-d1"}
STORE = "mindie-motor-kv-store"
CONTROL = {"mindie-motor-controller", "mindie-motor-coordinator"}


def templates(rendered: Rendered) -> dict[str, Any]:
    return {name: body["spec"]["template"] for (kind, name), body in rendered.objects.items() if kind in WORKLOAD_KINDS}


def restarted(before: Rendered, after: Rendered) -> set[str]:
    """Workloads present before and after whose pod template changed."""
    old, new = templates(before), templates(after)
    return {name for name in old.keys() & new.keys() if old[name] != new[name]}


def two_by_two(stack: str = "mooncake-layerwise") -> dict[str, Any]:
    values = stack_values(stack)
    values["motor_deploy_config"].update(p_instances_num=2, d_instances_num=2)
    return values


def with_scripts(values: dict[str, Any], motor_checkout: Path, root: Path, marker: str = "", only: str | None = None):
    """`values` deploying a Motor deployer folder of our own at `root` (each file names itself), so script contents
    can change: every file gets `marker`, or only the file of motor-config key `only`."""
    return {**values, "motor_deployer_dir": str(deployer_folder(root, motor_checkout, marker, only))}


def change(values: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    changed = copy.deepcopy(values)
    edit(changed)
    return changed


def prefill_engine(values):
    return values["motor_engine_prefill_config"]["engine_config"]


def decode_engine(values):
    return values["motor_engine_decode_config"]["engine_config"]


# case -> (its row of kvpool/internal/restarts.py, the change, the workloads that roll)
CATALOGUE: dict[str, tuple[str, Callable[[dict], None], set[str]]] = {
    "identical re-run": ("nothing", lambda v: None, set()),
    # Motor's controller hot-reloads motor-config: a new instance starts, nothing else restarts
    "decode 2 -> 3": ("nothing", lambda v: v["motor_deploy_config"].update(d_instances_num=3), set()),
    "prefill gpu_memory_utilization": ("engine-config", lambda v: prefill_engine(v).update(gpu_memory_utilization=0.8), PREFILL),
    "decode max_model_len": ("engine-config", lambda v: decode_engine(v).update(max_model_len=4096), DECODE),
    "prefill env var": ("side-env", lambda v: v.setdefault("env", {}).setdefault("motor_engine_prefill_env", {}).update(HCCL_BUFFSIZE="512"), PREFILL),
    "common env var": ("common-env", lambda v: v.setdefault("env", {}).setdefault("motor_common_env", {}).update(LOG_LEVEL="debug"), ENGINES | CONTROL),
    "image": ("image", lambda v: v["motor_deploy_config"].update(image_name="registry.local/motor:3.0.1"), ENGINES | CONTROL | {STORE}),
    "store eviction ratio": ("store-server", lambda v: v["kv_cache_store_config"].update(eviction_ratio=0.25), {STORE}),
    # the engines' client file names the master's port: they must re-read it
    "store port": ("store-ports", lambda v: v["kv_cache_store_config"].update(port=50188), {STORE} | ENGINES),
    "controller config": ("nothing", lambda v: v.update(motor_controller_config={"logging_config": {"log_level": "DEBUG"}}), set()),
    "coordinator config": ("nothing", lambda v: v.update(motor_coordinator_config={"logging_config": {"log_level": "DEBUG"}}), set()),
    "prefill node selector": ("node-selectors", lambda v: v["motor_deploy_config"].update(prefill_node_selector={"pool": "a"}), PREFILL),
    "store node selector": ("node-selectors", lambda v: v["motor_deploy_config"].update(kv_pool_node_selector={"pool": "kv"}), {STORE}),
}


@pytest.fixture(scope="module")
def baseline() -> Rendered:
    return render(two_by_two(), stack="mooncake-layerwise")


@pytest.mark.parametrize("row", CATALOGUE)
def test_a_change_restarts_exactly_the_pods_that_read_it(row: str, baseline: Rendered) -> None:
    _, edit, expected = CATALOGUE[row]
    after = render(change(two_by_two(), edit), stack="mooncake-layerwise")
    assert restarted(baseline, after) == expected


def test_scaling_out_only_adds_the_new_instance(baseline: Rendered) -> None:
    after = render(change(two_by_two(), CATALOGUE["decode 2 -> 3"][1]), stack="mooncake-layerwise")
    assert set(templates(after)) - set(templates(baseline)) == {"vllm-d2"}


def test_a_motor_script_change_restarts_every_motor_pod_but_not_the_store(motor_checkout: Path, tmp_path: Path) -> None:
    before = render(with_scripts(two_by_two(), motor_checkout, tmp_path / "a"), stack="mooncake-layerwise")
    after = render(with_scripts(two_by_two(), motor_checkout, tmp_path / "b", marker=" v2"), stack="mooncake-layerwise")
    assert restarted(before, after) == ENGINES | CONTROL


CONDUCTOR = "mindie-motor-kv-conductor"
# A Motor upgrade that changes one file of motor-config (key) rolls the roles that run it: (stack, key) -> workloads.
# kv-affinity is rendered at 2P+1D (its own counts), the others at 2P+2D.
MOTOR_UPGRADES: dict[tuple[str, str], set[str]] = {
    ("mooncake-layerwise", "controller.sh"): {"mindie-motor-controller"},
    ("mooncake-layerwise", "coordinator.sh"): {"mindie-motor-coordinator"},
    ("mooncake-layerwise", "engine.sh"): ENGINES,
    ("mooncake-layerwise", "boot.sh"): ENGINES | CONTROL,
    ("mooncake-layerwise", "common.sh"): ENGINES | CONTROL,
    ("mooncake-layerwise", "probe.py"): ENGINES | CONTROL,
    ("mooncake-layerwise", "prestop.py"): ENGINES,
    ("mooncake-layerwise", "hccl_tools.py"): ENGINES,
    # engine.sh rebuilds a Mooncake client file with it; MemCache engines never run it
    ("mooncake-layerwise", "mooncake_config.py"): ENGINES,
    ("dev", "mooncake_config.py"): set(),
    ("kv-affinity", "mooncake_config.py"): {"vllm-p0", "vllm-p1", "vllm-d0", CONDUCTOR},
    ("kv-affinity", "kv_conductor.sh"): {CONDUCTOR},
    # the store runs its own binaries; these are deploy.py's files for roles this project does not boot
    ("mooncake-layerwise", "kv_cache_store.sh"): set(),
    ("mooncake-layerwise", "kv_store_backends.mooncake.mooncake.sh"): set(),
    ("mooncake-layerwise", "mf_store.sh"): set(),
    ("mooncake-layerwise", "all_combine_in_single_container.sh"): set(),
    # a MemCache service's conf is ours (checksum/kv-client), Motor's template is never read
    ("dev", "kv_store_backends.memcache.mmc-local.conf"): set(),
}


@pytest.mark.parametrize(("stack", "key"), MOTOR_UPGRADES)
def test_a_motor_upgrade_rolls_only_the_roles_that_run_the_changed_file(
    stack: str, key: str, motor_checkout: Path, tmp_path: Path
) -> None:
    values = two_by_two(stack) if stack != "kv-affinity" else stack_values(stack)
    before = render(with_scripts(values, motor_checkout, tmp_path / "a"), stack=stack)
    after = render(with_scripts(values, motor_checkout, tmp_path / "b", marker=" v2", only=key), stack=stack)
    assert restarted(before, after) == MOTOR_UPGRADES[stack, key]


def test_memcache_local_service_mode_restarts_the_engines() -> None:
    values = two_by_two("dev")
    before = render(values, stack="dev")
    after = render(change(values, lambda v: v["kv_cache_store_config"].update(local_service_mode="standalone")), stack="dev")
    assert restarted(before, after) == ENGINES


def test_memcache_meta_service_port_restarts_the_store_and_the_engines() -> None:
    values = two_by_two("dev")
    before = render(values, stack="dev")
    after = render(change(values, lambda v: v["kv_cache_store_config"].update(config_store_port=50189)), stack="dev")
    assert restarted(before, after) == {STORE} | ENGINES


def test_mooncake_ha_replicas_restart_nothing_running() -> None:
    values = stack_values("mooncake-ha")
    before = render(values, stack="mooncake-ha")
    after = render(change(values, lambda v: v["kv_cache_store_config"]["ha"].update(master_replicas=3)), stack="mooncake-ha")
    assert restarted(before, after) == set()


def test_ucm_storage_size_restarts_nothing() -> None:
    """A bigger claim is resized in place; the prefill pods keep their mount."""
    values = stack_values("ucm")
    before = render(values, stack="ucm")

    def grow(v):
        v["motor_deploy_config"]["storage"][0]["size"] = "1Ti"

    after = render(change(values, grow), stack="ucm")
    assert restarted(before, after) == set()


def secret_config(values: dict[str, Any], token: str) -> StackConfig:
    config = {f"{PROJECT}:{key}": value if isinstance(value, str) else json.dumps(value)
              for key, value in values.items()}
    config[f"{PROJECT}:secret_env"] = json.dumps({"HF_TOKEN": token})
    return StackConfig(project=PROJECT, stack="dev", values=config, secret_keys=[f"{PROJECT}:secret_env"])


def test_a_secret_env_change_restarts_every_pod_that_loads_it() -> None:
    values = stack_values("dev")
    runs = [run_program(PROJECT_DIR, secret_config(values, token)) for token in ("hf_one", "hf_two")]
    before, after = (Rendered(run, {(o.kind, o.name): o.body for o in kubernetes_objects(run.resources)}) for run in runs)
    assert restarted(before, after) == {"vllm-p0", "vllm-d0"} | CONTROL
    annotation = templates(after)["vllm-p0"]["metadata"]["annotations"]["checksum/secret-env"]
    assert "hf_two" not in str(templates(after)) and len(annotation) == 64


# Rows of kvpool/internal/restarts.py proven by tests of their own rather than by a CATALOGUE case.
PROVEN_APART = {
    "local-service-mode": (test_memcache_local_service_mode_restarts_the_engines,),
    "store-ports": (test_memcache_meta_service_port_restarts_the_store_and_the_engines,),
    "nothing-running": (test_mooncake_ha_replicas_restart_nothing_running, test_ucm_storage_size_restarts_nothing),
    "secret-env": (test_a_secret_env_change_restarts_every_pod_that_loads_it,),
}


def test_every_row_of_the_restart_catalogue_is_rendered() -> None:
    """docs/restarts.md says nothing that no render here shows (its Motor-file rows: MOTOR_UPGRADES)."""
    assert {row for row, _, _ in CATALOGUE.values()} | set(PROVEN_APART) == set(RESTARTS)
