"""The sizing table `kvpool preview` and `kvpool fleet` print: per pool its writers, KV bytes per token, capacity in
tokens, block lifetime and place on the Mooncake eviction frontier (the numbers: kvpool/policies/rules/pool_sizing.py;
their derivation: docs/sizing.md)."""

from __future__ import annotations

import dataclasses

from kvpool.policies import rules
from kvpool.settings.service import ServiceSettings

COLUMNS = ("POOL", "BACKEND", "WRITERS", "KV BYTES/TOKEN", "CAPACITY", "BLOCK LIFETIME", "FRONTIER")


def shared_pool_sizing(owner: ServiceSettings, consumers: list[ServiceSettings]) -> rules.PoolSizing | None:
    """The owner's pool with the writers and store clients of the consumers that use it: each consumer's engines
    sized against the owner's store settings (its segment, eviction), which are what they run with."""
    pool = owner.pool_sizing()
    store = owner.user_config().get("kv_cache_store_config")
    for consumer in consumers:
        theirs = rules.pool_sizing({**consumer.user_config(), "kv_cache_store_config": store},
                                   consumer.kv_pool_sizing.as_rule_input())
        if pool is None or theirs is None:
            pool = pool or theirs
            continue
        pool = dataclasses.replace(pool, units=pool.units + theirs.units, writers=pool.writers + theirs.writers)
    return pool


def min_lifetime_seconds(settings: ServiceSettings) -> float:
    return rules.min_lifetime_seconds(rules.engine_envs(settings.env_sections()), settings.kv_pool_sizing.as_rule_input())


def _writers(sizing: rules.PoolSizing) -> str:
    return ", ".join(f"{w.instances} {w.side} x {w.tokens_per_second} tok/s" for w in sizing.writers) or "none"


def _bytes_per_token(sizing: rules.PoolSizing) -> str:
    shapes = {w.shape for w in sizing.writers}
    if None in shapes or not shapes:
        return "? (set kv_pool_sizing.model)"
    return ", ".join(f"{shape.bytes_per_token} ({shape.source})" for shape in shapes if shape is not None)


def _capacity(sizing: rules.PoolSizing) -> str:
    if sizing.capacity_bytes is None:
        return f"? ({sizing.field} not known offline)"
    memory = f"{rules.bytes_text(sizing.unit_bytes or 0)} x {sizing.units} {sizing.unit_name}s"
    tokens = sizing.capacity_tokens
    if tokens is None:
        return memory
    writers = sum(w.instances for w in sizing.writers) or 1
    return (f"{memory} = {tokens} tokens in {sizing.capacity_blocks} blocks of {sizing.writers[0].block_size} "
            f"({tokens // writers} per writing instance)")


def _lifetime(sizing: rules.PoolSizing, minimum: float) -> str:
    lifetime = sizing.lifetime_seconds
    if lifetime is None:
        return "?"
    return f"{lifetime:.2f} s ({'below' if lifetime < minimum else 'above'} the {minimum:g} s minimum)"


def row(name: str, settings: ServiceSettings, planned: rules.PoolSizing | None = None) -> tuple[str, ...]:
    """The stack's pool as its settings size it, or as `planned` (kvpool size)."""
    store = settings.kv_cache_store_config
    if store is None:
        return (name, "-", "no KV store", "", "", "", "")
    if store.target_stack is not None:
        return (name, store.backend, f"into {store.target_stack}'s pool: sized with that stack", "", "", "", "")
    sizing = planned or settings.pool_sizing()
    if sizing is None:
        return (name, store.backend, "none: no engine uses a store connector, the store holds nothing", "", "", "", "")
    return (name, sizing.backend, _writers(sizing), _bytes_per_token(sizing), _capacity(sizing),
            _lifetime(sizing, min_lifetime_seconds(settings)), sizing.frontier())


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """The rows under COLUMNS, one pool per line."""
    rows = [COLUMNS, *rows]
    widths = [max(len(cells[i]) for cells in rows) for i in range(len(COLUMNS))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()
            for cells in rows]
