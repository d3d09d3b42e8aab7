"""Plans of the Mooncake scenarios, from the mooncake-layerwise and mooncake-ha renderings (tests and bench).

Changes beyond tests/live/rendered.py's loopback list, each needed here and applied only where named:
  * protocol ascend -> tcp in mooncake.json / mooncake-store.json (the ascend transport needs an NPU);
  * mooncake.json's global_segment_size 29GB (blocks live >= 10 s on an A3 node: docs/sizing.md) ->
    1GB, which this machine's 24 GiB hold (basic scenario);
  * capacity only: mooncake.json's global_segment_size -> 64MB and local_buffer_size 1GB -> 16MB, so
    that 3x the pool is 192 puts of 1 MiB (the setup reference/research/backends.md measured);
  * mooncake-ha rendered with store_mode standalone and protocol tcp (test_mooncake.py): the store process is
    started as the newer Motor's node manager starts it in the engine container (motor_store_process: a mirror of
    its lifecycle.py, which cannot run here), with global_segment_size 8GB -> 256MB (this machine has 24 GiB for
    everything and CI runs other things) and master_server_address the etcd:// one of mooncake.json, where Motor
    writes <service>:<port> (a Service routes to the Ready leader; the loopback's static names cannot follow it).
The capacity comparison's 0.9/0.1 master is the mooncake-layerwise stack rendered with the seed's eviction
ratios (render_variant): the same component renders it, only the two stack values differ.
"""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

from tests.live.plans import (
    STORE,
    add_etcd,
    configmaps,
    container_ports,
    engine_deployment,
    engine_process,
    etcd_processes,
    named_port,
    probe_plan,
    python,
)
from tests.live.rendered import (
    Loopback,
    Rendered,
    as_tcp,
    render,
    render_variant,
    with_sizes,
)

CLIENT_FILE = "mooncake.json"
STORE_SEGMENT = "256MB"
HA_KEYS = 32  # x 1 MiB, well inside the store process's 256 MB segment


def master_flag(container: dict, flag: str) -> str:
    values = [arg.split("=", 1)[1] for arg in container["args"] if arg.startswith(f"--{flag}=")]
    assert len(values) == 1, f"--{flag} rendered {len(values)} times: {container['args']}"
    return values[0]


def tcp_client_files(key: str, content: str) -> str:
    return as_tcp(content) if key == CLIENT_FILE else content


BASIC_SEGMENT = "1GB"


def machine_sized_client_files(key: str, content: str) -> str:
    """The client files on tcp, the engine's segment at BASIC_SEGMENT (the stack's is sized for an A3 node)."""
    content = tcp_client_files(key, content)
    return with_sizes(content, global_segment_size=BASIC_SEGMENT) if key == CLIENT_FILE else content


def basic_plan(rendered: Rendered, work: Path, client_change=tcp_client_files) -> tuple[Loopback, dict]:
    """Master pod + engine pod of a non-HA stack."""
    lb = Loopback(work / rendered.stack, rendered.namespace)
    master = rendered.container("Deployment", STORE)
    lb.add_pod("master-0", container_ports(master), [rendered.kv_store["host"]])
    lb.add_pod("engine-0", [])
    maps = configmaps(rendered, client_change)
    process = lb.process(master, "master-0", "mooncake")
    plan = {
        "master": process,
        "probes": probe_plan(lb, "master-0", master, process),
        "metrics_port": lb.pods["master-0"].port(int(master_flag(master, "metrics_port"))),
        "engine": engine_process(rendered, lb, "engine-0", "mooncake", "mooncake_engine.py", maps),
    }
    return lb, plan


