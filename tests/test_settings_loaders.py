"""The two loaders give the identical model for the same service."""

from __future__ import annotations

import pytest

from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_motor_files, load_from_pulumi_config
from tests.service_configs import as_motor_files, memcache_pool, mooncake_pool, plain_pd


@pytest.mark.parametrize("service", [plain_pd(), memcache_pool(), mooncake_pool()], ids=["plain", "memcache", "mooncake"])
def test_both_loaders_give_the_same_model(service):
    from_stack = load_from_pulumi_config(service, "svc")
    user_config, env = as_motor_files(service)
    from_files = load_from_motor_files(user_config, env, "svc")
    assert from_files == from_stack
    assert from_files.user_config() == from_stack.user_config()


def test_files_loader_accepts_the_older_env_section_name():
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_kv_cache_pool_env"] = {"GLOG_v": "1"}
    settings = load_from_motor_files(user_config, env, "svc")
    assert settings.env.motor_kv_cache_store_env == {"GLOG_v": "1"}


def test_files_loader_refuses_an_unknown_user_config_version():
    user_config, env = as_motor_files(plain_pd())
    user_config["version"] = "v1.0"
    with pytest.raises(SettingsError) as caught:
        load_from_motor_files(user_config, env, "svc")
    assert caught.value.problems == ["version: 'v1.0' is not supported; motor-kvpool reads v2.0"]


def test_files_loader_names_its_source():
    user_config, env = as_motor_files(plain_pd())
    del user_config["motor_deploy_config"]["hardware_type"]
    with pytest.raises(SettingsError) as caught:
        load_from_motor_files(user_config, env, "svc", source="conf/user_config.json")
    assert str(caught.value) == "conf/user_config.json: 1 problem\n  - motor_deploy_config.hardware_type: required; add it"


# Seed 001's kv_cache_pool_config block, as pyMotor's users write it: no backend, Mooncake's keys.
SEED_001_POOL = {
    "metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "", "global_segment_size": "1GB",
    "eviction_high_watermark_ratio": 0.9, "eviction_ratio": 0.1,
}


def test_a_stack_file_reads_seed_001s_kv_cache_pool_config_as_a_mooncake_pool():
    service = mooncake_pool()
    del service["kv_cache_store_config"]
    service["kv_cache_pool_config"] = dict(SEED_001_POOL)
    store = load_from_pulumi_config(service, "svc").user_config()["kv_cache_store_config"]
    assert {key: store[key] for key in ("backend", *SEED_001_POOL)} == {"backend": "mooncake", **SEED_001_POOL}


def test_a_kv_cache_pool_config_naming_its_backend_keeps_it():
    service = memcache_pool()
    service["kv_cache_pool_config"] = service.pop("kv_cache_store_config", None) or {"backend": "memcache"}
    store = load_from_pulumi_config(service, "svc").user_config()["kv_cache_store_config"]
    assert store["backend"] == "memcache"
