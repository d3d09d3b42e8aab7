"""Issue 45 §1, container by container: with every env section that reaches a Motor container (motor_common_env, each
role's own section, and secret_env, which the controller, the coordinator and the engines load with envFrom) holding
every shell road of tests/hostile/shell_roads.py, each Motor container of the kv-affinity stack (the one that runs
every role: controller, coordinator, prefill and decode engines, KV conductor) is booted as its pod would boot it
(tests/conformance/motor_boot.py): its own command (`/bin/bash -c "source .../boot.sh"`, Motor's boot.sh with the
rendered motor-config) with its literal env as the kubelet resolves it, then each of its exec probes and its preStop
hook in the same pod, once as root and once as nobody. No payload may create its marker, and every process the
container starts (Motor's role process, the conductor binary, the python3 each probe and preStop script runs) must
see each hostile value byte for byte as the kubelet's expansion gives it (tests/kubelet_env.py). One boot per role
and user carries every road at once; the harness's own check makes a script evaluate one and change another.

As nobody the pod is the kubelet's for a non-root user (the pod's fsGroup on the ConfigMap volume and as a
supplementary group) on Motor's image, where /usr/local/Ascend is root's: Motor's common.sh cannot create
CONFIG_PATH and its scripts go on without the copies they make there; every process still starts.

The store's containers are not booted here: none starts with bash. Mooncake's master runs its binary with no shell;
MemCache's meta service and YuanRong's worker run `/bin/sh -c` with fixed text (memcache.META_COMMAND,
yuanrong.WORKER_COMMAND: tests/test_motor_env_shell.py test_no_setting_reaches_a_shell_command_string), and
motor_boot lays out no store image (the meta command writes /tmp/mmc-meta.conf, which the boot does not isolate, and
execs MemCache's MetaService or the YuanRong wheel's datasystem_worker, for which it has no stubs).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kvpool.internal.motor_config import MOTOR_CONFIG_NAME
from kvpool.internal.pod_layout import CONFIGMAP_PATH, MOTOR_CONF_DIR
from tests.conformance.motor_boot import Boot, container_env
from tests.conformance.test_motor_boot import ROLES, boot_role, pod_spec, secrets
from tests.hostile.shell_roads import NOBODY, folder_both_can_write, needs_root_and_setpriv, shell_payloads
from tests.program_runs import Rendered, render, stack_values

STACK = "kv-affinity"
MARKER = "kvpool-ran"
MOTOR_IMAGE_ROOTS_OWN = str(Path(MOTOR_CONF_DIR).parent)  # where Motor's common.sh makes CONFIG_PATH
# Each role's own env.json section; every Motor container also lists motor_common_env.
ROLE_SECTIONS = {
    "controller": "motor_controller_env",
    "coordinator": "motor_coordinator_env",
    "prefill": "motor_engine_prefill_env",
    "decode": "motor_engine_decode_env",
    "kv_conductor": "motor_kv_conductor_env",
}
# The roles whose pods load secret_env's Secret (kvpool/internal/secret_env.py; the KV conductor's does not).
SECRET_ROLES = ("controller", "coordinator", "prefill", "decode")
# What each role's container starts: (argv head) of its one record in Boot.records.
MAIN_PROCESS = {
    "controller": ["-m", "motor.controller.main"],
    "coordinator": ["-m", "motor.coordinator.main"],
    "prefill": ["-m", "motor.node_manager.main"],
    "decode": ["-m", "motor.node_manager.main"],
    "kv_conductor": ["mooncake_conductor"],
}


def roads(tag: str, marker: Path) -> dict[str, str]:
    """Every payload as its own variable, all of them in one value (a line each), and references the kubelet
    expands in an env value (an earlier variable's, the pod IP's) or unescapes (`$$`), and leaves in a Secret's."""
    payloads = shell_payloads(str(marker))
    values = {f"ROAD_{tag}_{index}": payload for index, payload in enumerate(payloads)}
    values[f"ROAD_{tag}_ALL"] = "\n".join(payloads)
    values[f"ROAD_{tag}_REF"] = "$(ROAD_COMMON_0) $$(ROAD_COMMON_0) $(POD_IP)"
    return values


