"""Boot one rendered Motor container the way its pod would: Motor's own boot.sh from the rendered motor-config,
with the rendered env, in a private mount and PID namespace laid out like the pod's filesystem.

- motor-config is a read-only folder at /mnt/configmap laid out as the kubelet lays out a ConfigMap volume
  (each key a symlink into `..data/`), with the volume's defaultMode; subPath mounts are read-only file binds.
- /usr/local, /etc, /mnt and /dev are overlays on the host's, so Motor's scripts can create what a container
  image would let them create (CONFIG_PATH, the CANN set_env.sh stub, /dev/davinci*) without touching the host.
- The heavy processes are stubs on PATH: Motor's own python processes (`python3 -m motor.*`, `ccae_reporter`) and
  the KV conductor binary kv_conductor.sh starts (`mooncake_conductor`) record their argv, env and the config files
  their env points at, and on an engine run Motor's real
  LocalService.prepare() when the pool is MemCache; vllm's helpers (lspci, hccn_tool, npu-smi) answer as on an
  Ascend node. Every other python3 call (Motor's mooncake_config.py, hccl_tools.py) runs for real.
- Which ConfigMap files the pod opened is recorded (inotify on the volume's files, tests/conformance/file_opens.py).
- With `probes=True` the role's process is Motor's own, run from `motor_checkout` as `python3 -m` runs it, after the
  recorder (the controller, the coordinator with all its worker processes, or an engine's node manager with its
  config loading, port setup, API server and registration loop; only vLLM, which the node manager starts when the
  controller asks, is absent), and once its API accepts connections the container's own probe commands run, each as
  the kubelet execs it, with the container's env. The boot has its own network namespace (loopback only), as a pod
  has.
- With `hooks=True` the container's exec probes and lifecycle handlers run once its command has ended, in the same
  pod; the python3 each of Motor's probe.sh and prestop.sh starts records its argv and env (Boot.hook_processes), then
  runs.
- The env is the kubelet's (tests/kubelet_env.py): envFrom's Secrets (`secrets`) as written, then each entry with its
  `$(VAR)` references expanded; the command and args are expanded with it, an exec probe's command with the entries'
  values as written, a hook's not at all. With `unprivileged=True` everything the container runs (its command, probes
  and hooks, with PID 1 among them) runs as nobody, with the pod's fsGroup as its supplementary group and as the
  group of its ConfigMap volumes' files, as the kubelet sets them.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from tests.conformance.file_opens import FileOpens
from tests.hostile.shell_roads import NOBODY, as_user
from tests.kubelet_env import kubelet_expand, static_env

# Folders the pod writes into, overlaid in the boot's own mount namespace so that nothing reaches this machine;
# /root and /var hold the engines' DirectoryOrCreate host paths (/root/ascend/log, /var/coredump).
OVERLAID = ("/usr/local", "/etc", "/mnt", "/dev", "/root", "/var")
FAKE_IPS = {"status.podIP": "127.0.0.11", "status.hostIP": "127.0.0.12"}
# lspci device ids hccl_tools.py looks for (its HardwareType enum).
PCI_IDS = {"A2": "d802", "A3": "d803", "A5": "d806"}
FAILURE_MARKS = ("No such file or directory", "command not found", "Read-only file system", "Permission denied",
                 "Traceback (most recent call last)")

RECORDER = r'''
import json, os, sys


def motor_process(module):
    if module == "motor.controller.main":
        from motor.config.controller import ControllerConfig
        config = ControllerConfig.from_json()
        return {"config_path": config.config_path, "controller_api_port": config.api_config.controller_api_port}
    if module == "motor.node_manager.main":
        from motor.config.node_manager import NodeManagerConfig
        config = NodeManagerConfig.from_json()
        return {"config_path": config.config_path, "node_manager_port": config.api_config.node_manager_port}
    from unittest import mock
    from motor.config.coordinator import CoordinatorConfig
    from motor.coordinator.metrics import metrics_collector
    from motor.coordinator.scheduler.policy.kv_cache_affinity import TokenizerManager
    config = CoordinatorConfig.from_json()
    events = config.prefill_kv_event_config
    fetched = []

    def unreachable(url, **_):  # record the URL; no store runs here
        fetched.append(url)
        raise metrics_collector.requests.ConnectionError(url)

    with mock.patch.object(metrics_collector.requests, "get", side_effect=unreachable):
        metrics_collector.MetricsCollector(config)._fetch_kv_store_metrics()
    tokenizer = TokenizerManager(config).tokenizer  # inference_manager.py: every worker builds it at start
    return {
        "config_path": config.config_path,
        "scheduler_type": config.scheduler_config.scheduler_type.value,
        "conductor": {"service": events.conductor_service, "port": events.http_server_port,
                      "model_path": events.model_path},
        "store_metrics_urls": fetched,
        "tokenizer": None if tokenizer is None else tokenizer("hello world")["input_ids"],
    }


def controller_api():
    from motor.config.controller import ControllerConfig
    api = ControllerConfig.from_json().api_config
    return api.controller_api_host, api.controller_api_port


def coordinator_api():
    from motor.config.coordinator import CoordinatorConfig
    api = CoordinatorConfig.from_json().api_config
    return api.coordinator_api_host, api.coordinator_api_mgmt_port  # the management server serves the probe routes


def node_manager_api():
    from motor.config.node_manager import NodeManagerConfig
    api = NodeManagerConfig.from_json().api_config
    return api.pod_ip, api.node_manager_port


# Where each Motor process serves the routes its probes ask for, by Motor's own config loaders.
API_ADDRESS = {"motor.controller.main": controller_api, "motor.coordinator.main": coordinator_api,
               "motor.node_manager.main": node_manager_api}

record = {"argv": sys.argv[1:], "env": dict(os.environ), "uid": os.getuid(), "files": {}, "prepare": None,
          "motor": None}
for var in ("MOONCAKE_CONFIG_PATH", "MMC_LOCAL_CONFIG_PATH", "USER_CONFIG_PATH", "RANKTABLE_PATH", "HCCL_PATH",
            "CONDUCTOR_CONFIG_PATH"):
    path = os.environ.get(var)
    if path:
        record["files"][var] = {
            "path": path, "exists": os.path.isfile(path), "symlink": os.path.islink(path),
            "writable": os.access(path, os.W_OK) if os.path.exists(path) else None,
            "text": open(path, encoding="utf-8").read() if os.path.isfile(path) else None,
        }
if sys.argv[1:3] == ["-m", "motor.node_manager.main"] and os.environ.get("KV_STORE_BACKEND") == "memcache":
    # Motor's node manager prepares the LocalService conf before it starts vLLM: run Motor's own code for it.
    sys.path.insert(0, os.environ["MOTOR_CHECKOUT"])
    from motor.config.node_manager import NodeManagerConfig
    from motor.node_manager.core.services.local_service import LocalService
    user_config = json.load(open(os.environ["USER_CONFIG_PATH"], encoding="utf-8"))
    config = NodeManagerConfig()
    NodeManagerConfig._parse_kv_cache_store_config(config, user_config)
    hardware = user_config["motor_deploy_config"]["hardware_type"]
    try:
        LocalService(hardware, config.kv_cache_store_config).prepare(endpoints_count=1)
        path = config.kv_cache_store_config.local_config_path
        record["prepare"] = {"ok": True, "path": path, "text": open(path, encoding="utf-8").read()}
    except OSError as error:
        record["prepare"] = {"ok": False, "error": f"{type(error).__name__}: {error}"}
if sys.argv[1:3] in (["-m", "motor.coordinator.main"], ["-m", "motor.controller.main"], ["-m", "motor.node_manager.main"]):
    # What each Motor process does first, with its own code, on the pod's env and mounts: load its config (Motor's
    # loaders fall back to defaults on a bad file, so the record carries values that prove ours was read) and, for
    # the coordinator, start its TokenizerManager and compute the store metrics URL its collector fetches.
    sys.path.insert(0, os.environ["MOTOR_CHECKOUT"])
    import traceback
    try:
        record["motor"] = motor_process(sys.argv[2])
    except Exception:
        record["motor"] = {"error": traceback.format_exc()}
with open(os.environ["KVPOOL_RECORD"], "a", encoding="utf-8") as out:
    out.write(json.dumps(record) + "\n")
if sys.argv[1:2] == ["-m"] and sys.argv[2] in API_ADDRESS and os.environ.get("KVPOOL_SERVING"):
    import socket, time
    sys.path.insert(0, os.environ["MOTOR_CHECKOUT"])
    host, port = API_ADDRESS[sys.argv[2]]()
    if os.fork() == 0:  # marks the API as serving once it accepts a connection
        while True:
            try:
                socket.create_connection((host, port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        with open(os.environ["KVPOOL_SERVING"] + ".tmp", "w", encoding="utf-8") as out:
            json.dump({"host": host, "port": port}, out)
        os.replace(os.environ["KVPOOL_SERVING"] + ".tmp", os.environ["KVPOOL_SERVING"])
        os._exit(0)
    # Motor's process itself, as `python3 -m` runs it, in a fresh interpreter: nothing this recorder loaded (Motor's
    # singletons among them) reaches it.
    run = "import os, runpy, sys; sys.path.insert(0, os.environ['MOTOR_CHECKOUT']); " \
          "runpy.run_module(sys.argv.pop(1), run_name='__main__', alter_sys=True)"
    os.execv(sys.executable, [sys.executable, "-c", run, sys.argv[2]])
'''
# What the python3 of a probe or preStop script (Motor's probe.sh and prestop.sh run probe.py and prestop.py) sees.
HOOK_RECORDER = r'''
import json, os, sys

with open(sys.argv[1], "a", encoding="utf-8") as out:
    out.write(json.dumps({"argv": sys.argv[2:], "env": dict(os.environ), "uid": os.getuid()}) + "\n")
'''
PROBE_KINDS = ("startupProbe", "readinessProbe", "livenessProbe")
SERVING_TIMEOUT_S = 60


@dataclass
class Boot:
    returncode: int
    output: str
    records: list[dict[str, Any]]
    opened: set[tuple[str, str]]  # (ConfigMap, key) of each ConfigMap file the pod opened
    # probe kind -> (exit code, output) of the container's own probe command (boot(..., probes=True))
    probes: dict[str, tuple[int, str]]
    serving: dict[str, Any] | None  # where the Motor process's API listened (boot(..., probes=True))
    # argv, env and uid of the python3 each probe or hook script of Motor's started (boot(..., hooks=True))
    hook_processes: list[dict[str, Any]]

    def process(self, module: str) -> dict[str, Any]:
        found = [r for r in self.records if r["argv"][:2] == ["-m", module]]
        assert len(found) == 1, f"{module} started {len(found)} times; output:\n{self.output}"
        return found[0]

    def command(self, name: str) -> dict[str, Any]:
        """The one record of a stubbed binary (not a python module), e.g. mooncake_conductor."""
        found = [r for r in self.records if r["argv"][:1] == [name]]
        assert len(found) == 1, f"{name} started {len(found)} times; output:\n{self.output}"
        return found[0]

    def failures(self) -> list[str]:
        return [line for line in self.output.splitlines() if any(mark in line for mark in FAILURE_MARKS)]


def _write_stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text("#!/bin/bash\n" + body)
    path.chmod(0o755)


def _fs_group(path: Path, group: int | None) -> None:
    """SetVolumeOwnership on a read-only volume's folder or file: the pod's fsGroup as its group, readable by it (a
    folder also searchable, and setgid)."""
    if group is not None:
        os.chown(path, -1, group)
        path.chmod(path.stat().st_mode & 0o7777 | (0o2550 if path.is_dir() else 0o440))


def _configmap_volume(folder: Path, data: dict[str, str], mode: int, group: int | None) -> Path:
    """As the kubelet writes a ConfigMap volume: a timestamped folder, `..data` pointing at it, a symlink per key;
    `group`: the pod's fsGroup. Returns the timestamped folder."""
    payload = folder / "..2026_12_01_00_00_00.000000000"
    payload.mkdir(parents=True)
    for key, text in data.items():
        (payload / key).write_text(text)
        (payload / key).chmod(mode)
        _fs_group(payload / key, group)
        os.symlink(f"..data/{key}", folder / key)
    os.symlink(payload.name, folder / "..data")
    _fs_group(payload, group)
    _fs_group(folder, group)
    return payload


