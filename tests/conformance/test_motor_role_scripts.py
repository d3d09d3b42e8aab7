"""The table of Motor's files each role runs (kvpool/internal/motor_config.py ROLE_SCRIPTS, behind each role's
checksum/motor-scripts) is proven on Motor's own boot.sh: every role of every example stack boots, and then runs its
exec probes and preStop hook, with every Motor file of motor-config outside its set replaced by one that fails loudly
when run or sourced and whose opening is recorded. A role that runs or reads a file outside its set fails here, so an
upgrade touching only that file could never leave the role running the old one."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvpool.internal.motor_config import (
    CLIENT_FILE_KEYS,
    MOTOR_CONFIG_NAME,
    MOTOR_FILES,
    role_scripts,
)
from tests.conformance.motor_boot import Boot, container_env
from tests.conformance.test_motor_boot import (
    ROLES,
    STACKS,
    boot_role,
    pod_spec,
    roles_of,
)
from tests.program_runs import Rendered

MARK = "KVPOOL-OUTSIDE-ROLE"


def outside_file(key: str, role: str) -> str:
    """Text that fails loudly when bash runs or sources it, or Python runs it, naming the key and the role."""
    message = f"{MARK}: motor-config key {key} is not in role {role}'s scripts (kvpool/internal/motor_config.py ROLE_SCRIPTS)"
    if key.endswith(".py"):
        return f"raise SystemExit({message!r})\n"
    return f"echo {message!r} >&2; exit 97\n"


def role_backend(rendered: Rendered, role: str) -> str | None:
    workload, container = ROLES[role]
    spec = pod_spec(rendered, workload)
    return container_env(next(c for c in spec["containers"] if c["name"] == container)).get("KV_STORE_BACKEND")


def motors_keys(rendered: Rendered, checkout: Path) -> set[str]:
    """motor-config keys holding Motor's files: deploy.py's set but a store client file that is ours (checksum/kv-client)."""
    data = rendered.get("ConfigMap", MOTOR_CONFIG_NAME)["data"]
    deployer = checkout / "examples" / "deployer"
    return {key for key, relative in MOTOR_FILES
            if key not in CLIENT_FILE_KEYS.values() or data[key] == (deployer / relative).read_text()}


def boot_with_files_replaced(rendered: Rendered, role: str, replaced: set[str], checkout: Path, tmp_path: Path) -> Boot:
    data = rendered.get("ConfigMap", MOTOR_CONFIG_NAME)["data"]
    changed = {key: outside_file(key, role) if key in replaced else text for key, text in data.items()}
    objects = {**rendered.objects, ("ConfigMap", MOTOR_CONFIG_NAME): {
        **rendered.get("ConfigMap", MOTOR_CONFIG_NAME), "data": changed}}
    return boot_role(Rendered(rendered.run, objects), role, checkout, tmp_path, hooks=True)


@pytest.mark.parametrize(("stack", "role"), [(stack, role) for stack in STACKS for role in roles_of(stack)])
def test_a_role_runs_no_motor_file_outside_its_set(rendered, stack: str, role: str, motor_checkout, tmp_path) -> None:
    run = rendered[stack]
    own = set(role_scripts(role, role_backend(run, role)))
    outside = motors_keys(run, motor_checkout) - own
    result = boot_with_files_replaced(run, role, outside, motor_checkout, tmp_path)
    assert MARK not in result.output, result.output
    assert result.returncode == 0, result.output
    opened = {key for config_map, key in result.opened if config_map == MOTOR_CONFIG_NAME}
    assert opened & outside == set()
    # and the set is no wider: the boot and its hooks open every file of it (no example stack runs on A5)
    assert opened & motors_keys(run, motor_checkout) == own



def test_an_outside_file_that_a_role_runs_fails_the_boot(rendered, motor_checkout, tmp_path) -> None:
    """The harness's own check: with the controller's script treated as outside its set, the boot stops at it."""
    result = boot_with_files_replaced(rendered["dev"], "controller", {"controller.sh"}, motor_checkout, tmp_path)
    assert result.returncode == 97
    assert (f"{MARK}: motor-config key controller.sh is not in role controller's scripts "
            "(kvpool/internal/motor_config.py ROLE_SCRIPTS)") in result.output
    assert result.records == []  # Motor's controller never started


def test_an_outside_file_that_a_role_only_reads_is_recorded(rendered, motor_checkout, tmp_path) -> None:
    """A file copied rather than run (a MemCache engine's LocalService conf, which common.sh's sync_mmc_local_config
    copies) is caught by its opening."""
    key = CLIENT_FILE_KEYS["mmc-local.conf"]
    result = boot_with_files_replaced(rendered["dev"], "prefill", {key}, motor_checkout, tmp_path)
    assert (MOTOR_CONFIG_NAME, key) in result.opened
