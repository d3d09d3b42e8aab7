"""Issue 45 §1: an env *name* can be as dangerous as a value. Every Motor container, probe and preStop starts with
`bash -c`, so a variable bash or the dynamic loader acts on (BASH_ENV's value is expanded, `$(...)` included, by
every non-interactive bash; PS4 under SHELLOPTS=xtrace when the image's user is not root) would run a payload
however its value is quoted. The settings refuse such names in every env.json section and in secret_env, the pack
refuses them in any container; and the list is held to real bash: every variable name bash knows, given a payload
as root and as an unprivileged user, alone or with xtrace on, either leaves bash's behaviour alone or is refused."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from kvpool.errors import SettingsError
from kvpool.internal.motor_env import CONTROL_PLANE_INTERNAL_ENV
from kvpool.policies import rules
from kvpool.settings.from_stack import settings_from_config
from kvpool.settings.loader import load_from_pulumi_config
from tests.hostile.shell_roads import as_user, folder_both_can_write, needs_root_and_setpriv
from tests.service_configs import mooncake_pool

SECTIONS = ("motor_common_env", "motor_controller_env", "motor_coordinator_env", "motor_engine_prefill_env",
            "motor_engine_decode_env", "motor_kv_cache_store_env", "motor_kv_conductor_env")
SHELL = ("is read by bash itself, and every Motor container, probe and preStop starts with bash -c: its value would run "
         "or change what runs, however it is quoted; remove it.")
LIBC = ("is read by the C library in a Motor container's processes: it names files they would load, run or read "
        "(gconv modules, getconf's programs, locales, message catalogs, resolver files), so its value would load or "
        "change code there; remove it, and set what it is for in the image (its Dockerfile's ENV), where it is "
        "reviewed with the image.")
LOADER = ("is read by the dynamic loader in every process of a Motor container: its value would load or change code "
          "there; remove it, and set what it is for in the image (its Dockerfile's ENV), where it is reviewed with "
          "the image.")
BASH = shutil.which("bash") or "/bin/bash"  # by path: env would look `bash` up in the PATH under test


def refusals(env: dict[str, dict[str, str]]) -> list[str]:
    service = mooncake_pool()
    for section, values in env.items():
        service["env"].setdefault(section, {}).update(values)
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, "svc")
    return caught.value.problems


@pytest.mark.parametrize("section", SECTIONS)
def test_every_env_section_refuses_the_names_bash_and_the_loader_act_on(section):
    payload = "$(touch /tmp/kvpool-payload)"
    names = {"BASH_ENV": payload, "SHELLOPTS": "xtrace", "PS4": payload, "ENV": payload, "IFS": "/",
             "BASH_FUNC_echo": "() { id; }", "LD_PRELOAD": "/tmp/x.so", "LD_AUDIT": "/tmp/x.so",
             "GLIBC_TUNABLES": "glibc.malloc.check=3", "PATH": "/tmp/evil:/usr/bin:/bin", "CDPATH": "/tmp",
             "GCONV_PATH": "/tmp/evil", "GETCONF_DIR": "/tmp/evil", "LOCPATH": "/tmp/evil", "NLSPATH": "/tmp/%N",
             "HOSTALIASES": "/tmp/hosts", "RESOLV_HOST_CONF": "/tmp/host.conf", "TZDIR": "/tmp/zones",
             "MALLOC_TRACE": "/etc/passwd", "SAFE_NAME": payload, "HOME": "/tmp", "TMPDIR": "/scratch",
             "TZ": "Asia/Shanghai", "MAIL": "/tmp/m", "OPTIND": "3", "LOCALDOMAIN": "example.org",
             "CANN_INSTALL_PATH": "/usr/local/Ascend"}
    libc = {"GCONV_PATH", "GETCONF_DIR", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF", "TZDIR",
            "MALLOC_TRACE"}
    left_alone = {"SAFE_NAME", "HOME", "TMPDIR", "TZ", "MAIL", "OPTIND", "LOCALDOMAIN", "CANN_INSTALL_PATH"}
    assert refusals({section: names}) == [
        f"env.{section}.{name}: {LOADER if name.startswith(('LD_', 'GLIBC_')) else LIBC if name in libc else SHELL}"
        for name in names if name not in left_alone
    ]


def test_a_stack_file_path_in_motor_common_env_is_refused():
    """The audit's case: `motor_common_env.PATH: /tmp/evil:/usr/bin:/bin` previewed clean, though PATH decides which
    program every command of Motor's `bash -c "source .../boot.sh"` runs."""
    assert refusals({"motor_common_env": {"PATH": "/tmp/evil:/usr/bin:/bin"}}) == [
        f"env.motor_common_env.PATH: {SHELL}"]


def test_secret_env_refuses_them_too():
    texts = {f"motor-kvpool:{key}": json.dumps(value) for key, value in mooncake_pool().items()}
    texts["motor-kvpool:secret_env"] = '{"BASH_ENV": "x", "HF_TOKEN": "t", "LD_PRELOAD": "/x.so"}'
    with pytest.raises(SettingsError) as caught:
        settings_from_config(texts, {"motor-kvpool:secret_env"}, "dev")
    assert caught.value.problems == [f"secret_env.BASH_ENV: {SHELL}", f"secret_env.LD_PRELOAD: {LOADER}"]