CAPACITY_PUTS = 192  # 3 x the 64 MB pool, 1 MiB each
SEED_EVICTION = {"eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1}


def capacity_plan(work: Path, reps: int, fills: tuple[str, ...] = ("same", "distinct")) -> dict:
    """The example stack's master (its own pair) and the same stack rendered with the seed's 0.9/0.1, interleaved."""
    stack = render("mooncake-layerwise", work / "out")
    seed = render_variant("mooncake-layerwise", "mooncake-seed-eviction", SEED_EVICTION, work)

    def small_pool(key: str, content: str) -> str:
        if key != CLIENT_FILE:
            return content
        return with_sizes(as_tcp(content), global_segment_size="64MB", local_buffer_size="16MB")

    lb, plan = basic_plan(stack, work / "capacity", small_pool)
    settings = []
    for rendered in (stack, seed):
        master = rendered.container("Deployment", STORE)
        label = f"{master_flag(master, 'eviction_high_watermark_ratio')}/{master_flag(master, 'eviction_ratio')}"
        settings.append({"label": label, "master": lb.process(master, "master-0", "mooncake")})
    assert [s["label"] for s in settings][1:] == ["0.9/0.1"]  # the first: the example stack's own pair
    return {"settings": settings, "engine": plan["engine"], "metrics_port": plan["metrics_port"],
            "n": CAPACITY_PUTS, "reps": reps, "fills": list(fills)}


def motor_store_process(rendered: Rendered, lb: Loopback, pod: str, maps, master_address: str) -> dict:
    """The standalone store as the newer Motor's node manager starts it in the engine container, for a protocol other
    than ascend (Lyr-GW/MindIE-PyMotor motor/node_manager/core/services/mooncake/lifecycle.py @ 7e2979f9,
    MooncakeStoreService._build_store_config and _start_locked): `python -m mooncake.mooncake_store_service --config
    <folder of $MOONCAKE_CONFIG_PATH>/mooncake_store_config.json --port <store_http_port>`, with the engine
    container's env, the file from user_config.json's kv_cache_store_config and $POD_IP. `master_address` and the
    segment size: the changes the module's docstring lists."""
    spec = engine_deployment(rendered)["spec"]["template"]["spec"]
    container = next(c for c in spec["containers"] if c["name"] == "vllm")
    store = json.loads(maps["motor-config"]["user_config.json"])["kv_cache_store_config"]
    process = lb.process(container, pod, "mooncake", maps, spec["volumes"])
    config_path = f"{posixpath.dirname(process['env']['MOONCAKE_CONFIG_PATH'])}/mooncake_store_config.json"
    config = {
        "local_hostname": process["env"]["POD_IP"],
        "metadata_server": store["metadata_server"],
        "protocol": store["protocol"],
        "device_name": store["device_name"],
        "global_segment_size": STORE_SEGMENT,
        "local_buffer_size": 0,
        "master_server_address": master_address,
    }
    local = lb.write_file(pod, config_path, json.dumps(config, indent=2))
    argv = ["-m", "mooncake.mooncake_store_service", "--config", str(local), "--port", str(store["store_http_port"])]
    return {**process, "name": f"{pod}/mooncake_store_service", "argv": [python("mooncake"), *argv]}


def ha_plan(rendered: Rendered, work: Path) -> dict:
    lb = Loopback(work / rendered.stack, rendered.namespace)
    etcd_pods = add_etcd(rendered, lb)
    master = rendered.container("Deployment", STORE)
    masters = [f"master-{i}" for i in range(rendered.replicas("Deployment", STORE))]
    assert len(masters) == 2
    for pod in masters:
        lb.add_pod(pod, container_ports(master), [rendered.kv_store["host"]] if pod == "master-0" else [])
    lb.add_pod("engine-0", [])

    maps = configmaps(rendered, lambda key, content: content)  # the variant renders tcp itself
    engine = engine_process(rendered, lb, "engine-0", "mooncake", "mooncake_engine.py", maps)
    address = json.loads(rendered.kv_store["client_files"][CLIENT_FILE])["master_server_address"]
    store = motor_store_process(rendered, lb, "engine-0", maps, lb.rewrite(address, "engine-0"))
    metrics_port = int(master_flag(master, "metrics_port"))
    etcd_port = named_port(rendered.container("StatefulSet", f"{STORE}-etcd"), "client")
    processes = [lb.process(master, pod, "mooncake") for pod in masters]
    return {
        "etcd": etcd_processes(rendered, lb, etcd_pods),
        "etcd_client_ports": [lb.pods[pod].port(etcd_port) for pod in etcd_pods],
        "masters": processes,
        "probes": [probe_plan(lb, pod, master, process) for pod, process in zip(masters, processes, strict=True)],
        "master_metrics_ports": [lb.pods[pod].port(metrics_port) for pod in masters],
        "store": store,
        "engine": engine,
        "n": HA_KEYS,
        "client_ttl_s": int(master_flag(master, "client_ttl")),
    }
