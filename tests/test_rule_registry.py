"""The settings' checks and the pack's policies are two views of one registry (kvpool/policies/rules/registry.py)."""

from __future__ import annotations

import dataclasses
from unittest import mock

from kvpool.policies import rules
from kvpool.policies.catalog import POLICIES
from kvpool.policies.rules import registry


def test_the_pack_has_one_policy_per_registered_rule_with_its_words_in_its_order():
    assert [(p.name, p.enforcement_level.value, p.severity.value, p.description, p.remediation_steps)
            for p in POLICIES] == [(r.name, r.level, r.severity, r.description, r.remediation) for r in rules.RULES]


def _spy(rule: rules.Rule, calls: list[str]) -> rules.Rule:
    if rule.check is None:
        return rule

    def check(service, config):
        calls.append(rule.name)
        return []
    return dataclasses.replace(rule, check=check)


def _run(user_config: dict, owns_store: bool) -> list[str]:
    calls: list[str] = []
    with mock.patch.object(registry, "RULES", tuple(_spy(rule, calls) for rule in rules.RULES)):
        assert rules.check_service(user_config, {}, owns_store=owns_store, engine_resources={}) == []
    return calls


def test_the_settings_run_every_registered_mandatory_rule_on_the_stacks_it_applies_to():
    checked = [r for r in rules.RULES if r.check is not None and r.level == rules.MANDATORY]
    store = {"kv_cache_store_config": {"backend": "mooncake"}}
    assert _run(store, owns_store=True) == [r.name for r in checked]
    assert _run(store, owns_store=False) == [r.name for r in checked if r.stacks is not rules.Stacks.OWNER]
    assert _run({}, owns_store=True) == [r.name for r in checked if r.stacks is rules.Stacks.ANY]
    assert len(checked) == 26 and {r.stacks for r in checked} == set(rules.Stacks)


def test_the_guards_are_written_once():
    def service(store: dict, owns: bool) -> rules.Service:
        return rules.Service(user_config={"kv_cache_store_config": store}, env_sections={}, engine_envs={},
                             engine_resources={}, owns_store=owns)
    owner, consumer, none = service({"backend": "memcache"}, True), service({"backend": "memcache"}, False), \
        service({}, True)
    assert [[s.hold(x) for x in (owner, consumer, none)] for s in rules.Stacks] == [
        [True, True, True], [True, True, False], [True, False, False]]
