"""The smallest pool that reaches a target block lifetime or number of cached tokens (`kvpool size`): the size per
segment, LocalService or node worker, and for Mooncake the eviction pair to run it with (docs/sizing.md)."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from kvpool.errors import KvpoolError
from kvpool.policies import rules
from kvpool.settings.types import MAX_NODE_MEMORY

# bench/results/eviction.md: the largest share of the pool written per 10 ms at which some eviction pair kept every
# put in every run (0.6/0.4, which the sustainable-eviction advisory also accepts).
FRONTIER_MAX_SHARE = 0.27


class SizingInputError(KvpoolError):
    """The stack lacks what the planner needs (a pool, the model's shape)."""


@dataclass(frozen=True)
class SizePlan:
    pool: rules.PoolSizing  # the pool as planned: the size and eviction pair to write
    size_text: str  # the value of pool.field
    decided_by: str  # which need set the size


def _eviction_pair(pool: rules.PoolSizing) -> rules.PoolSizing:
    """A backend whose eviction was measured (Mooncake) runs the pair that kept every put up to FRONTIER_MAX_SHARE;
    the others evict as they do."""
    if not pool.measured_eviction:
        return pool
    high, ratio = rules.SUSTAINABLE_HIGH_WATERMARK, rules.SUSTAINABLE_EVICTION_RATIO
    return dataclasses.replace(pool, high=high, ratio=ratio, floor=rules.mooncake_floor(high, ratio))


def _size_bytes(pool: rules.PoolSizing, text: str) -> int:
    return int(text) * 2**20 if pool.field.endswith("_mb") else rules.mooncake_size_bytes(text)


def plan(pool: rules.PoolSizing | None, lifetime_seconds: float | None = None, tokens: int | None = None) -> SizePlan:
    if pool is None:
        raise SizingInputError("the stack owns no pool any engine writes to: nothing to size")
    rate, block_bytes = pool.write_bytes_per_second, pool.block_bytes
    if rate is None or block_bytes is None:
        raise SizingInputError("the model's shape is unknown: set kv_pool_sizing.model (a row of docs/sizing.md's "
                               "table) or kv_pool_sizing.model_shape")
    planned = _eviction_pair(pool)
    if lifetime_seconds is not None:
        target, resident = f"a {lifetime_seconds:g} s block lifetime", lifetime_seconds * rate
    else:
        blocks = math.ceil((tokens or 0) / pool.writers[0].block_size)
        target, resident = f"{tokens} cached tokens", blocks * block_bytes
    if resident > MAX_NODE_MEMORY * planned.units:  # also what keeps the arithmetic below finite
        raise SizingInputError(_beyond_node_memory(target, planned))
    needs = {target: rules.unit_bytes_for_resident(planned, resident),
             "one max_model_len request per writing instance": rules.unit_bytes_for_requests(planned)}
    if pool.measured_eviction:
        needs[f"at most {FRONTIER_MAX_SHARE:.0%} of the pool written per 10 ms"] = math.ceil(
            rate * rules.MOONCAKE_EVICTION_PERIOD_S / (FRONTIER_MAX_SHARE * planned.units))
    decided_by = max(needs, key=lambda need: needs[need])
    if needs[decided_by] > MAX_NODE_MEMORY:
        raise SizingInputError(_beyond_node_memory(decided_by, planned))
    text = rules.unit_text(planned, needs[decided_by])
    return SizePlan(dataclasses.replace(planned, unit_bytes=_size_bytes(planned, text)), text, decided_by)


def _beyond_node_memory(need: str, pool: rules.PoolSizing) -> str:
    return (f"{need} needs more than one node's memory (16384GB, the most the settings accept) in each of the "
            f"pool's {pool.units} {pool.unit_name}s ({pool.field}); ask for less, or add engines to the pool")


def stack_lines(result: SizePlan) -> list[str]:
    """What to paste into the stack file."""
    pool = result.pool
    lines = ["  motor-kvpool:kv_cache_store_config:", f"    {pool.field.rpartition('.')[2]}: {result.size_text}"]
    if pool.measured_eviction:  # the pair _eviction_pair planned
        lines += [f"    eviction_high_watermark_ratio: {pool.high:g}", f"    eviction_ratio: {pool.ratio:g}"]
    return lines
