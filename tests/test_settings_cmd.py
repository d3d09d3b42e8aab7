"""`python -m kvpool settings`: a stack's settings in effect, secrets by name only."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from tests.program_runs import PROJECT_DIR


def kvpool(*args: str, cwd: Path = PROJECT_DIR) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kvpool", *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_defaults_are_filled_in():
    done = kvpool("settings", "--stack", "dev")
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)
    assert settings["user_config"]["motor_deploy_config"]["job_id"] == "dev"
    assert settings["user_config"]["kv_cache_store_config"]["local_service_mode"] == "inprocess"
    assert settings["engine_env"]["decode"] == {
        "CANN_INSTALL_PATH": "/usr/local/Ascend", "PYTHONHASHSEED": "0", "ASCEND_CONNECT_TIMEOUT": "10000", "ASCEND_TRANSFER_TIMEOUT": "10000",
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
    assert missing.stderr.startswith("error: --section kv_cache_stor_config: not in the settings; known: version, ")


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