def hostile_values(marker: Path) -> dict[str, Any]:
    """The kv-affinity stack with the roads in every env section (the store's too, which no Motor container lists)
    and in secret_env."""
    values = stack_values(STACK)
    sections = ("motor_common_env", *ROLE_SECTIONS.values(), "motor_kv_cache_store_env")
    values["env"] = {section: {**values.get("env", {}).get(section, {}),
                               **roads(section.removeprefix("motor_").removesuffix("_env").upper(), marker)}
                     for section in sections}
    values["secret_env"] = roads("SECRET", marker)
    return values


@pytest.fixture(scope="module")
def marker_folder() -> Iterator[Path]:
    with folder_both_can_write() as folder:
        yield folder


@pytest.fixture(scope="module")
def hostile(marker_folder: Path, motor_checkout: Path) -> tuple[dict[str, Any], Rendered]:
    """(the stack's values, what the program renders from them), with Motor's scripts in motor-config."""
    values = hostile_values(marker_folder / MARKER)
    values["motor_deployer_dir"] = str(motor_checkout / "examples" / "deployer")
    return values, render(values, stack=STACK, secret_keys=("secret_env",))


@pytest.fixture(scope="module")
def pods_folder() -> Iterator[Path]:
    """Where the boots lay out their pods: a folder nobody can reach too (pytest's tmp_path is root's alone)."""
    with folder_both_can_write() as folder:
        yield folder


def hostile_names(values: dict[str, Any], role: str) -> dict[str, str]:
    """name -> the stack's literal value of each road the role's container must list."""
    sections = [values["env"]["motor_common_env"], values["env"][ROLE_SECTIONS[role]]]
    if role in SECRET_ROLES:
        sections.append(values["secret_env"])
    return {name: value for section in sections for name, value in section.items() if name.startswith("ROAD_")}


def role_container(rendered: Rendered, role: str) -> dict[str, Any]:
    workload, name = ROLES[role]
    return next(c for c in pod_spec(rendered, workload)["containers"] if c["name"] == name)


def kubelets_roads(rendered: Rendered, role: str, names: Iterable[str]) -> dict[str, str]:
    """name -> the value the kubelet gives each of these roads in the role's container."""
    env = container_env(role_container(rendered, role), secrets(rendered))
    return {name: env[name] for name in names if name in env}


def test_the_oracle_expands_env_values_and_leaves_secrets() -> None:
    """What the boots compare with, on one value: the kubelet expands `$(VAR)` of an earlier variable and the pod's
    field, unescapes `$$`, and leaves an unknown name (a payload's `$(touch ...)`) as written; a Secret's data it
    never expands."""
    marker = Path("/nonexistent") / MARKER
    env = [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
           *({"name": name, "value": value} for name, value in roads("COMMON", marker).items())]
    resolved = container_env({"env": env, "envFrom": [{"secretRef": {"name": "s"}}]}, {"s": roads("SECRET", marker)})
    assert resolved["ROAD_COMMON_REF"] == f"$(touch {marker}) $(ROAD_COMMON_0) 127.0.0.11"
    assert resolved["ROAD_COMMON_2"] == f"$(touch {marker})"  # `$$(...)`
    assert resolved["ROAD_SECRET_REF"] == "$(ROAD_COMMON_0) $$(ROAD_COMMON_0) $(POD_IP)"
    assert resolved["ROAD_SECRET_2"] == f"$$(touch {marker})"


@pytest.mark.parametrize("unprivileged", [False, pytest.param(True, marks=needs_root_and_setpriv)],
                         ids=["root", "nobody"])
