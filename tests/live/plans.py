"""Scenario plans: the processes of a rendered stack as tests/live/scenarios start them, and the runner.

Which pod is which: the store's Deployment/DaemonSet/StatefulSet pods keep their rendered names where
Kubernetes would give them (StatefulSet `<name>-<i>`), Deployment replicas are `<name>-<i>` here. The engine
pod is the first engine Deployment (prefill instance 0) of the stack: its rendered env and client-file mounts
are used; only its command is replaced by the stand-in client in scenarios/ (there is no vLLM/NPU here).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

from tests.live.rendered import BACKENDS, Loopback, Rendered

LIVE = Path(__file__).resolve().parent
SCENARIOS = LIVE / "scenarios"
STORE = "mindie-motor-kv-store"  # kvpool.components.kv_store.common.STORE_NAME


def python(venv: str) -> str:
    return str(BACKENDS / venv / "bin" / "python")


def configmaps(rendered: Rendered, change: Callable[[str, str], str] | None = None) -> dict[str, dict[str, str]]:
    """Every rendered ConfigMap's data; `change(key, content)` may alter a file (named in the test)."""
    maps = {}
    for obj in rendered.objects:
        if obj["kind"] == "ConfigMap":
            data = obj.get("data") or {}
            maps[obj["metadata"]["name"]] = {k: change(k, v) if change else v for k, v in data.items()}
    return maps


def _is_engine(container: dict[str, Any], engine_env: dict[str, str]) -> bool:
    names = {env.get("name") for env in container.get("env", [])}
    return set(engine_env) <= names


def engine_deployment(rendered: Rendered) -> dict[str, Any]:
    """The first engine Deployment (by name): the one whose container carries all of kv_store.engine_env (the
    coordinator carries only some of it)."""
    contract = rendered.kv_store["engine_env"]
    engines = sorted(
        (o for o in rendered.objects if o["kind"] == "Deployment"
         and any(_is_engine(c, contract) for c in o["spec"]["template"]["spec"]["containers"])),
        key=lambda o: o["metadata"]["name"],
    )
    assert engines, f"{rendered.stack}: no Deployment's container sets all of {sorted(contract)}"
    return engines[0]


def engine_process(rendered: Rendered, lb: Loopback, pod: str, venv: str, script: str, maps) -> dict[str, Any]:
    spec = engine_deployment(rendered)["spec"]["template"]["spec"]
    container = next(c for c in spec["containers"] if _is_engine(c, rendered.kv_store["engine_env"]))
    return lb.process(container, pod, venv, maps, spec["volumes"], command=[python(venv), str(SCENARIOS / script)])


def container_ports(container: dict[str, Any]) -> list[int]:
    return [port["containerPort"] for port in container.get("ports", [])]


def named_port(container: dict[str, Any], name: str) -> int:
    return next(port["containerPort"] for port in container["ports"] if port["name"] == name)


def add_etcd(rendered: Rendered, lb: Loopback) -> list[str]:
    """The etcd StatefulSet's pods with their DNS names (`<pod>.<serviceName>.<ns>.svc.cluster.local`)."""
    sts = rendered.object("StatefulSet", f"{STORE}-etcd")
    service = sts["spec"]["serviceName"]
    container = rendered.container("StatefulSet", f"{STORE}-etcd")
    pods = [f"{sts['metadata']['name']}-{i}" for i in range(rendered.replicas("StatefulSet", f"{STORE}-etcd"))]
    for pod in pods:
        lb.add_pod(pod, container_ports(container), [f"{pod}.{service}.{rendered.namespace}.svc.cluster.local"])
    return pods


def etcd_processes(rendered: Rendered, lb: Loopback, pods: list[str]) -> list[dict[str, Any]]:
    sts = rendered.object("StatefulSet", f"{STORE}-etcd")
    container = rendered.container("StatefulSet", f"{STORE}-etcd")
    claims = [{"name": t["metadata"]["name"], "persistentVolumeClaim": {}} for t in sts["spec"]["volumeClaimTemplates"]]
    return [lb.process(container, pod, None, volumes=claims) for pod in pods]


def probe_plan(lb: Loopback, pod: str, container: dict[str, Any], process: dict[str, Any]) -> dict[str, Any]:
    """The container's rendered readiness and liveness probes, for scenarios' kube_probe (the kubelet's way)."""
    named = {port["name"]: port["containerPort"] for port in container.get("ports", [])}
    plans = {}
    for key in ("readinessProbe", "livenessProbe"):
        probe = container.get(key)
        if probe is None:
            continue
        plan: dict[str, Any] = {"timeout_s": probe.get("timeoutSeconds", 1)}  # the kubelet's default: 1 s
        if "exec" in probe:  # no $(VAR) expansion in probes; the container's environment
            plan |= {"kind": "exec", "argv": [lb.rewrite(part, pod) for part in probe["exec"]["command"]],
                     "env": process["env"]}
        else:
            kind = "httpGet" if "httpGet" in probe else "tcpSocket"
            port = probe[kind]["port"]
            plan |= {"kind": "http" if kind == "httpGet" else "tcp",
                     "port": lb.pods[pod].port(named[port] if isinstance(port, str) else port),
                     "path": probe[kind].get("path", "/")}
        plans[key.removesuffix("Probe")] = plan
    return plans


# ---------------------------------------------------------------------------------------------------------------
# Running a scenario


def run_scenario(script: str, venv: str, plan: dict[str, Any], work: Path, timeout: float) -> dict[str, Any]:
    """`unshare -n sh -c 'ip link set lo up && exec <venv python> scenarios/<script> PLAN'`: a private network
    namespace with only loopback. Returns the scenario's JSON line; asserts no process it started outlived it."""
    work.mkdir(parents=True, exist_ok=True)
    plan = {**plan, "work": str(work), "timeout": timeout}
    plan_file = work / f"plan-{Path(script).stem}.json"
    plan_file.write_text(json.dumps(plan, indent=2))
    command = ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"',
               python(venv), str(SCENARIOS / script), str(plan_file)]
    started = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout + 30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # the scenario and everything it started share this group
        stdout, stderr = process.communicate(timeout=10)
        raise AssertionError(
            f"{script} overran {timeout + 30:.0f} s and was killed; stderr: {stderr[-3000:]!r}"
        ) from None
    lines = stdout.decode().strip().splitlines()
    assert lines, f"{script} printed nothing (rc {process.returncode}); stderr: {stderr.decode()[-3000:]}"
    result = json.loads(lines[-1])
    result["wall_s"] = round(time.monotonic() - started, 2)
    survivors = [pid for pid in result.get("pids", []) if is_running(pid)]
    assert not survivors, f"{script}: processes outlived the scenario: {survivors}"
    assert "error" not in result, (
        f"{script} failed: {result['error']}\n{result.get('traceback', '')}\n"
        + "\n".join(f"--- {name}\n{tail}" for name, tail in result.get("logs", {}).items())
    )
    print(f"\n{script}: {json.dumps({k: v for k, v in result.items() if k != 'pids'})}", file=sys.stderr)
    return result


def is_running(pid: int) -> bool:
    """A live process (not a zombie): scenarios must leave none behind."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"
