"""deploy.py's pod fields by default: for every example stack, Motor's own `deploy.py --dry-run` renders the same
user_config.json (our motor-config's) and env.json (the stack's env sections), and every field of every Motor pod
spec (controller, coordinator, each engine, the KV conductor) is compared with ours. The only differences allowed are
DIFFERENCES below, each with its reason; an entry no stack needs any more fails too.

deploy.py runs from a writable copy of Motor's examples/deployer with tests/deploy_py.py's stub `kubectl`, which
answers its one cluster query with a node carrying the labels our engines select."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kvpool.policies.rules.service_set import (
    is_service_set,
    role_pod_template,
    service_set_roles,
)
from kvpool.settings.loader import load_from_pulumi_config
from tests import deploy_py
from tests.conformance.test_motor_boot import STACKS, rendered_with_motor
from tests.program_runs import Rendered, stack_values

# Our workload -> its role (deploy.py names the Deployments alike; in a service set each role is one template).
WORKLOADS = {
    "mindie-motor-controller": "controller",
    "mindie-motor-coordinator": "coordinator",
    "mindie-motor-kv-conductor": "kv_conductor",
    "vllm-p0": "prefill",
    "vllm-d0": "decode",
}
ENGINES = ("prefill", "decode")
CONTROL_PLANE = ("controller", "coordinator")
MOTOR_ROLES = (*CONTROL_PLANE, *ENGINES, "kv_conductor")
ENV_SECTION = {"controller": "motor_controller_env", "coordinator": "motor_coordinator_env",
               "prefill": "motor_engine_prefill_env", "decode": "motor_engine_decode_env",
               "kv_conductor": "motor_kv_conductor_env"}


@dataclass(frozen=True)
class Difference:
    """A pod-spec field where we differ from deploy.py on purpose. `field` is a regular expression over the
    flattened path (`containers[main].env[NAME].value`; the pod's first container is `main`, named lists are keyed by
    name); `{env_json}` in it stands for the names the role's env.json sections set. `ours`: True when only we set
    the field, False when only deploy.py does, None when both do with other values."""

    field: str
    ours: bool | None
    roles: tuple[str, ...]
    reason: str


STORE_CLIENT = r"(?:MOONCAKE_CONFIG_PATH|MMC_LOCAL_SERVICE_MODE|DS_WORKER_ADDR|DATASYSTEM_CLIENT_LOG_DIR)"
MOUNT = r"(?:volumes|containers\[main\]\.volumeMounts)"
DIFFERENCES = (
    Difference(r"containers\[main\]\.name", None, MOTOR_ROLES,
               "the container is named after its role (`kubectl logs -c controller`); deploy.py repeats the "
               "workload's name"),
    Difference(r"containers\[main\]\.imagePullPolicy", False, MOTOR_ROLES,
               "deploy.py's IfNotPresent is Kubernetes' default for a tagged image; `:latest` is pulled again, as "
               "Kubernetes intends"),
    Difference(r"containers\[main\]\.command", None, MOTOR_ROLES,
               "the same boot.sh without deploy.py's trailing `;` (a no-op in bash)"),
    Difference(r"containers\[main\]\.env\[JOB_NAME\]\.value", None, MOTOR_ROLES,
               "without deploy.py's per-run timestamp, which would restart every pod on every run"),
    Difference(r"containers\[main\]\.env\[(?:{env_json})\]\.value", True, MOTOR_ROLES,
               "env.json's values also as container env (deploy.py exports them from the role's script only), so "
               "`kubectl describe` and the policy pack see them"),
    Difference(r"containers\[main\]\.env\[(?:PYTHONHASHSEED|ASCEND_CONNECT_TIMEOUT|ASCEND_TRANSFER_TIMEOUT)\]\.value",
               True, ENGINES, "motor-kvpool's engine defaults: one hash seed for the pool, timeouts below Mooncake's lease"),
    Difference(r"containers\[main\]\.readinessProbe\..*", True, ENGINES,
               "Motor's node manager serves GET /readiness (node_manager_api.py:211), 503 until its engines run; "
               "deploy.py's engine template has no probe"),
    Difference(r"containers\[main\]\.startupProbe\.timeoutSeconds", True, CONTROL_PLANE,
               "probe.py starts Python and imports httpx: the kubelet's default 1 s fails it on a busy node"),
    Difference(r"containers\[main\]\.(?:readiness|liveness)Probe\.failureThreshold", True, ("controller",),
               "controller_template.yaml's 5 in a service set too (infer_service_template.yaml leaves the default 3)"),
    Difference(r"terminationGracePeriodSeconds", False, MOTOR_ROLES,
               "deploy.py kills the controller and coordinator at once (0 s); Kubernetes' default 30 s lets Motor's "
               "signal handlers stop their modules (engines: deploy.py's 30 s is the default)"),
    Difference(r"automountServiceAccountToken", True, ("controller",),
               "said explicitly: true is Kubernetes' default, and the controller calls the API"),
    Difference(MOUNT + r"\[(?:data|mnt|queue-schedule)\]\..*", False, MOTOR_ROLES,
               "whole host folders no Motor script or process reads (grep of Motor 8919e55); storage[] names what a "
               "service needs"),
    Difference(MOUNT + r"\[coredump\]\..*", False, (*CONTROL_PLANE, "kv_conductor"),
               "core dumps of the control plane stay in the container: common.sh's core_pattern (sysctl) needs a "
               "privilege these pods do not have"),
    Difference(MOUNT + r"\[weight-mount\]\..*", False, ("coordinator",),
               "deploy.py mounts the weights on every coordinator; ours only where Motor's coordinator loads the "
               "prefill model's tokenizer (a KV conductor and prefill kv-events-config: rules.coordinator_reads_model)"),
    Difference(r"containers\[main\]\.volumeMounts\[weight-mount\]\.readOnly", True, ("coordinator",),
               "the coordinator only reads the tokenizer from the weights"),
    Difference(r"containers\[main\]\.volumeMounts\[[a-z0-9-]+\]\.readOnly|volumes\[[a-z0-9-]+\]\.persistentVolumeClaim\.readOnly",
               True, ENGINES, "weights, driver files, hccn_tool and hccn.conf are only read (README, Trust boundaries); "
               "UCM's storage is written"),
    Difference(r"containers\[main\]\.securityContext\.capabilities\.drop", True, ENGINES,
               "capabilities no Motor process uses (kvpool/components/engine_pool.py)"),
    Difference(r"volumes\[weight-mount\]\.hostPath\.type", True, (*ENGINES, "coordinator"),
               "Directory: a missing weight folder fails the pod at once instead of starting vLLM on an empty one"),
    Difference(r"containers\[main\]\.env\[" + STORE_CLIENT + r"\]\.value", True, ENGINES,
               "the KV store's client contract (kv_store output: engine_env), the same for an owner's and a "
               "consumer's engines"),
    Difference(MOUNT + r"\[(?:kv-client|datasystem-sockets)\]\..*", True, ENGINES,
               "the KV store's client files and Yuanrong's socket folder (kv_store output: client_files, host_paths)"),
    Difference(r"containers\[main\]\.env\[KVS_MASTER_SERVICE\]\.value", False, (*CONTROL_PLANE, *ENGINES),
               "Yuanrong has no master Service: its engines reach the worker on their node (DS_WORKER_ADDR)"),
    Difference(r"containers\[main\]\.env\[KVS_MASTER_SERVICE\]\.value", None, ("coordinator", *ENGINES),
               "target_stack: the owner's store; our user_config.json carries no target_job_id, so deploy.py's dry "
               "run builds a store of the consumer's own"),
    Difference(r"containers\[main\]\.env\[KV_STORE_BACKEND\]\.value", None, ("coordinator",),
               "the pool's backend: deploy.py writes the coordinator before it reads the store's backend "
               "(kv_cache_store.py:30 sets it), so its coordinator always says memcache"),
    Difference(r"containers\[main\]\.env\[MMC_LOCAL_CONFIG_PATH\]\.value", False, ("coordinator",),
               "only MemCache's client (the engines') reads it; deploy.py's coordinator gets it from the same "
               "memcache default"),
    Difference(MOUNT + r"\[mindie-motor-store-\d+\]\..*", False, ("decode",),
               "storage[] on prefill only: UCM runs there alone (seed 000, policy kvpool-configure-ucm-placement)"),
    Difference(r"containers\[main\]\.env\[CONTROLLER_SERVICE\]\.value", None, (*CONTROL_PLANE, *ENGINES),
               "in a service set, the Deployment templates' Service name mindie-motor-controller-service, which the "
               "set prefixes (infer_service_template.yaml calls it mindie-motor-service)"),
    Difference(r"affinity\.podAntiAffinity\..*", True, CONTROL_PLANE,
               "controller_template.yaml's and coordinator_template.yaml's anti-affinity in a service set too"),
    Difference(MOUNT + r"\[(?:plog-path|rdma|hisi-hdc)\]\..*", True, (*CONTROL_PLANE, *ENGINES),
               "the Deployment templates' log folder and RDMA/HDC devices in a service set too (common.sh logs "
               "there; HCCL and the RDMA verbs open the devices)"),
    Difference(r"containers\[main\]\.(?:startup|readiness|liveness)Probe\..*", True, ("kv_conductor",),
               "TCP checks of its HTTP port: Motor's probe.py has no kv_conductor role and deploy.py renders none"),
    Difference(r"containers\[main\]\.ports\[http\]\..*", True, ("kv_conductor",),
               "its HTTP port declared, which the probes and the NetworkPolicy name"),
    Difference(r"containers\[main\]\.env\[(?:CONTROLLER_SERVICE|COORDINATOR_SERVICE|COORDINATOR_INFER_SERVICE|"
               r"COORDINATOR_OBS_SERVICE|HOST_IP|JOB_NAME)\]\..*", True, ("kv_conductor",),
               "the env every Motor pod of ours gets (kvpool/components/workloads.py motor_env)"),
    Difference(MOUNT + r"\[ascend-driver\]\..*", False, ("kv_conductor",),
               "the conductor indexes KV events over ZeroMQ and HTTP and touches no NPU: no driver folder"),
    Difference(r"tolerations", True, ("kv_conductor",),
               "a single replica, rescheduled off a failed node in 30 s as deploy.py's controller and coordinator"),
)


def flatten(value: Any, path: str = "") -> dict[str, Any]:
    """path -> leaf value; lists of named objects keyed by name, other lists kept whole."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flatten(item, f"{path}.{key}" if path else key))
        return flat or {path: {}}
    if isinstance(value, list) and value and all(isinstance(item, dict) and "name" in item for item in value):
        flat = {}
        for item in value:
            rest = {key: part for key, part in item.items() if key != "name"}
            flat.update(flatten(rest, f"{path}[{item['name']}]") if rest else {f"{path}[{item['name']}]": {}})
        return flat
    return {path: value}