@pytest.mark.parametrize("role", list(ROLE_SECTIONS))
def test_a_containers_command_probes_and_prestop_run_no_road(
    hostile: tuple[dict[str, Any], Rendered], marker_folder: Path, pods_folder: Path, motor_checkout: Path,
    role: str, unprivileged: bool,
) -> None:
    values, rendered = hostile
    container = role_container(rendered, role)
    literal = hostile_names(values, role)
    # The preview carries each value as written: env.json's as env entries, secret_env's in the Secret (envFrom).
    listed = {entry["name"]: entry.get("value") for entry in container["env"] if entry["name"].startswith("ROAD_")}
    from_secret = set(literal) - set(listed)
    assert listed == {name: value for name, value in literal.items() if name not in from_secret}
    assert from_secret == (set(values["secret_env"]) if role in SECRET_ROLES else set())
    expected = kubelets_roads(rendered, role, literal)
    assert set(expected) == set(literal)

    result, ran = boot_and_collect(rendered, role, pods_folder, marker_folder, motor_checkout, unprivileged)
    assert ran == [], result.output
    # As nobody, Motor's scripts cannot create CONFIG_PATH, which Motor's image leaves to root (/usr/local/Ascend), and
    # go on without the copies they make there (hccl_tools.py's traceback: it cannot write hccl.json there); nothing
    # else may fail.
    failures = [line for line in result.failures() if not (unprivileged and MOTOR_IMAGE_ROOTS_OWN in line)]
    hccl_tools = unprivileged and role in ("prefill", "decode")
    assert failures == (["Traceback (most recent call last):"] if hccl_tools else []), result.output
    check_processes(result, role, container, expected, NOBODY if unprivileged else 0)


@needs_root_and_setpriv
def test_the_harness_catches_a_road_that_runs_and_a_value_that_changes(
    hostile: tuple[dict[str, Any], Rendered], marker_folder: Path, pods_folder: Path, motor_checkout: Path,
) -> None:
    """The harness's own check, as nobody: with the controller's script made to evaluate one road and to change
    another, the road's marker appears and the comparison fails on the changed value."""
    values, rendered = hostile
    config = rendered.get("ConfigMap", MOTOR_CONFIG_NAME)
    broken = 'eval "$ROAD_COMMON_0"; export ROAD_SECRET_1=changed\n' + config["data"]["controller.sh"]
    objects = {**rendered.objects,
               ("ConfigMap", MOTOR_CONFIG_NAME): {**config, "data": {**config["data"], "controller.sh": broken}}}
    result, ran = boot_and_collect(Rendered(rendered.run, objects), "controller", pods_folder, marker_folder,
                                   motor_checkout, unprivileged=True)
    assert ran == [MARKER], result.output
    expected = kubelets_roads(rendered, "controller", hostile_names(values, "controller"))
    with pytest.raises(AssertionError) as caught:
        check_processes(result, "controller", role_container(rendered, "controller"), expected, NOBODY)
    assert "'ROAD_SECRET_1': 'changed'" in str(caught.value)


def boot_and_collect(rendered: Rendered, role: str, pods_folder: Path, marker_folder: Path, motor_checkout: Path,
                     unprivileged: bool) -> tuple[Boot, list[str]]:
    """The role's boot with its hooks, and what the roads left in the marker folder (then emptied, so that a road
    that ran fails only its own boot)."""
    folder = pods_folder / f"{role}-{'nobody' if unprivileged else 'root'}"
    try:
        result = boot_role(rendered, role, motor_checkout, folder, hooks=True, unprivileged=unprivileged)
        return result, sorted(path.name for path in marker_folder.iterdir())
    finally:
        for path in marker_folder.iterdir():
            path.unlink()
        shutil.rmtree(folder, ignore_errors=True)


def check_processes(result: Boot, role: str, container: dict[str, Any], expected: dict[str, str], uid: int) -> None:
    """The role's process and every probe and preStop script's python3 started, as `uid`, and each saw every road
    as the kubelet resolves it."""
    main = [record for record in result.records if record["argv"][:len(MAIN_PROCESS[role])] == MAIN_PROCESS[role]]
    assert len(main) == 1, result.output
    hooks = [key for key, probe in container.items() if key.endswith("Probe") and "exec" in probe]
    hooks += [key for key, handler in (container.get("lifecycle") or {}).items() if "exec" in handler]
    scripts = sorted(Path(process["argv"][0]).name for process in result.hook_processes)
    assert scripts == sorted("prestop.py" if hook == "preStop" else "probe.py" for hook in hooks), result.output
    assert all(Path(process["argv"][0]).parent == Path(CONFIGMAP_PATH) for process in result.hook_processes)
    for process in [*result.records, *result.hook_processes]:
        assert process["uid"] == uid, process["argv"]
        seen = {name: process["env"].get(name) for name in expected}
        assert seen == expected, (process["argv"], result.output)
