"""The pool's Grafana dashboard (a ConfigMap for kube-prometheus-stack's dashboard sidecar) and its PrometheusRule.

Opt-in by kv_cache_store_config.dashboards. Every query names the series Prometheus keeps from the store's
ServiceMonitor (job = the store Service, namespace = the service's), and every metric it reads is one the real
binary exposes: tests/live/test_pool_metrics.py checks each name against a live scrape of mooncake_master and
MemCache's MetaService. Each alert's threshold comes from the stack's settings, and its description says which.
The dashboard is built with the Grafana foundation SDK, not written as JSON.
"""

from __future__ import annotations

from kvpool.components.kv_store.common import STORE_NAME, STORE_SERVICE, StoreContext
from kvpool.internal.dashboards import (
    Alert,
    Panel,
    Query,
    Signals,
    dashboard_objects,
    dashboard_uid,
    fewer_scraped,
    job_selector,
    rate,
)
from kvpool.policies import rules
from kvpool.settings.store import MemcacheStoreConfig, MooncakeStoreConfig

DASHBOARD_NAME = f"{STORE_NAME}-dashboard"
RULES_NAME = f"{STORE_NAME}-alerts"
# MooncakeHA's standby states (mooncake_master's ha_standby_state help text): 6 PROMOTING, 7 PROMOTED.
MOONCAKE_PROMOTING = 6
LEADER_CHANGE_WINDOW = "15m"


def selector(namespace: str) -> str:
    """The store's series: the ServiceMonitor's job is the Service it selects."""
    return job_selector(STORE_SERVICE, namespace)


def pool_signals(backend: str, namespace: str, panels: tuple[Panel, ...], alerts: tuple[Alert, ...]) -> Signals:
    return Signals(
        title=f"KV pool ({backend}) - {namespace}", uid=dashboard_uid("kvpool", namespace),
        tags=("motor-kvpool", "kv-pool", backend), group=f"kvpool-{backend}-pool", panels=panels, alerts=alerts,
    )


def _rates(sel: str, legends: dict[str, str]) -> tuple[Query, ...]:
    """One query per counter: its per-second rate over 5 minutes, named by its legend."""
    return tuple(Query(rate(metric, sel), legend) for metric, legend in legends.items())


def _increases(sel: str, *metrics: str) -> str:
    """How much the counters grew together in 5 minutes."""
    return " + ".join(f"sum(increase({metric}{{{sel}}}[5m]))" for metric in metrics)


def _put_failures(pool: str, namespace: str, metrics: tuple[str, ...], why: str) -> Alert:
    return Alert(
        name="KVPoolPutFailures",
        expr=f"({_increases(selector(namespace), *metrics)}) > 0",
        duration="0m",
        severity="warning",
        summary=f"Puts into the {pool} pool of {namespace} fail",
        description=f"{{{{ $value }}}} puts failed in 5 minutes. {why}",
    )


def _master_down(backend: str, namespace: str, replicas: int, setting: str) -> Alert:
    sel = selector(namespace)
    return Alert(
        name="KVPoolMasterDown",
        expr=fewer_scraped(sel, replicas),
        duration="1m",
        severity="critical",
        summary=f"A {backend} pool server of namespace {namespace} is not scraped",
        description=f"{{{{ $value }}}} of the {replicas} {backend} pool server(s) the stack runs ({setting}) answer "
        "Prometheus; engines whose master is gone can neither put nor get KV blocks.",
    )


def _shorter_lived_than_sized(sizing: rules.PoolSizing, namespace: str, sel: str) -> Alert:
    """Eviction frees what the writers put: the pool's floor (what eviction leaves) over the evicted bytes per second
    is how long a block now stays, the planner's lifetime (docs/sizing.md) measured."""
    writers = "; ".join(f"{w.instances} {w.side} instance(s) at {w.tokens_per_second} tokens/s ({w.rate_source})"
                        for w in sizing.writers)
    lifetime = sizing.lifetime_seconds
    return Alert(
        name="KVPoolShorterLivedThanSized",
        expr=f"max(master_total_capacity_bytes{{{sel}}}) * {sizing.floor:g} / "
        f"{rate('master_evicted_size_bytes', sel)} < {lifetime:.2f}",
        duration="10m",
        severity="warning",
        summary=f"Blocks in the Mooncake pool of {namespace} are evicted sooner than the sizing predicts",
        description=f"A block now stays {{{{ $value | humanizeDuration }}}} (the {sizing.floor:g} of the pool eviction "
        f"leaves, over the bytes evicted per second), less than the {lifetime:.2f} s the stack's sizing predicts "
        f"for its writers: {writers}. They put more than planned: set kv_pool_sizing.prefill_tokens_per_second to "
        "the measured rate and size the pool again (`kvpool size`).",
    )