def pod_fields(spec: dict[str, Any]) -> dict[str, Any]:
    """A pod spec flattened, its first container keyed `main` (its name a field of its own)."""
    main, *sidecars = spec["containers"]
    return flatten({**spec, "containers": [{**main, "name": "main", "_name": main["name"]}, *sidecars]})


def our_pods(rendered: Rendered) -> dict[str, dict[str, Any]]:
    pods = {name: rendered.get("Deployment", name)["spec"]["template"]["spec"]
            for kind, name in rendered.objects if kind == "Deployment" and name in WORKLOADS}
    for role in (role for body in rendered.objects.values() if is_service_set(body) for role in service_set_roles(body)):
        workload = next((name for name, known in WORKLOADS.items() if known == role["name"]), None)
        if workload:
            pods[workload] = role_pod_template(role)["spec"]
    return pods


def deploy_pods(output: Path) -> dict[str, dict[str, Any]]:
    pods = {}
    for path in sorted(output.glob("*.yaml")):
        for body in yaml.safe_load_all(path.read_text()):
            if not body:
                continue
            if body.get("kind") == "Deployment" and body["metadata"]["name"] in WORKLOADS:
                pods[body["metadata"]["name"]] = body["spec"]["template"]["spec"]
            if is_service_set(body):
                for role in service_set_roles(body):
                    workload = next((name for name, known in WORKLOADS.items() if known == role["name"]), None)
                    if workload:
                        pods[workload] = role_pod_template(role)["spec"]
    return pods