def container_env(container: dict[str, Any], secrets: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, str]:
    """The container's env as the kubelet resolves it (makeEnvironmentVariables): the data of envFrom's Secrets
    (`secrets`: name -> data) as written, then each entry in order, a value with its `$(VAR)` references to what is
    defined before it expanded (tests/kubelet_env.py), a fieldRef with FAKE_IPS' stand-in."""
    env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        if set(source) - {"secretRef", "prefix"}:
            raise ValueError(f"envFrom {source}: only a Secret is laid out here")
        name = source["secretRef"]["name"]
        if name not in (secrets or {}):
            raise ValueError(f"the container loads Secret {name} with envFrom: give its data (secrets=)")
        env.update({source.get("prefix", "") + key: value for key, value in (secrets or {})[name].items()})
    for entry in container.get("env") or []:
        if "value" in entry:
            env[entry["name"]] = kubelet_expand(entry["value"], env)
        elif "fieldRef" in entry.get("valueFrom", {}):
            path = entry["valueFrom"]["fieldRef"]["fieldPath"]
            env[entry["name"]] = FAKE_IPS.get(path, "svc" if path == "metadata.namespace" else path)
    return env


def boot(
    pod_spec: dict[str, Any],
    container_name: str,
    config_maps: dict[str, dict[str, str]],
    hardware_family: str,
    motor_checkout: Path,
    workdir: Path,
    npus: int = 2,
    node_dirs: Mapping[str, Path] | None = None,
    hooks: bool = False,
    probes: bool = False,
    secrets: Mapping[str, Mapping[str, str]] | None = None,
    unprivileged: bool = False,
) -> Boot:
    """Run the container's command (boot.sh) with its env and mounts; return what Motor's scripts did.
    `node_dirs`: node folder -> a local folder standing in for it, bound where the pod mounts that hostPath (read-only
    when the mount is), e.g. the weights a coordinator reads its tokenizer from. `hooks`: then run the container's
    exec probes and preStop command in the same pod, as the kubelet would (their exit codes are not the boot's).
    `probes`: run the role's Motor process for real (from `motor_checkout`, which then must hold Motor's generated
    modules: tests/conformance/motor_build.py) and then the container's exec probes against it. `secrets`: the data
    of the Secrets the container loads with envFrom. `unprivileged`: the container runs as nobody (then `workdir`
    must be reachable by nobody: one under tests/hostile/shell_roads.py folder_both_can_write())."""
    container = next(c for c in pod_spec["containers"] if c["name"] == container_name)
    volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
    stubs, record, serving = workdir / "stubs", workdir / "record.jsonl", workdir / "serving.json"
    hook_record = workdir / "hooks.jsonl"
    security = pod_spec.get("securityContext") or {}
    fs_group = security.get("fsGroup")
    if unprivileged:
        blocked = [folder for folder in workdir.resolve().parents if not folder.stat().st_mode & 0o001]
        if blocked:
            raise ValueError(f"nobody cannot reach boot's workdir {workdir} through {blocked[0]}; use one under "
                             "tests/hostile/shell_roads.py folder_both_can_write()")
    stubs.mkdir(parents=True)
    if unprivileged:  # the pod's processes write their records (and, with probes, their outputs) there
        os.chown(workdir, NOBODY, NOBODY)
    (workdir / "recorder.py").write_text(RECORDER)
    (workdir / "hook_recorder.py").write_text(HOOK_RECORDER)
    python = sys.executable
    _write_stub(stubs, "python3", textwrap.dedent(f"""\
        case "$1 $2" in
          "-m motor."*|"-m ccae_reporter"*) exec {python} {workdir}/recorder.py "$@" ;;
        esac
        case "$1" in
          */probe.py|*/prestop.py) {python} {workdir}/hook_recorder.py {hook_record} "$@" ;;
        esac
        exec {python} "$@"
    """))
    # kv_conductor.sh's last command: the conductor binary the image carries (Mooncake's or Motor's kv-conductor).
    _write_stub(stubs, "mooncake_conductor", f'exec {python} {workdir}/recorder.py mooncake_conductor "$@"\n')
    _write_stub(stubs, "lspci", f'echo "00:00.0 Processing accelerators: Device 19e5:{PCI_IDS[hardware_family]}"\n')
    _write_stub(stubs, "hccn_tool", 'echo "ipaddr:10.0.0.$2"\necho "netmask:255.255.255.0"\n')
    _write_stub(stubs, "npu-smi", 'echo "Super Device ID : $(( $5 * 2 + $7 ))"\n')

    mounts: list[str] = []  # shell lines run inside the namespace, after the overlays
    watched: dict[Path, tuple[str, str]] = {}  # a ConfigMap volume's file -> (ConfigMap, key)
    for index, mount in enumerate(container.get("volumeMounts") or []):
        volume = volumes[mount["name"]]
        target = mount["mountPath"]
        if "configMap" in volume:
            data = config_maps[volume["configMap"]["name"]]
            source = workdir / f"volume-{index}"
            if "subPath" in mount:
                source.mkdir()
                (source / mount["subPath"]).write_text(data[mount["subPath"]])
                file = source / mount["subPath"]
                _fs_group(file, fs_group)
                mounts.append(f"mkdir -p {shlex.quote(str(Path(target).parent))} && touch {shlex.quote(target)}")
                mounts.append(f"mount --bind -o ro {shlex.quote(str(file))} {shlex.quote(target)}")
            else:
                payload = _configmap_volume(source, data, volume["configMap"].get("defaultMode", 0o644), fs_group)
                watched.update({payload / key: (volume["configMap"]["name"], key) for key in data})
                mounts.append(f"mkdir -p {shlex.quote(target)}")
                mounts.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(target)}")
                mounts.append(f"mount -o remount,bind,ro {shlex.quote(target)}")
        elif (volume.get("hostPath") or {}).get("path") in (node_dirs or {}):
            local = shlex.quote(str((node_dirs or {})[volume["hostPath"]["path"]]))
            mounts.append(f"mkdir -p {shlex.quote(target)} && mount --bind {local} {shlex.quote(target)}")
            if mount.get("readOnly"):
                mounts.append(f"mount -o remount,bind,ro {shlex.quote(target)}")
        elif (volume.get("hostPath") or {}).get("type") == "DirectoryOrCreate":
            # The kubelet creates the node's folder before the pod starts; Motor's common.sh chmods it.
            mounts.append(f"mkdir -p {shlex.quote(target)}")
    env = container_env(container, secrets)
    # ExpandContainerCommandAndArgs: with the resolved env; an exec probe: with the entries as written; a hook: as is
    argv = [kubelet_expand(part, env) for part in [*container["command"], *(container.get("args") or [])]]
    probe_env = static_env(container)
    env.update({
        "PATH": f"{stubs}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/root",
        "KVPOOL_RECORD": str(record),
        **({"KVPOOL_SERVING": str(serving)} if probes else {}),
        "MOTOR_CHECKOUT": str(motor_checkout),
    })
    inside = [path for path in OVERLAID if workdir.resolve().is_relative_to(path)]
    if inside:  # the overlay would hide what the boot records there
        raise ValueError(f"boot's workdir {workdir} lies in {inside[0]}, which the boot overlays; use one under /tmp")
    layers = []
    for index, path in enumerate(OVERLAID):
        upper, work = workdir / f"upper-{index}", workdir / f"work-{index}"
        upper.mkdir()
        work.mkdir()
        layers.append(f"mount -t overlay overlay -o lowerdir={path},upperdir={upper},workdir={work} {path}")
    devices = " ".join(f"/dev/davinci{i}" for i in range(npus))
    setup = " && ".join([
        *layers, *mounts,
        "mkdir -p /usr/local/Ascend/ascend-toolkit",
        "echo 'export ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest' > /usr/local/Ascend/ascend-toolkit/set_env.sh",
        f"touch {devices}",
    ])
    in_pod = f"env -i {' '.join(shlex.quote(f'{k}={v}') for k, v in env.items())}"
    command = f"{in_pod} {' '.join(shlex.quote(part) for part in argv)}"
    kinds = [kind for kind in PROBE_KINDS if "exec" in container.get(kind, {})] if probes else []
    hook_commands: list[list[str]] = []
    if hooks:
        hook_commands = [[kubelet_expand(part, probe_env) for part in probe["exec"]["command"]]
                         for key, probe in container.items() if key.endswith("Probe") and "exec" in probe]
        hook_commands += [handler["exec"]["command"] for handler in (container.get("lifecycle") or {}).values()
                          if "exec" in handler]
    if probes:
        # boot.sh in the background; once Motor's API listens, each probe as the kubelet execs it, then the script
        # ends, and with it (PID 1 of the namespace) every process of the pod.
        run = [f"{command} > {workdir}/boot.out 2>&1 &",
               f"for _ in $(seq {SERVING_TIMEOUT_S * 10}); do [ -s {serving} ] && break; sleep 0.1; done"]
        for kind in kinds:
            probe = [kubelet_expand(part, probe_env) for part in container[kind]["exec"]["command"]]
            probe_command = " ".join(shlex.quote(part) for part in probe)
            run.append(f"{in_pod} {probe_command} > {workdir}/{kind}.out 2>&1; echo $? > {workdir}/{kind}.rc")
        run.append(f"cat {workdir}/boot.out")
    elif hook_commands:
        runs = "; ".join(f"{in_pod} {' '.join(shlex.quote(part) for part in hook)}" for hook in hook_commands)
        # Motor's node manager has exited (a stub); prestop.sh pauses the running one it finds by its process title.
        node_manager = "(exec -a MindIE-Motor::NodeManager sleep 60) &"
        run = [f"{command}; status=$?; {node_manager} {runs}; exit $status"]
    else:
        run = [f"exec {command}"]
    if unprivileged:
        # The container's user from here on, PID 1 included, whose stdout and stderr are the user's as runc makes
        # them (fixStdioPermissions): Motor's prestop.sh reopens PID 1's stdout.
        groups = [*([] if fs_group is None else [fs_group]), *security.get("supplementalGroups", [])]
        run = [f"chown {NOBODY}:{NOBODY} /proc/self/fd/1 /proc/self/fd/2",
               f"exec {' '.join(as_user(True, groups))} bash -c {shlex.quote(chr(10).join(run))}"]
    script = "\n".join([f"set -e; {setup}; ip link set lo up; set +e; cd /", *run])
    # --net: the pod's own network namespace (loopback only); --mount-proc: the pod's own /proc (Motor's prestop.sh
    # writes to PID 1's stdout and looks for its processes)
    with FileOpens(watched) as opens:
        result = subprocess.run(
            ["unshare", "--mount", "--pid", "--net", "--fork", "--mount-proc", "--propagation", "private", "bash", "-c",
             script],
            capture_output=True, text=True, timeout=120 + (SERVING_TIMEOUT_S if probes else 0), stdin=subprocess.DEVNULL,
        )
    records = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    probe_results = {
        kind: (int((workdir / f"{kind}.rc").read_text()), (workdir / f"{kind}.out").read_text())
        for kind in kinds if (workdir / f"{kind}.rc").exists()
    }
    where = json.loads(serving.read_text()) if serving.exists() and serving.read_text() else None
    hook_records = [json.loads(line) for line in hook_record.read_text().splitlines()] if hook_record.exists() else []
    return Boot(result.returncode, result.stdout + result.stderr, records, opens.opened(), probe_results, where,
                hook_records)
