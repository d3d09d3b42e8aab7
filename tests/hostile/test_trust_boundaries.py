"""One-mistake stacks, one per class of issue 13 §3 (trust boundaries): each ends in exit 1 with the field named,
never an internal error, and never with a file's content in the message. The forged owner outputs of §3's second
class are in tests/test_shared_store.py (they need a consumer rendered with a given owner output)."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from tests.hostile.test_bad_inputs import (
    DEV,
    REPOSITORY,
    kvpool,
    refused,
    stack_settings,
)
from tests.program_runs import deployer_folder

YUANRONG = (REPOSITORY / "stacks" / "Pulumi.yuanrong.yaml").read_text()


def changed(change: Callable[[dict[str, Any]], None], base: str = DEV) -> str:
    """The stack file with one change to its motor-kvpool:* values (keys without the prefix)."""
    document = yaml.safe_load(base)
    values = {key.split(":", 1)[1]: value for key, value in document["config"].items()}
    change(values)
    document["config"] = {f"motor-kvpool:{key}": value for key, value in values.items()}
    return yaml.safe_dump(copy.deepcopy(document), sort_keys=False)


def deploy(**fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda values: values["motor_deploy_config"].update(fields)


def preview(project: Path, name: str, content: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    (project / "stacks" / f"Pulumi.{name}.yaml").write_text(content)
    return kvpool("preview", "--stack", name, "--project-dir", project, "--out", tmp_path / "out")


# --- workload safety: host paths and system namespaces (settings refuse them; the pack is the second line) ------


@pytest.mark.parametrize(("change", "named"), [
    (deploy(weight_mount_path="/"), "motor_deploy_config.weight_mount_path: '/' is no folder below /mnt, /data"),
    (deploy(weight_mount_path="/etc/"), "motor_deploy_config.weight_mount_path: '/etc/' is no folder below /mnt"),
    (deploy(storage=[{"type": "hostpath", "path": "/"}]),
     "motor_deploy_config.storage[0].path: '/' lies outside every folder a pod may mount from the node"),
    (deploy(storage=[{"type": "hostpath", "path": "/var/run/docker.sock"}]),
     "motor_deploy_config.storage[0].path: '/var/run/docker.sock' lies outside every folder a pod may mount"),
    (deploy(storage=[{"type": "hostpath", "path": "/proc/1"}]),
     "motor_deploy_config.storage[0].path: '/proc/1' lies outside every folder a pod may mount"),
    (deploy(storage=[{"type": "hostpath", "path": "/etc/cron.d"}]),
     "motor_deploy_config.storage[0].path: '/etc/cron.d' lies outside every folder a pod may mount"),
    (deploy(storage=[{"type": "hostpath", "path": "/etc/cron.d"}], host_path_roots={"storage": ["/etc/cron.d"]}),
     "motor_deploy_config.host_path_roots.storage[0]: '/etc/cron.d' is no folder below /mnt"),
    (deploy(job_id="kube-system"), "motor_deploy_config.job_id: is 'kube-system', a namespace Kubernetes itself uses"),
    (deploy(job_id="kube-public"), "motor_deploy_config.job_id: is 'kube-public', a namespace Kubernetes itself uses"),
    (deploy(job_id="default"), "motor_deploy_config.job_id: is 'default', a namespace Kubernetes itself uses"),
], ids=["weights-root", "weights-etc", "storage-root", "docker-socket", "proc", "cron-d", "cron-d-declared", "kube-system",
        "kube-public", "default"])
def test_workload_safety(project: Path, change, named: str) -> None:
    refused(stack_settings(project, "unsafe", changed(change)), named)


# --- plain-text secrets ------------------------------------------------------------------------------------------


def engine_config(side: str, **fields: Any) -> Callable[[dict[str, Any]], None]:
    return lambda values: values[f"motor_engine_{side}_config"]["engine_config"].update(fields)


def env(section: str, **values_: Any) -> Callable[[dict[str, Any]], None]:
    return lambda values: values.setdefault("env", {}).setdefault(section, {}).update(values_)


@pytest.mark.parametrize(("change", "named"), [
    (engine_config("prefill", hf_token="hf_abc"),
     "motor_engine_prefill_config.engine_config.hf_token: looks like a secret but is plain text; keep it as a Pulumi "
     "secret delivered through a Kubernetes Secret: `pulumi config set --secret --path secret_env.HF_TOKEN VALUE`."),
    (deploy(tls_config={"north_tls_config": {"enable_tls": True, "password": "p4ss"}}),
     "motor_deploy_config.tls_config.north_tls_config.password: looks like a secret"),
    (lambda values: values.__setitem__("motor_coordinator_config", {"db": {"apiKey": "k"}}),
     "motor_coordinator_config.db.apiKey: looks like a secret"),
    (env("motor_common_env", DB_PASS="hunter2"), "env.motor_common_env.DB_PASS: looks like a secret"),
    (env("motor_engine_decode_env", OPENAI_KEY="sk-x"),
     "env.motor_engine_decode_env.OPENAI_KEY: looks like a secret but is plain text; keep it as a Pulumi secret "
     "delivered through a Kubernetes Secret: `pulumi config set --secret --path secret_env.OPENAI_KEY VALUE`."),
], ids=["hf-token", "tls-password", "api-key", "db-pass", "openai-key"])
def test_plain_text_secrets(project: Path, change, named: str) -> None:
    refused(stack_settings(project, "plain", changed(change)), named)


def test_a_plain_value_beside_secure_ones_in_secret_env(project: Path) -> None:
    content = DEV.replace("config:\n", "config:\n  motor-kvpool:secret_env:\n    HF_TOKEN: {secure: v1:abc}\n"
                                       "    DB_PASS: hunter2\n", 1)
    result = stack_settings(project, "mixed", content)
    refused(result, "motor-kvpool:secret_env.DB_PASS: is plain text beside secure values; every secret_env value must "
                    "be encrypted: `pulumi config set --secret --path motor-kvpool:secret_env.DB_PASS VALUE`")
    assert "hunter2" not in result.stderr


# --- network -----------------------------------------------------------------------------------------------------


def test_etcd_client_cidrs_not_a_network(project: Path) -> None:
    content = changed(lambda values: values["kv_cache_store_config"].update(etcd_client_cidrs=["nodes"]), YUANRONG)
    refused(stack_settings(project, "cidr", content),
            "kv_cache_store_config.etcd_client_cidrs[0]: 'nodes' is not a network address such as 192.168.10.11/32")


def test_metrics_scraper_namespace_not_a_namespace(project: Path) -> None:
    content = changed(lambda values: values["kv_cache_store_config"].update(metrics_scraper_namespaces=["Prom etheus"]))
    refused(stack_settings(project, "scrapers", content), "kv_cache_store_config.metrics_scraper_namespaces[0]:")


# --- files a stack names, and our internal variables (refused where the program renders them) --------------------


@pytest.mark.parametrize("path", ["/proc/self/environ", "../../../../etc/passwd", "stacks/../../outside.conf"])
def test_local_service_conf_outside_the_project(project: Path, tmp_path: Path, path: str) -> None:
    (tmp_path / "outside.conf").write_text("ock.mmc.secret = do-not-print\n")
    content = changed(lambda values: values["kv_cache_store_config"].update(local_service_conf=path))
    result = preview(project, "conf", content, tmp_path)
    refused(result, f"kv_cache_store_config.local_service_conf: {path} resolves to ", ", outside the project folder ")
    assert "do-not-print" not in result.stderr and "root:" not in result.stderr


def test_local_service_conf_symlinked_out_of_the_project(project: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.conf").write_text("ock.mmc.secret = do-not-print\n")
    (project / "mmc-local.conf").symlink_to(tmp_path / "outside.conf")
    content = changed(lambda values: values["kv_cache_store_config"].update(local_service_conf="mmc-local.conf"))
    result = preview(project, "link", content, tmp_path)
    refused(result, "kv_cache_store_config.local_service_conf: mmc-local.conf resolves to ")
    assert "do-not-print" not in result.stderr


def test_a_malformed_local_service_conf_is_not_quoted(project: Path, tmp_path: Path) -> None:
    (project / "mmc-local.conf").write_text("password hunter2\n")
    content = changed(lambda values: values["kv_cache_store_config"].update(local_service_conf="mmc-local.conf"))
    result = preview(project, "malformed", content, tmp_path)
    refused(result, "kv_cache_store_config.local_service_conf: mmc-local.conf:1: expected `key = value`")
    assert "hunter2" not in result.stderr


def test_motor_deployer_dir_file_symlinked_elsewhere(project: Path, motor_checkout: Path, tmp_path: Path) -> None:
    folder = deployer_folder(tmp_path / "checkout", motor_checkout)
    (folder / "probe" / "probe.sh").unlink()
    (folder / "probe" / "probe.sh").symlink_to("/proc/self/environ")
    content = changed(lambda values: values.__setitem__("motor_deployer_dir", str(folder)))
    result = preview(project, "deployer", content, tmp_path)
    refused(result, "motor_deployer_dir: probe/probe.sh resolves to /proc/", f"outside Motor's deployer folder {folder}")


@pytest.mark.parametrize(("change", "named"), [
    (env("motor_common_env", ROLE="controller"), "env.motor_common_env.ROLE: motor-kvpool sets ROLE itself"),
    (env("motor_engine_prefill_env", CONFIGMAP_PATH="/tmp"),
     "env.motor_engine_prefill_env.CONFIGMAP_PATH: motor-kvpool sets CONFIGMAP_PATH itself"),
    (env("motor_controller_env", CONFIG_PATH="/tmp"), "env.motor_controller_env.CONFIG_PATH: motor-kvpool sets"),
    (env("motor_engine_decode_env", POD_IP="10.0.0.1"), "env.motor_engine_decode_env.POD_IP: motor-kvpool sets"),
    (env("motor_coordinator_env", JOB_NAME="x"), "env.motor_coordinator_env.JOB_NAME: motor-kvpool sets"),
    (env("motor_coordinator_env", POD_NAMESPACE="x"), "env.motor_coordinator_env.POD_NAMESPACE: motor-kvpool sets"),
    (env("motor_coordinator_env", KVS_MASTER_SERVICE="evil.example"),
     "env.motor_coordinator_env.KVS_MASTER_SERVICE is 'evil.example' but the KV store needs "
     "'mindie-motor-kvs-master.internal.svc.cluster.local'"),
], ids=["role", "configmap-path", "config-path", "pod-ip", "job-name", "pod-namespace", "coordinator-store"])
def test_internal_variables(project: Path, tmp_path: Path, change, named: str) -> None:
    def with_job(values: dict[str, Any]) -> None:
        values["motor_deploy_config"]["job_id"] = "internal"
        change(values)

    refused(preview(project, "internal", changed(with_job), tmp_path), named)
