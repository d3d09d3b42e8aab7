"""Every example value a settings message suggests passes every rule and policy: the test walks every number field
of the example services, writes text there, and takes the message's `e.g.` at its word (issue 22 item 4)."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
import yaml
from pydantic import BaseModel

from kvpool.errors import SettingsError
from kvpool.policies import rules
from kvpool.settings.loader import load_from_pulumi_config
from tests.service_configs import memcache_pool, mooncake_pool


def sustainable_mooncake() -> dict:
    service = mooncake_pool()
    service["kv_cache_store_config"].update(
        eviction_high_watermark_ratio=0.6, eviction_ratio=0.4, ha={}, store_mode="standalone",
        protocol="tcp",  # a standalone store cannot use the ascend transport (rules: standalone store protocol)
    )
    return service


BASES = {"mooncake": sustainable_mooncake, "memcache": memcache_pool}


def number_fields(model: BaseModel, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths of the int and float fields of a validated model, through its nested models."""
    found = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if isinstance(value, BaseModel):
            found += number_fields(value, (*path, name))
        elif type(value) in (int, float):
            found.append((*path, name))
    return found


def with_value(service: dict, path: tuple[str, ...], value: Any) -> dict:
    changed = copy.deepcopy(service)
    holder = changed
    for key in path[:-1]:
        holder = holder.setdefault(key, {})
    holder[path[-1]] = value
    return changed


CASES = [
    (base, path)
    for base, make in BASES.items()
    for path in number_fields(load_from_pulumi_config(make(), "svc"))
]


def test_the_walk_reaches_the_fields_the_messages_speak_of():
    paths = {".".join(path) for _, path in CASES}
    assert {"kv_cache_store_config.eviction_ratio", "kv_cache_store_config.eviction_high_watermark_ratio",
            "kv_cache_store_config.port", "kv_cache_store_config.ha.master_replicas",
            "motor_deploy_config.p_instances_num"} <= paths


@pytest.mark.parametrize(("base", "path"), CASES, ids=[f"{b}:{'.'.join(p)}" for b, p in CASES])
def test_the_example_in_a_type_message_passes_every_policy(base, path):
    service = BASES[base]()
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(with_value(service, path, "text"), "svc")
    [message] = [line for line in caught.value.problems if line.startswith(f"{'.'.join(path)}: ")]
    # `e.g. X` of a type message, or the first of a choice's `write one of X, Y or Z`
    suggested = re.search(r"e\.g\. ([^\s,]+)|write one of '?([^\s,']+)", message)
    example = yaml.safe_load(suggested.group(1) or suggested.group(2))
    settings = load_from_pulumi_config(with_value(service, path, example), "svc")  # every mandatory rule
    user_config = settings.user_config()
    transfers = {side: user_config[rules.engine_section(side)]["engine_config"].get("kv_transfer_config")
                 for side in rules.SIDES}
    assert rules.check_mooncake_eviction_headroom(user_config["kv_cache_store_config"], transfers) == []