def _bash_names() -> list[str]:
    """Every variable bash itself sets or documents as special, as this bash lists them (compgen -v in a clean env),
    plus the POSIX ones it reads only when set (ENV, BASH_ENV, PS4 ...)."""
    listed = subprocess.run(["env", "-i", "bash", "-c", "compgen -v"], capture_output=True, text=True, check=True)
    return sorted({*listed.stdout.split(), *rules.SHELL_ENV_NAMES})


# A builtin (echo) and a program bash finds through PATH (cat), so a name that changes command lookup shows too.
PROBE = "echo ok x; cat /dev/null"


def _run(env: dict[str, str], as_nobody: bool, marker: Path) -> tuple[str, bool]:
    done = subprocess.run([*as_user(as_nobody), "env", "-i", *(f"{k}={v}" for k, v in env.items()), BASH, "-c", PROBE],
                          capture_output=True, text=True, timeout=10, cwd="/")
    ran = marker.exists()
    if ran:
        marker.unlink()
    return done.stdout + done.stderr, ran


@needs_root_and_setpriv
def test_every_name_real_bash_acts_on_is_refused():
    with folder_both_can_write() as folder:
        _probe_every_name(folder / "ran", _fake_programs(folder / "bin", folder / "ran"))


def _fake_programs(folder: Path, marker: Path) -> Path:
    """A folder whose `cat` touches the marker: what PATH, put first, would make the probe's `cat` run."""
    folder.mkdir(mode=0o755)
    fake = folder / "cat"
    fake.write_text(f"#!/bin/sh\ntouch {marker}\n")
    fake.chmod(0o755)
    return folder


def _probe_every_name(marker: Path, fake_programs: Path) -> None:
    payload = f"$(touch {marker})"
    # Beside the `$(...)` payload, each name that names a folder to look programs up in gets the fake one.
    folder_payloads = {"PATH": f"{fake_programs}:/usr/bin:/bin"}
    baseline = {as_nobody: _run({}, as_nobody, marker) for as_nobody in (False, True)}
    acted, ran_as = set(), set()
    for name in _bash_names():
        for as_nobody in (False, True):
            for extra, value in [(extra, value) for extra in ({}, {"SHELLOPTS": "xtrace"})
                                 for value in (payload, *([folder_payloads[name]] if name in folder_payloads else []))]:
                env = {**extra, name: value}
                output, ran = _run(env, as_nobody, marker)
                changed = output != _run(extra, as_nobody, marker)[0] if extra else output != baseline[as_nobody][0]
                if ran or changed:
                    acted.add(name)
                if ran:
                    ran_as.add((name, "nobody" if as_nobody else "root"))
    assert {"BASH_ENV", "PS4", "SHELLOPTS"} <= acted  # the probe finds what the issue found (bash imports no IFS)
    # the payload ran as either user where bash runs it: the nobody runs could create their marker
    assert {("BASH_ENV", "root"), ("BASH_ENV", "nobody"), ("PS4", "nobody")} <= ran_as
    # PATH with a folder of the payload's programs first runs them, as root and as nobody, where a builtin would not
    assert {("PATH", "root"), ("PATH", "nobody")} <= ran_as
    assert sorted(name for name in acted if not rules.changes_the_shell(name)) == []


@pytest.mark.parametrize("name", CONTROL_PLANE_INTERNAL_ENV)
def test_secret_env_refuses_the_names_motor_kvpool_sets(name):
    """Issue 45 §1: the list env.json's sections are refused from (motor_pod.check_internal_env), every name of it."""
    texts = {f"motor-kvpool:{key}": json.dumps(value) for key, value in mooncake_pool().items()}
    texts["motor-kvpool:secret_env"] = json.dumps({"HF_TOKEN": "t", name: "x"})
    with pytest.raises(SettingsError) as caught:
        settings_from_config(texts, {"motor-kvpool:secret_env"}, "dev")
    assert caught.value.problems == [
        f"secret_env.{name}: motor-kvpool sets {name} itself for Motor's processes, and its value beats the Secret's; "
        f"remove it: `pulumi config rm --path secret_env.{name}`"
    ]


def test_the_pack_refuses_path_and_gconv_path_in_any_container():
    """The pack's side (kvpool-disallow-shell-env-names) of the names added for the audit: PATH decides which program
    each command of `bash -c` runs, GCONV_PATH where iconv loads code from; a name the C library leaves alone passes."""
    from types import SimpleNamespace

    from kvpool.policies import catalog

    env = [{"name": "PATH", "value": "/tmp/evil:/usr/bin:/bin"}, {"name": "GCONV_PATH", "value": "/tmp/evil"},
           {"name": "TZ", "value": "Asia/Shanghai"}]
    props = {"spec": {"template": {"spec": {"containers": [{"name": "vllm", "env": env}]}}}}
    reported: list[str] = []
    catalog._shell_env_names(SimpleNamespace(resource_type="kubernetes:apps/v1:Deployment", name="prefill-vllm-p0",
                                             props=props), lambda message, urn=None: reported.append(message))
    assert reported == [f"Deployment prefill-vllm-p0: containers.vllm.env.PATH: {SHELL}",
                        f"Deployment prefill-vllm-p0: containers.vllm.env.GCONV_PATH: {LIBC}"]
