"""Motor's kv_conductor.sh on what we render: boot.sh with ROLE=kv_conductor runs set_kv_conductor_env (env.json's
motor_kv_conductor_env), mooncake_config.py `conductor` writes the conductor's config from our user_config.json and
KVS_MASTER_SERVICE, and the conductor binary (a stub on PATH) is started with CONDUCTOR_CONFIG_PATH pointing at it.
The file must be what kvpool/components/kv_conductor.py says it is: this stack's master endpoint, or the owner's with
target_stack, and the prefill model name."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from kvpool.components.kv_conductor import CONFIG_FILE
from tests.conformance.motor_boot import Boot, boot
from tests.conformance.test_motor_boot import config_maps
from tests.program_runs import Rendered, render, stack_values

OWNER = "organization/motor-kvpool/kv-affinity"


def values(stack: str, motor_checkout: Path) -> dict[str, Any]:
    return {**copy.deepcopy(stack_values(stack)), "motor_deployer_dir": str(motor_checkout / "examples" / "deployer")}


def boot_conductor(rendered: Rendered, motor_checkout: Path, tmp_path: Path) -> Boot:
    pod = rendered.get("Deployment", "mindie-motor-kv-conductor")["spec"]["template"]["spec"]
    return boot(pod, "kv-conductor", config_maps(rendered), "A3", motor_checkout, tmp_path)


def conductor_file(result: Boot) -> tuple[dict[str, Any], dict[str, Any]]:
    assert result.failures() == [], result.output
    process = result.command("mooncake_conductor")
    record = process["files"]["CONDUCTOR_CONFIG_PATH"]
    assert (record["path"], record["exists"]) == (CONFIG_FILE, True), result.output
    return process, json.loads(record["text"])


def test_conductor_config_names_this_stacks_master_and_model(motor_checkout, tmp_path):
    service = values("kv-affinity", motor_checkout)
    service["env"] = {"motor_kv_conductor_env": {"RUST_LOG": "info,kv_conductor=debug"}}
    rendered = render(service, stack="kv-affinity")
    process, config = conductor_file(boot_conductor(rendered, motor_checkout, tmp_path))
    assert config == {
        "http_server_port": 13333,
        "kvevent_instance": {"mooncake_master": {
            "type": "Mooncake",
            "endpoint": "tcp://mindie-motor-kvs-master.kv-affinity.svc.cluster.local:50088",
            "modelname": "qwen3-8B",
        }},
    }
    # set_kv_conductor_env (deploy.py's update_shell_safely) exported env.json's section before the binary started.
    assert process["env"]["RUST_LOG"] == "info,kv_conductor=debug"
    assert process["env"]["ROLE"] == "kv_conductor"
    assert process["argv"] == ["mooncake_conductor"]


def test_conductor_config_follows_the_rendered_port_and_checksum(motor_checkout, tmp_path):
    """Another port and store port reach the conductor's file, and the pod's checksum changes with them."""
    service = values("kv-affinity", motor_checkout)
    service["kv_conductor_config"]["http_server_port"] = 14000
    service["kv_cache_store_config"]["port"] = 50100
    rendered = render(service, stack="kv-affinity")
    _, config = conductor_file(boot_conductor(rendered, motor_checkout, tmp_path))
    assert config["http_server_port"] == 14000
    assert config["kvevent_instance"]["mooncake_master"]["endpoint"] == (
        "tcp://mindie-motor-kvs-master.kv-affinity.svc.cluster.local:50100"
    )
    before = render(values("kv-affinity", motor_checkout), stack="kv-affinity")
    annotation = "checksum/kv-conductor-config"
    pod = lambda run: run.get("Deployment", "mindie-motor-kv-conductor")["spec"]["template"]["metadata"]  # noqa: E731
    assert pod(before)["annotations"][annotation] != pod(rendered)["annotations"][annotation]


def test_without_kvevent_instance_the_conductor_gets_its_port_only(motor_checkout, tmp_path):
    service = values("kv-affinity", motor_checkout)
    del service["kv_conductor_config"]["kvevent_instance"]
    rendered = render(service, stack="kv-affinity")
    _, config = conductor_file(boot_conductor(rendered, motor_checkout, tmp_path))
    assert config == {"http_server_port": 13333}


@pytest.fixture(scope="module")
def owner_outputs(motor_checkout) -> dict[str, Any]:
    owner = values("kv-affinity", motor_checkout)
    owner["kv_cache_store_config"]["allowed_consumers"] = ["kv-affinity-b"]
    return render(owner, stack="kv-affinity").run.outputs


def consumer(motor_checkout: Path) -> dict[str, Any]:
    service = values("kv-affinity", motor_checkout)
    service["kv_cache_store_config"] = {"backend": "mooncake", "target_stack": OWNER}
    return service


def test_consumer_conductor_follows_the_owners_master(owner_outputs, motor_checkout, tmp_path):
    """Each service runs its own conductor; with target_stack it follows the owner's pool master."""
    rendered = render(consumer(motor_checkout), stack="kv-affinity-b", stack_references={OWNER: owner_outputs})
    _, config = conductor_file(boot_conductor(rendered, motor_checkout, tmp_path))
    assert config["kvevent_instance"]["mooncake_master"]["endpoint"] == (
        "tcp://mindie-motor-kvs-master.kv-affinity.svc.cluster.local:50088"
    )
    coordinator = rendered.container("Deployment", "mindie-motor-coordinator", "coordinator")
    env = {e["name"]: e.get("value") for e in coordinator["env"]}
    assert env["KV_CONDUCTOR_SERVICE"] == "kv-conductor.kv-affinity-b.svc.cluster.local"
    policy = rendered.get("NetworkPolicy", "mindie-motor-kv-conductor")["spec"]
    assert {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kv-affinity"}},
            "podSelector": {"matchLabels": {"app": "mindie-motor-kv-store"}}} in [
        peer for rule in policy["egress"] for peer in rule["to"]
    ]