@pytest.fixture(scope="module")
def deployer(motor_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("deployer")
    deploy_py.writable_copy(motor_checkout / "examples" / "deployer", folder / "deployer")
    deploy_py.kubectl_dir(folder / "bin")
    return folder


def dry_run(deployer: Path, rendered: Rendered, stack: str) -> dict[str, dict[str, Any]]:
    """deploy.py --dry-run on our user_config.json and the stack's env.json; its pod specs by workload."""
    work = deployer / stack
    work.mkdir()
    (work / "user_config.json").write_text(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    env = load_from_pulumi_config(stack_values(stack), stack).env.model_dump(mode="json")
    (work / "env.json").write_text(json.dumps({"version": "2.0.0", **env}))
    output = deployer / "deployer" / "output_yamls"
    shutil.rmtree(output, ignore_errors=True)
    done = subprocess.run(
        [sys.executable, "deploy.py", "--config", str(work / "user_config.json"), "--env", str(work / "env.json"),
         "--dry-run"],
        cwd=deployer / "deployer", capture_output=True, text=True, timeout=120,
        env={"PATH": f"{deployer / 'bin'}:/usr/bin:/bin", "KVPOOL_NODES": deploy_py.nodes(our_pods(rendered)["vllm-p0"]["nodeSelector"]), "HOME": str(work)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return deploy_pods(output)


def env_json_names(stack: str, role: str) -> list[str]:
    env = load_from_pulumi_config(stack_values(stack), stack).env.model_dump(mode="json")
    return sorted({*env["motor_common_env"], *env.get(ENV_SECTION[role], {})})


def allowed(difference: Difference, field: str, ours: bool | None, role: str, stack: str) -> bool:
    if role not in difference.roles or difference.ours is not ours:
        return False
    names = "|".join(re.escape(name) for name in env_json_names(stack, role)) or "(?!)"
    return re.fullmatch(difference.field.replace("{env_json}", names), field) is not None


def unexplained(stack: str, ours: dict[str, Any], theirs: dict[str, Any], used: set[Difference]) -> list[str]:
    problems = []
    for workload in sorted(set(ours) | set(theirs)):
        if workload not in ours or workload not in theirs:
            problems.append(f"{stack}: {workload} only in {'ours' if workload in ours else 'deploy.py'}")
            continue
        role = WORKLOADS[workload]
        a, b = pod_fields(ours[workload]), pod_fields(theirs[workload])
        for field in sorted(set(a) | set(b)):
            if a.get(field) == b.get(field):
                continue
            side = True if field not in b else False if field not in a else None
            field_name = "containers[main].name" if field == "containers[main]._name" else field
            matches = [d for d in DIFFERENCES if allowed(d, field_name, side, role, stack)]
            used.update(matches)
            if not matches:
                problems.append(f"{stack}: {workload} {field_name}: ours {a.get(field)!r}, deploy.py {b.get(field)!r}")
    return problems


def test_every_pod_field_is_deploy_pys_or_a_listed_difference(deployer: Path, motor_checkout: Path) -> None:
    used: set[Difference] = set()
    problems = []
    for stack in STACKS:
        rendered = rendered_with_motor(stack, motor_checkout)
        problems += unexplained(stack, our_pods(rendered), dry_run(deployer, rendered, stack), used)
    assert problems == []
    assert [d.field for d in DIFFERENCES if d not in used] == []
