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
- With `probes=True` the engine's node manager is Motor's own (`motor.node_manager.main` from the checkout: its
  config loading, port setup, API server and registration loop; only vLLM, which it starts when the controller
  asks, is absent), and once its API listens the container's own probe commands run, each as the kubelet execs it,
  with the container's env. The boot has its own network namespace (loopback only), as a pod has.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
record = {"argv": sys.argv[1:], "env": dict(os.environ), "files": {}, "prepare": None}
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
with open(os.environ["KVPOOL_RECORD"], "a", encoding="utf-8") as out:
    out.write(json.dumps(record) + "\n")
if sys.argv[1:3] == ["-m", "motor.node_manager.main"] and os.environ.get("KVPOOL_SERVING"):
    import socket, threading, time
    sys.path.insert(0, os.environ["MOTOR_CHECKOUT"])
    import motor.node_manager.main as node_manager
    from motor.node_manager.core.api_ready_event import wait_until_api_ready

    def mark_serving():
        """Motor marks its API ready in the app's lifespan, just before uvicorn binds: wait for the socket too."""
        wait_until_api_ready()
        api = node_manager.config.api_config
        while True:
            try:
                socket.create_connection((api.pod_ip, api.node_manager_port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        with open(os.environ["KVPOOL_SERVING"] + ".tmp", "w", encoding="utf-8") as out:
            json.dump({"host": api.pod_ip, "port": api.node_manager_port}, out)
        os.replace(os.environ["KVPOOL_SERVING"] + ".tmp", os.environ["KVPOOL_SERVING"])

    threading.Thread(target=mark_serving, daemon=True).start()
    sys.exit(node_manager.main())
'''
PROBE_KINDS = ("startupProbe", "readinessProbe", "livenessProbe")
SERVING_TIMEOUT_S = 60


@dataclass
class Boot:
    returncode: int
    output: str
    records: list[dict[str, Any]]
    # probe kind -> (exit code, output) of the container's own probe command (boot(..., probes=True))
    probes: dict[str, tuple[int, str]]
    serving: dict[str, Any] | None  # where Motor's node manager API listened

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


def _configmap_volume(folder: Path, data: dict[str, str], mode: int) -> None:
    """As the kubelet writes a ConfigMap volume: a timestamped folder, `..data` pointing at it, a symlink per key."""
    payload = folder / "..2026_12_01_00_00_00.000000000"
    payload.mkdir(parents=True)
    for key, text in data.items():
        (payload / key).write_text(text)
        (payload / key).chmod(mode)
        os.symlink(f"..data/{key}", folder / key)
    os.symlink(payload.name, folder / "..data")


def container_env(container: dict[str, Any]) -> dict[str, str]:
    """The container's env as the kubelet resolves it: fieldRefs, then `$(VAR)` of variables defined earlier."""
    env: dict[str, str] = {}
    for entry in container.get("env") or []:
        if "value" in entry:
            env[entry["name"]] = re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                                        lambda m: env.get(m.group(1), m.group(0)), entry["value"])
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
    probes: bool = False,
) -> Boot:
    """Run the container's command (boot.sh) with its env and mounts; return what Motor's scripts did. With
    `probes`, run Motor's node manager for real and then the container's exec probes against it."""
    container = next(c for c in pod_spec["containers"] if c["name"] == container_name)
    volumes = {v["name"]: v for v in pod_spec.get("volumes") or []}
    stubs, record, serving = workdir / "stubs", workdir / "record.jsonl", workdir / "serving.json"
    stubs.mkdir(parents=True)
    (workdir / "recorder.py").write_text(RECORDER)
    python = sys.executable
    _write_stub(stubs, "python3", textwrap.dedent(f"""\
        case "$1 $2" in
          "-m motor."*|"-m ccae_reporter"*) exec {python} {workdir}/recorder.py "$@" ;;
        esac
        exec {python} "$@"
    """))
    # kv_conductor.sh's last command: the conductor binary the image carries (Mooncake's or Motor's kv-conductor).
    _write_stub(stubs, "mooncake_conductor", f'exec {python} {workdir}/recorder.py mooncake_conductor "$@"\n')
    _write_stub(stubs, "lspci", f'echo "00:00.0 Processing accelerators: Device 19e5:{PCI_IDS[hardware_family]}"\n')
    _write_stub(stubs, "hccn_tool", 'echo "ipaddr:10.0.0.$2"\necho "netmask:255.255.255.0"\n')
    _write_stub(stubs, "npu-smi", 'echo "Super Device ID : $(( $5 * 2 + $7 ))"\n')

    mounts: list[str] = []  # shell lines run inside the namespace, after the overlays
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
                mounts.append(f"mkdir -p {shlex.quote(str(Path(target).parent))} && touch {shlex.quote(target)}")
                mounts.append(f"mount --bind -o ro {shlex.quote(str(file))} {shlex.quote(target)}")
            else:
                _configmap_volume(source, data, volume["configMap"].get("defaultMode", 0o644))
                mounts.append(f"mkdir -p {shlex.quote(target)}")
                mounts.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(target)}")
                mounts.append(f"mount -o remount,bind,ro {shlex.quote(target)}")
        elif (volume.get("hostPath") or {}).get("type") == "DirectoryOrCreate":
            # The kubelet creates the node's folder before the pod starts; Motor's common.sh chmods it.
            mounts.append(f"mkdir -p {shlex.quote(target)}")
    env = container_env(container)
    env.update({
        "PATH": f"{stubs}:/usr/local/bin:/usr/bin:/bin",
        "HOME": "/root",
        "KVPOOL_RECORD": str(record),
        "MOTOR_CHECKOUT": str(motor_checkout),
        **({"KVPOOL_SERVING": str(serving)} if probes else {}),
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
    env_prefix = "env -i " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items())
    command = " ".join(shlex.quote(part) for part in container["command"])
    if probes:
        kinds = [kind for kind in PROBE_KINDS if "exec" in container.get(kind, {})]
        # boot.sh in the background; once Motor's API listens, each probe as the kubelet execs it, then the script
        # ends, and with it (PID 1 of the namespace) every process of the pod.
        run = [f"{env_prefix} {command} > {workdir}/boot.out 2>&1 &",
               f"for _ in $(seq {SERVING_TIMEOUT_S * 10}); do [ -s {serving} ] && break; sleep 0.1; done"]
        for kind in kinds:
            probe_command = " ".join(shlex.quote(part) for part in container[kind]["exec"]["command"])
            run.append(f"{env_prefix} {probe_command} > {workdir}/{kind}.out 2>&1; echo $? > {workdir}/{kind}.rc")
        run.append(f"cat {workdir}/boot.out")
    else:
        kinds = []
        run = [f"exec {env_prefix} {command}"]
    script = "\n".join([f"set -e; {setup}; ip link set lo up; set +e; cd /", *run])
    result = subprocess.run(
        ["unshare", "--mount", "--pid", "--net", "--fork", "--propagation", "private", "bash", "-c", script],
        capture_output=True, text=True, timeout=120 + (SERVING_TIMEOUT_S if probes else 0), stdin=subprocess.DEVNULL,
    )
    records = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    probe_results = {
        kind: (int((workdir / f"{kind}.rc").read_text()), (workdir / f"{kind}.out").read_text())
        for kind in kinds if (workdir / f"{kind}.rc").exists()
    }
    where = json.loads(serving.read_text()) if serving.exists() and serving.read_text() else None
    return Boot(result.returncode, result.stdout + result.stderr, records, probe_results, where)