def mooncake(store: MooncakeStoreConfig, namespace: str, sizing: rules.PoolSizing | None) -> Signals:
    """`sizing`: the pool as this stack's engines write it; None (no writer, or a pool other stacks write too)
    leaves out the alert that compares eviction with it."""
    sel = selector(namespace)
    hwm, ratio, ttl_s = store.eviction_high_watermark_ratio, store.eviction_ratio, store.default_kv_lease_ttl / 1000
    replicas = store.ha.master_replicas if store.ha else 1
    used = f"max(master_allocated_bytes{{{sel}}}) / max(master_total_capacity_bytes{{{sel}}})"
    reads = " + ".join(rate(m, sel) for m in (
        "master_get_replica_list_requests_total", "master_batch_get_replica_list_items_total",
        "master_exist_key_requests_total", "master_batch_exist_key_items_total",
    ))
    panels = (
        Panel("Capacity and used", "Bytes the mounted segments offer and the bytes objects hold.", "bytes", (
            Query(f"max(master_total_capacity_bytes{{{sel}}})", "capacity"),
            Query(f"max(master_allocated_bytes{{{sel}}})", "used"),
        )),
        Panel("Used against the eviction watermark",
              f"Eviction starts above eviction_high_watermark_ratio {hwm} and frees eviction_ratio {ratio} of the pool.",
              "percentunit", (Query(used, "used"), Query(f"vector({hwm})", "eviction_high_watermark_ratio"))),
        Panel("Eviction", "Keys and bytes evicted, and eviction passes.", "short", (
            *_rates(sel, {
                "master_evicted_key_count": "keys/s",
                "master_successful_evictions_total": "evictions/s",
                "master_attempted_evictions_total": "attempts/s",
            }),
        )),
        Panel("Puts", "Put and batch-put requests, and their failures (a full pool answers NO_AVAILABLE_HANDLE).",
              "reqps", (
                  *_rates(sel, {
                      "master_put_start_requests_total": "put",
                      "master_batch_put_start_items_total": "batch put items",
                      "master_put_start_failures_total": "put failures",
                      "master_batch_put_start_failed_items_total": "batch put failed items",
                  }),
              )),
        Panel("Gets", "Replica lookups (a get) and their failures.", "reqps", (
            *_rates(sel, {
                "master_get_replica_list_requests_total": "get",
                "master_batch_get_replica_list_items_total": "batch get items",
                "master_get_replica_list_failures_total": "get failures",
                "master_batch_get_replica_list_failed_items_total": "batch get failed items",
            }),
        )),
        Panel("Leases",
              f"Each get or exist grants a lease of default_kv_lease_ttl {store.default_kv_lease_ttl} ms, during which "
              "eviction skips the object: reads per second times the TTL bounds the leased objects from above.",
              "short", (Query(f"({reads}) * {ttl_s:g}", "leased objects (at most)"),
                        Query(f"max(master_key_count{{{sel}}})", "keys"))),
        Panel("Masters", f"Masters answering Prometheus (of {replicas}), clients, and each standby's HA state "
              "(3 WATCHING, 6 PROMOTING, 7 PROMOTED).", "short", (
                  Query(f"sum(up{{{sel}}})", "masters up"),
                  Query(f"max(master_active_clients{{{sel}}})", "clients"),
                  Query(f"ha_standby_state{{{sel}}}", "{{pod}} standby state"),
              )),
    )
    alerts = [
        _master_down("mooncake_master", namespace, replicas, "ha.master_replicas" if store.ha else "no ha"),
        _put_failures("Mooncake", namespace, ("master_put_start_failures_total", "master_batch_put_start_failed_items_total"),
                      f"Eviction starts at eviction_high_watermark_ratio {hwm} and frees eviction_ratio {ratio} of the "
                      "pool, so a put fails only when writers outrun eviction or leased objects fill the pool: lower "
                      "the watermark, raise the ratio or mount more segments."),
        Alert(
            name="KVPoolAboveEvictionWatermark",
            expr=f"{used} > {hwm}",
            duration="5m",
            severity="warning",
            summary=f"The Mooncake pool of {namespace} stays above its eviction watermark",
            description=f"{{{{ $value | humanizePercentage }}}} of the pool is used, above eviction_high_watermark_ratio "
            f"{hwm}, for 5 minutes: eviction (every ~10 ms, freeing eviction_ratio {ratio}) does not bring it back, "
            f"so objects are leased (default_kv_lease_ttl {store.default_kv_lease_ttl} ms) or pinned faster than "
            "they can go.",
        ),
        Alert(
            name="KVPoolEvictionOutpacesLease",
            expr=f"{rate('master_evicted_size_bytes', sel)} * {ttl_s:g} > max(master_total_capacity_bytes{{{sel}}})",
            duration="10m",
            severity="warning",
            summary=f"The Mooncake pool of {namespace} evicts its whole capacity within one lease",
            description=f"Eviction frees more than the pool's capacity every default_kv_lease_ttl "
            f"({store.default_kv_lease_ttl} ms): a cached block lives shorter than a lease, so prefill's blocks are "
            "gone before decode or the next request reads them. Mount more segments (global_segment_size) or "
            "send less to the pool.",
        ),
    ]
    if sizing is not None and sizing.lifetime_seconds is not None:
        alerts.append(_shorter_lived_than_sized(sizing, namespace, sel))
    if store.ha:
        alerts.append(Alert(
            name="KVPoolMasterLeaderChanged",
            expr=f"changes(ha_standby_state{{{sel}}}[{LEADER_CHANGE_WINDOW}]) > 0 and "
            f"max_over_time(ha_standby_state{{{sel}}}[{LEADER_CHANGE_WINDOW}]) >= {MOONCAKE_PROMOTING}",
            duration="0m",
            severity="warning",
            summary=f"A Mooncake standby master of {namespace} took over",
            description=f"{{{{ $labels.pod }}}} was promoting or promoted within {LEADER_CHANGE_WINDOW} (of "
            f"ha.master_replicas {store.ha.master_replicas}): the leader changed; clients remount their segments, "
            "and the oplog keeps the objects. Look for why the old leader went.",
        ))
    return pool_signals(rules.MOONCAKE.name, namespace, panels, tuple(alerts))


