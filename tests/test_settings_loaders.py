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
