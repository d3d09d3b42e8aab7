"""`python -m kvpool settings`: a stack's settings in effect, secrets by name only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from kvpool.settings.loader import PULUMI_CONFIG_KEYS
from kvpool.settings.service import MOTOR_KVPOOL_OWN_KEYS
from tests.program_runs import PROJECT_DIR


def kvpool(*args: str, cwd: Path = PROJECT_DIR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_defaults_are_filled_in():
    done = kvpool("settings", "--stack", "dev")
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)
    assert settings["user_config"]["motor_deploy_config"]["job_id"] == "dev"
    assert settings["user_config"]["kv_cache_store_config"]["local_service_mode"] == "inprocess"
    assert settings["role_env"]["decode"] == {
        "CANN_INSTALL_PATH": "/usr/local/Ascend", "PYTHONHASHSEED": "0", "ASCEND_CONNECT_TIMEOUT": "10000",
        "ASCEND_TRANSFER_TIMEOUT": "10000",
        "HCCL_INTRA_ROCE_ENABLE": "1",
    }
    assert settings["motor_kvpool"]["kv_cache_store_config"]["resources"] == {
        "requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}
    }


def test_one_section():
    done = kvpool("settings", "--stack", "mooncake-ha", "--section", "kv_cache_store_config")
    assert json.loads(done.stdout)["store_mode"] == "embedded"
    missing = kvpool("settings", "--stack", "dev", "--section", "kv_cache_stor_config")
    assert missing.returncode == 1
    assert missing.stderr == (
        "error: --section kv_cache_stor_config: not in the settings; known: version, create_namespace, "
        "motor_deployer_dir, vllm_ascend_version, cluster_domain, cluster, motor_deploy_config, motor_controller_config, "
        "motor_coordinator_config, motor_nodemanger_config, motor_engine_prefill_config, motor_engine_decode_config, "
        "kv_cache_store_config, kv_conductor_config, env, rollout, kv_pool_sizing, pods, secret_env\n"
    )


def test_every_section_the_settings_hold_is_printed():
    """rollout and kv_pool_sizing were printed nowhere, and --section refused them (issue 46)."""
    settings = json.loads(kvpool("settings", "--stack", "dev").stdout)
    assert list(settings) == ["user_config", "env", "role_env", "motor_kvpool"]
    assert list(settings["motor_kvpool"]) == [*MOTOR_KVPOOL_OWN_KEYS, "secret_env", "kv_cache_store_config"]
    printed = {*settings["user_config"], "env", *settings["motor_kvpool"]}
    # unset in dev, so user_config.json leaves them out; --section prints them as null
    assert set(PULUMI_CONFIG_KEYS) - printed == {"motor_nodemanger_config", "kv_conductor_config"}
    assert settings["motor_kvpool"]["rollout"] == {
        "prefill": {"max_unavailable_instances": "50%"}, "decode": {"max_unavailable_instances": "50%"}}
    sections = {name: json.loads(kvpool("settings", "--stack", "dev", "--section", name).stdout)
                for name in ("rollout", "kv_pool_sizing", "cluster", "kv_conductor_config")}
    assert sections == {
        "rollout": settings["motor_kvpool"]["rollout"],
        "kv_pool_sizing": {"model": None, "model_shape": None, "prefill_tokens_per_second": 1500,
                           "min_block_lifetime_seconds": None},
        "cluster": "default",
        "kv_conductor_config": None,
    }


def test_store_section_holds_the_users_own_keys_too():
    """The section left out what only the store's deployment reads (ha, protect, service_monitor, ...), though the
    stack file sets them in that section."""
    stack = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.mooncake-ha.yaml").read_text())
    written = stack["config"]["motor-kvpool:kv_cache_store_config"]
    done = kvpool("settings", "--stack", "mooncake-ha", "--section", "kv_cache_store_config")
    section = json.loads(done.stdout)
    assert sorted(set(written) - set(section)) == []
    assert {key: section[key] for key in written if key != "ha"} == {k: v for k, v in written.items() if k != "ha"}
    assert written["ha"] == {"master_replicas": 2, "etcd": {"replicas": 3}}
    assert section["ha"] == {"master_replicas": 2, "etcd": {
        "replicas": 3, "image": "registry.k8s.io/etcd:3.5.15-0", "port": 2379, "peer_port": 2380, "storage_size": "1Gi",
    }}


def test_env_section_and_every_roles_env(tmp_path):
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    (tmp_path / "stacks").mkdir()
    stack = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    stack["config"]["motor-kvpool:env"] = {
        "motor_common_env": {"LOG_LEVEL": "info"},
        "motor_controller_env": {"CONTROLLER_FLAG": "1"},
        "motor_coordinator_env": {"LOG_LEVEL": "debug"},
    }
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    env = json.loads(kvpool("settings", "--stack", "dev", "--section", "env", "--project-dir", str(tmp_path)).stdout)
    assert env["motor_controller_env"] == {"CONTROLLER_FLAG": "1"}
    assert env["motor_engine_prefill_env"] == {
        "PYTHONHASHSEED": "0", "ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000",
    }
    roles = json.loads(kvpool("settings", "--stack", "dev", "--project-dir", str(tmp_path)).stdout)["role_env"]
    assert roles["controller"] == {"LOG_LEVEL": "info", "CONTROLLER_FLAG": "1"}
    assert roles["coordinator"] == {"LOG_LEVEL": "debug"}
    assert roles["prefill"]["LOG_LEVEL"] == "info"




def test_secret_env_is_listed_by_name_only(tmp_path):
    for name in ("Pulumi.yaml", "__main__.py"):
        (tmp_path / name).write_text((PROJECT_DIR / name).read_text())
    (tmp_path / "stacks").mkdir()
    stack = yaml.safe_load((PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text())
    stack["config"]["motor-kvpool:secret_env"] = {"HF_TOKEN": {"secure": "v1:AAAA"}}
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(yaml.safe_dump(stack))
    done = kvpool("settings", "--stack", "dev", "--project-dir", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["motor_kvpool"]["secret_env"] == {"HF_TOKEN": "[secret]"}
    assert "v1:AAAA" not in done.stdout