def memcache(store: MemcacheStoreConfig, namespace: str) -> Signals:
    del store  # MemCache's thresholds are its own defaults; only the server count comes from the stack
    sel = selector(namespace)
    panels = (
        Panel("Capacity and used", "Bytes the LocalServices offer and the bytes objects hold, by medium.", "bytes", (
            Query(f"sum by (medium) (memcache_total_capacity_bytes{{{sel}}})", "capacity {{medium}}"),
            Query(f"sum by (medium) (memcache_allocated_bytes{{{sel}}})", "used {{medium}}"),
        )),
        Panel("Eviction", "Eviction passes, and whether one runs now.", "short", (
            *_rates(sel, {
                "memcache_evict_operations_total": "evictions/s",
            }),
Query(f"max(memcache_evict_running{{{sel}}})", "running"),
        )),
        Panel("Puts", "Allocations (a put) and their failures.", "reqps", (
            *_rates(sel, {
                "memcache_alloc_requests_total": "put",
                "memcache_batch_alloc_requests_total": "batch put",
                "memcache_alloc_failures_total": "put failures",
                "memcache_batch_alloc_failures_total": "batch put failures",
            }),
        )),
        Panel("Gets", "Gets, their failures and misses.", "reqps", (
            *_rates(sel, {
                "memcache_get_requests_total": "get",
                "memcache_batch_get_requests_total": "batch get",
                "memcache_get_failures_total": "get failures",
                "memcache_get_not_found_total": "get misses",
            }),
        )),
        Panel("MetaService", "MetaServices answering Prometheus, and the keys they hold. MemCache 1.3.0 exposes no "
              "lease or HA series.", "short", (
                  Query(f"sum(up{{{sel}}})", "meta services up"),
                  Query(f"max(memcache_stored_keys{{{sel}}})", "keys"),
              )),
    )
    alerts = (
        _master_down("MemCache MetaService", namespace, 1, "one MetaService"),
        _put_failures("MemCache", namespace, ("memcache_alloc_failures_total", "memcache_batch_alloc_failures_total"),
                      "No LocalService had room (or none registered memory): add LocalService memory or check that "
                      "the engines' LocalServices are up."),
    )
    return pool_signals(rules.MEMCACHE.name, namespace, panels, alerts)


def build(ctx: StoreContext, signals: Signals) -> None:
    """The dashboard ConfigMap (the sidecar's label) and the PrometheusRule, beside the store."""
    for made in dashboard_objects(signals, (DASHBOARD_NAME, RULES_NAME), f"kv-pool-{ctx.namespace}.json",
                                  ctx.metadata(DASHBOARD_NAME, STORE_NAME), ctx.names, ctx.opts()):
        ctx.keep(made)
