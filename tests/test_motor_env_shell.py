"""Values are data in Motor's scripts: every set_*_env function motor-config carries is sourced and called by bash
itself, with hostile values (every shell metacharacter, quotes, newlines, tabs, command substitutions, Kubernetes
references), and what it exports is compared byte for byte with kvpool/internal/motor_env.py shell_exports' contract:
the value Kubernetes gives the same variable in a container listing Motor's own entries and then the function's.

The oracle here is the kubelet's own algorithm (tests/kubelet_env.py kubelet_expand: expand.go ported line by line),
independent of kvpool/internal/motor_env.py's."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvpool.components.workloads import Workloads
from kvpool.internal.motor_config import ENV_FUNCTIONS, MOTOR_FILES, motor_config_data
from kvpool.internal.motor_env import DERIVED_ENV_NAMES, POD_ENV_NAMES, env_text
from kvpool.components.workloads import motor_env
from kvpool.internal.motor_pod import FIELD_ENV
from kvpool.program.role_env import motor_derived_env, script_envs
from kvpool.settings.loader import load_from_pulumi_config
from tests.hostile.shell_roads import as_user, folder_both_can_write, needs_root_and_setpriv, shell_payloads
from tests.kubelet_env import kubelet_expand
from tests.service_configs import plain_pd

# What the pod gives Motor's own names here: hostile too, so that a reference copies them without running them.
POD_VALUES = {name: f"{name.lower()} $(id) `id` '\"\\ ;|&\n*" for name in POD_ENV_NAMES}
MARKER = "kvpool-ran"


def contract(env: Mapping[str, Any]) -> dict[str, str]:
    """What each variable of a set_*_env function must hold: its value in a container whose env is POD_VALUES and
    then `env` in order (Kubernetes expands each against the entries before it); DERIVED_ENV_NAMES are in no
    container env and are taken as written."""
    container = dict(POD_VALUES)
    expected = {}
    for name, value in env.items():
        if name in DERIVED_ENV_NAMES:
            expected[name] = env_text(value)
        else:
            expected[name] = container[name] = kubelet_expand(env_text(value), container)
    return expected


def exported_by_bash(scripts: Mapping[str, str], functions: list[str], names: list[str], folder: Path) -> dict:
    """function -> {name: value} as bash sees them after sourcing the scripts and calling the function in a subshell
    (POD_VALUES exported first, as the pod's env)."""
    files = []
    for index, text in enumerate(scripts.values()):
        (path := folder / f"script-{index}.sh").write_text(text)
        files.append(str(path))
    program = (
        'for f in "${FILES[@]}"; do source "$f"; done\n'
        'for fn in "${FUNCTIONS[@]}"; do ( "$fn" && for n in "${NAMES[@]}"; do printf "%s\\0%s\\0%s\\0" "$fn" "$n" "${!n-<unset>}"; done ); done\n'
    )
    declare = "".join(
        f"{array}=({' '.join(repr_bash(item) for item in items)})\n"
        for array, items in (("FILES", files), ("FUNCTIONS", functions), ("NAMES", names))
    )
    result = subprocess.run(
        ["bash", "-c", declare + program], cwd=folder, capture_output=True, check=True,
        env={"PATH": "/usr/bin:/bin", **POD_VALUES},
    )
    fields = result.stdout.decode().split("\0")[:-1]
    exported: dict[str, dict[str, str]] = {}
    for function, name, value in zip(fields[::3], fields[1::3], fields[2::3], strict=True):
        exported.setdefault(function, {})[name] = value
    return exported


def repr_bash(text: str) -> str:
    """A literal bash word for the test's own arrays (file paths and identifiers: no quote in them)."""
    assert "'" not in text
    return f"'{text}'"


FAKE_MOTOR_FILES = {key: f"# {key}: Motor's script would follow\n" for key in ENV_FUNCTIONS}
ENGINE_CONTRACT = {"KV_STORE_BACKEND": "mooncake", "MOONCAKE_LOCAL_HOSTNAME": "$(POD_IP)"}


def check_functions(service: dict[str, Any], folder: Path) -> None:
    settings_ = load_from_pulumi_config(service, "svc")
    role_envs = script_envs(settings_, ENGINE_CONTRACT)
    data = motor_config_data(settings_.user_config(), FAKE_MOTOR_FILES, role_envs, {})
    scripts = {key: data[key] for key in ENV_FUNCTIONS}
    sections = {function: section for pairs in ENV_FUNCTIONS.values() for function, section in pairs}
    common = role_envs["motor_common_env"]
    names = sorted({name for env in role_envs.values() for name in env})
    exported = exported_by_bash(scripts, list(sections), names, folder)
    for function, section in sections.items():
        expected = contract(role_envs.get(section, common))
        got = {name: value for name, value in exported[function].items() if value != "<unset>" or name in expected}
        assert {name: got.get(name, "<unset>") for name in expected} == expected, function
        assert set(got) - set(expected) == set(), function  # nothing else exported
    assert not (folder / MARKER).exists()  # nothing ran


# Pieces of hostile text: every shell metacharacter, quotes, escapes, newline and tab, command and arithmetic
# substitutions, parameter expansions, Kubernetes references (defined, undefined, escaped, unclosed) and non-ASCII.
HOSTILE_PIECES = [
    f"$(touch {MARKER})", f"`touch {MARKER}`", "$((1+1))", f"${{X:-$(touch {MARKER})}}", f"\\$(touch {MARKER})",
    "$", "$$", "$(", ")", "${", "}", "'", '"', "\\", "\n", "\t", "'\\''", "!", "#", "&", ";", "|", "<", ">", "*", "?",
    "[", "]", "~", "=", " ", "$HOME", "$1", "$@", "$'x'", '$"x"', "$(POD_IP)", "$(HOST_IP)", "$(ROLE)", "$$(POD_IP)",
    "$(MODEL_NAME)", "$(SERVICE_ID)", "$(NOT_DEFINED)", "$(FOO)", "$(BAR)", "$(A$(FOO))",
    "é", "😀", "中", "\u00a0", "\u2028",
]
# Where no control-plane pod runs the function, $(POD_NAMESPACE) is text for the kubelet too; elsewhere the settings
# refuse it (test_what_only_the_kubelet_resolves_is_no_reference_the_functions_follow).
ENGINE_PIECES = [*HOSTILE_PIECES, "$(POD_NAMESPACE)"]


def texts(pieces: list[str]) -> st.SearchStrategy[str]:
    return st.lists(
        st.one_of(st.sampled_from(pieces), st.text(
            # what the settings take: no control character but tab and newline, no lone surrogate
            alphabet=st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\t\n"),
            max_size=8)),
        max_size=8,
    ).map("".join)


text_values = texts(HOSTILE_PIECES)
# Names env.json may hold (the shell's and the loader's own are refused: tests/hostile/test_shell_env_names.py).
env_names = st.sampled_from(["FOO", "BAR", "BAZ", "ASCEND_HOME_PATH", "MY_VAR_1", "KV_STORE_BACKEND"])
sections = st.dictionaries(env_names, st.one_of(text_values, st.booleans(), st.integers(-10**6, 10**6)), max_size=4)
engine_sections = st.dictionaries(env_names, st.one_of(texts(ENGINE_PIECES), st.booleans(), st.integers(-10**6, 10**6)),
                                  max_size=4)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(
    common=sections, controller=sections, coordinator=sections, prefill=engine_sections, decode=engine_sections,
    conductor=engine_sections, model=text_values.filter(bool),
)
def test_every_function_exports_its_values_byte_for_byte(
    tmp_path_factory, common, controller, coordinator, prefill, decode, conductor, model
) -> None:
    service = plain_pd()
    for side in ("prefill", "decode"):
        service[f"motor_engine_{side}_config"]["engine_config"]["served_model_name"] = model
    # KV_STORE_BACKEND is the store contract's on the engines: env.json may repeat it there, never contradict it.
    prefill = {name: value for name, value in prefill.items() if name != "KV_STORE_BACKEND"}
    decode = {name: value for name, value in decode.items() if name != "KV_STORE_BACKEND"}
    common = {name: value for name, value in common.items() if name != "KV_STORE_BACKEND"}
    service["env"] = {
        "motor_common_env": common, "motor_controller_env": controller, "motor_coordinator_env": coordinator,
        "motor_engine_prefill_env": prefill, "motor_engine_decode_env": decode, "motor_kv_conductor_env": conductor,
    }
    check_functions(service, tmp_path_factory.mktemp("functions"))


def test_the_issues_examples_run_nothing(tmp_path) -> None:
    """Issue 33 class 1: a command substitution in env, in served_model_name, `${X:-$(...)}`, `$((...))`, `\\$(...)`."""
    service = plain_pd()
    service["motor_engine_prefill_config"]["engine_config"]["served_model_name"] = f"m$(touch {MARKER})"
    service["env"] = {
        "motor_common_env": {"FOO": f"$(touch {MARKER})", "BAR": f"${{X:-$(touch {MARKER})}}"},
        "motor_engine_prefill_env": {"BAZ": "$((6*7))", "QUX": f"\\$(touch {MARKER})", "LINES": "a\n'b'\n\"c\""},
    }
    check_functions(service, tmp_path)


def test_references_and_escapes_follow_kubernetes(tmp_path) -> None:
    """A reference to Motor's own entries or an earlier variable reads it; `$$` is `$`; a `$` alone stays literal,
    so `$ASCEND_HOME_PATH` no longer expands (write `$(NAME)` for a name Kubernetes defines)."""
    service = plain_pd()
    service["env"] = {"motor_common_env": {
        "FOO": "$(HOST_IP):8080", "BAR": "$(FOO)/x $$(FOO) $(BAZ)", "BAZ": "late", "ASCEND_HOME_PATH": "/opt/lib:$ASCEND_HOME_PATH",
    }}
    settings_ = load_from_pulumi_config(service, "svc")
    exported = exported_by_bash(
        {"common.sh": motor_config_data(settings_.user_config(), FAKE_MOTOR_FILES, script_envs(settings_, {}), {})["common.sh"]},
        ["set_common_env"], ["FOO", "BAR", "BAZ", "ASCEND_HOME_PATH"], tmp_path,
    )["set_common_env"]
    assert exported == {
        "FOO": POD_VALUES["HOST_IP"] + ":8080",
        "BAR": POD_VALUES["HOST_IP"] + ":8080/x $(FOO) $(BAZ)",  # BAZ comes after BAR: Kubernetes leaves it
        "BAZ": "late",
        "ASCEND_HOME_PATH": "/opt/lib:$ASCEND_HOME_PATH",
    }


def test_the_pod_names_are_what_every_motor_pod_defines_first() -> None:
    """POD_ENV_NAMES: the field references and motor_env's names every Motor pod lists before env.json's; the
    derived names are motor_derived_env's."""
    workloads = Workloads.__new__(Workloads)
    workloads.service_host = lambda name, role: name  # type: ignore[method-assign]
    assert set(POD_ENV_NAMES) == {*FIELD_ENV, *motor_env("prefill", workloads, "job")}
    assert tuple(motor_derived_env(load_from_pulumi_config(plain_pd(), "svc"))) == DERIVED_ENV_NAMES


# Each Motor role's own function: (motor-config key, function), after common.sh's set_common_env, as boot.sh runs them.
ROLE_FUNCTIONS = {
    "controller": ("controller.sh", "set_controller_env"),
    "coordinator": ("coordinator.sh", "set_coordinator_env"),
    "prefill": ("engine.sh", "set_prefill_env"),
    "decode": ("engine.sh", "set_decode_env"),
    "kv_conductor": ("kv_conductor.sh", "set_kv_conductor_env"),
}
HOSTILE_ENV = {
    "motor_common_env": {"FOO": f"$(touch {MARKER}) '\"`\\\n\t$$(HOST_IP) $(HOST_IP)", "BAR": "$(FOO)|$(ROLE);$X"},
    "motor_controller_env": {"CTL": f"${{X:-$(touch {MARKER})}}$(BAR)"},
    "motor_coordinator_env": {"COORD": "$((6*7)) $(CONFIG_PATH) $(KVS_MASTER_SERVICE) $(KV_CONDUCTOR_SERVICE)",
                              "FOO": "coordinator's own $(BAR) $(KVS_MASTER_SERVICE)"},
    "motor_engine_prefill_env": {"ENG": f"\\$(touch {MARKER}) $(MOONCAKE_CONFIG_PATH) $(POD_IP)"},
    "motor_engine_decode_env": {"ENG": "'; touch x; '", "BAR": "decode's"},
    "motor_kv_conductor_env": {"COND": "$(COORDINATOR_SERVICE) $(KVS_MASTER_SERVICE) `id`"},
    # No motor_kv_cache_store_env: motor-config carries kv_cache_store.sh's set_kv_store_env, but no pod runs it. The
    # store's containers start mooncake_master, or `/bin/sh -c` with a fixed command (memcache.META_COMMAND,
    # yuanrong.WORKER_COMMAND), and get the section as plain container env (StoreContext.with_store_env), which no
    # shell expands; its names are refused like every section's (tests/hostile/test_shell_env_names.py).
}


def test_each_roles_functions_export_its_container_env(motor_checkout, tmp_path) -> None:
    """The whole program with Motor's scripts: in each role's pod, bash starts from the container's env as the kubelet
    builds it, runs set_common_env and then the role's own function, and every env.json variable the function
    exports holds the container's value (the derived values are in no container env)."""
    _run_each_roles_functions(motor_checkout, tmp_path, HOSTILE_ENV, as_nobody=False)
    assert not (tmp_path / MARKER).exists() and not (tmp_path / "x").exists()


@pytest.mark.parametrize("as_nobody", [False, pytest.param(True, marks=needs_root_and_setpriv)],
                         ids=["root", "nobody"])
def test_every_shell_road_stays_data_in_each_roles_functions(motor_checkout, as_nobody) -> None:
    """Issue 45 §1's payloads (tests/hostile/shell_roads.py), every one in every env.json section Motor's scripts
    export, run by real bash through each role's functions as root and as nobody, in a folder both can write: each
    arrives byte for byte and none creates its marker."""
    with folder_both_can_write() as folder:
        marker = folder / MARKER
        payloads = {section: {f"ROAD_{number}_{index}": payload for index, payload in enumerate(shell_payloads(marker))}
                    for number, section in enumerate(HOSTILE_ENV)}
        _run_each_roles_functions(motor_checkout, folder, payloads, as_nobody)
        assert sorted(path.name for path in folder.iterdir()) == ["0.sh", "1.sh"]


def _run_each_roles_functions(motor_checkout: Path, folder: Path, hostile_env: dict[str, dict[str, str]],
                              as_nobody: bool) -> None:
    from tests.conformance.test_motor_boot import ROLES, pod_spec
    from tests.program_runs import render, stack_values

    base = stack_values("kv-affinity")
    values = {**base, "motor_deployer_dir": str(motor_checkout / "examples" / "deployer")}
    values["env"] = {section: {**base["env"].get(section, {}), **hostile} for section, hostile in hostile_env.items()}
    rendered = render(values, stack="kv-affinity")
    data = rendered.get("ConfigMap", "motor-config")["data"]
    deployer = motor_checkout / "examples" / "deployer"
    motor_files = {key: (deployer / relative).read_text() for key, relative in MOTOR_FILES}
    fields = {"status.podIP": POD_VALUES["POD_IP"], "status.hostIP": POD_VALUES["HOST_IP"], "metadata.namespace": "ns"}
    for role, (key, function) in ROLE_FUNCTIONS.items():
        workload, name = ROLES[role]
        container = next(c for c in pod_spec(rendered, workload)["containers"] if c["name"] == name)
        env: dict[str, str] = {}
        for entry in container["env"]:
            env[entry["name"]] = (kubelet_expand(entry["value"], env) if "value" in entry
                                  else fields[entry["valueFrom"]["fieldRef"]["fieldPath"]])
        # the functions alone: what with_env_functions put before Motor's own text
        blocks = {script: data[script].removesuffix(motor_files[script]) for script in ("common.sh", key)}
        for index, block in enumerate(blocks.values()):
            (folder / f"{index}.sh").write_text(block)
        names = [n for n in env if n not in DERIVED_ENV_NAMES]
        result = subprocess.run(
            [*as_user(as_nobody), "bash", "-c", f'source 0.sh; source 1.sh; set_common_env; {function}; '
             'for n in "$@"; do printf "%s\\0%s\\0" "$n" "${!n-<unset>}"; done', "-", *names],
            cwd=folder, capture_output=True, check=True, env=env,
        )
        # a function bash cannot parse is never defined and exports nothing: the env would pass for its exports
        assert result.stderr.decode() == "", role
        fields_out = result.stdout.decode().split("\0")[:-1]
        exported = dict(zip(fields_out[::2], fields_out[1::2], strict=True))
        assert exported == env, role
        section = dict(ENV_FUNCTIONS[key])[function]
        assert {*hostile_env["motor_common_env"], *hostile_env[section]} <= set(env), role  # they did reach the pod


def test_what_only_the_kubelet_resolves_is_no_reference_the_functions_follow(tmp_path) -> None:
    """Why the settings refuse a reference to the control plane's POD_NAMESPACE, to a secret_env name or to the API
    server Service's variables (kvpool/internal/motor_env.py unfollowed_references): in a container whose env holds
    their values, bash running the function still exports the text `$(NAME)` where the kubelet puts the value."""
    from kvpool.internal.motor_env import shell_exports, unfollowed_references

    defined = {"POD_NAMESPACE": "ns", "HF_TOKEN": "tok", "KUBERNETES_SERVICE_HOST": "10.96.0.1"}
    env = {f"REF_{index}": f"<$({name})>" for index, name in enumerate(defined)}
    (tmp_path / "f.sh").write_text(f"function set_common_env() {{\n{shell_exports(env)}}}\n")
    result = subprocess.run(
        ["bash", "-c", 'source f.sh; set_common_env; printf "%s\\0" "$REF_0" "$REF_1" "$REF_2"'],
        cwd=tmp_path, capture_output=True, text=True, check=True, env=defined,
    )
    assert result.stdout.split("\0")[:-1] == list(env.values())
    assert [kubelet_expand(value, defined) for value in env.values()] == ["<ns>", "<tok>", "<10.96.0.1>"]
    assert list(unfollowed_references({"motor_common_env": env}, ["HF_TOKEN"])) == [
        ("motor_common_env", variable, name) for variable, name in zip(env, defined, strict=True)]


def test_a_name_the_container_lists_before_a_variable_is_a_reference_only_after_it(tmp_path) -> None:
    """The coordinator's container lists the store's KVS_MASTER_SERVICE after motor_common_env and before its own
    section, which its function does not export: a common variable's `$(KVS_MASTER_SERVICE)` stays literal (as
    Kubernetes leaves it), a coordinator variable's reads it."""
    from kvpool.internal.motor_env import shell_exports

    body = shell_exports({"COMMON": "$(KVS_MASTER_SERVICE)", "OWN": "$(KVS_MASTER_SERVICE)"},
                         ["COMMON", "KVS_MASTER_SERVICE", "OWN"])
    (tmp_path / "f.sh").write_text(f"function set_coordinator_env() {{\n{body}}}\n")
    result = subprocess.run(
        ["bash", "-c", 'source f.sh; set_coordinator_env; printf "%s\\0%s" "$COMMON" "$OWN"'],
        cwd=tmp_path, capture_output=True, text=True, check=True, env={"KVS_MASTER_SERVICE": "master.ns.svc"},
    )
    assert result.stdout.split("\0") == ["$(KVS_MASTER_SERVICE)", "master.ns.svc"]


SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash")


def shell_scripts(node) -> list[str]:
    """Every `<shell> -c SCRIPT` argv (command, args, exec probes, hooks) in a manifest, as SCRIPT."""
    found = []
    if isinstance(node, dict):
        argv = [*(node.get("command") or []), *(node.get("args") or [])] if isinstance(node.get("command"), list) else []
        if len(argv) >= 3 and argv[0] in SHELLS and argv[1] == "-c":
            found.append(argv[2])
        for value in node.values():
            found += shell_scripts(value)
    elif isinstance(node, list):
        for value in node:
            found += shell_scripts(value)
    return found


@pytest.mark.parametrize("stack", ["dev", "yuanrong", "mooncake-ha", "kv-affinity", "service-set"])
def test_no_setting_reaches_a_shell_command_string(stack) -> None:
    """Besides motor-config's functions, the shells our manifests start run fixed text only: every `sh -c` script
    is one of these constants, whatever the stack says (a value reaches them as argv after the script, "$@", or as
    a file the script reads as data)."""
    from kvpool.components.kv_store.memcache import META_COMMAND
    from kvpool.components.kv_store.yuanrong import WORKER_COMMAND
    from kvpool.internal.motor_pod import BOOT_COMMAND, ENGINE_LIFECYCLE, probe
    from tests.program_runs import render_stack

    fixed = {BOOT_COMMAND[2], META_COMMAND, WORKER_COMMAND, ENGINE_LIFECYCLE["preStop"]["exec"]["command"][2],
             *(probe(stage, 1)["exec"]["command"][2] for stage in ("startup", "readiness", "liveness"))}
    scripts = [script for body in render_stack(stack).objects.values() for script in shell_scripts(body)]
    assert scripts and set(scripts) <= fixed
