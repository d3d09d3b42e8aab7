"""The Motor service's Grafana dashboard and alerts: Motor's coordinator and the engines' KV metrics as the
coordinator's observability process serves them (GET /metrics on its obs port: motor/coordinator/api_server/
observability_server.py), scraped through a ServiceMonitor on the coordinator's obs Service.

That /metrics is Motor's `full` view (metrics/metrics_collector.py): its own worker counts, and each vLLM family of
every available instance aggregated into one series set, no role or instance label (metric_registry.py says how:
queue and running gauges and counters summed, KV cache usage averaged, histograms merged). Every metric queried here
is in the output of Motor's own collector run on stub engines (tests/conformance/test_coordinator_metrics.py,
recorded in tests/fixtures/pool_metrics/motor.prom). Opt-in with the pool's: kv_cache_store_config.dashboards.
"""

from __future__ import annotations

from kvpool.internal.dashboards import (
    Alert,
    Panel,
    Query,
    Signals,
    dashboard_uid,
    fewer_scraped,
    job_selector,
    rate,
)
from kvpool.internal.motor_pod import COORDINATOR_OBS_SERVICE

DASHBOARD_NAME = "mindie-motor-service-dashboard"
RULES_NAME = "mindie-motor-service-alerts"
OBS_PORT = "obs"  # the coordinator's obs Service port, which the ServiceMonitor names
QUANTILES = (0.5, 0.95, 0.99)  # Motor's own (metric_registry.py: TTFT, TPOT)
SIDES = {"prefill": "p_instances_num", "decode": "d_instances_num"}


def selector(namespace: str) -> str:
    return job_selector(COORDINATOR_OBS_SERVICE, namespace)


def _workers(side: str, count: int, sel: str) -> Panel:
    return Panel(
        f"{side.capitalize()} workers",
        f"Active: {side} instances Motor's scheduler lists as available whose every engine answered the coordinator's "
        f"/metrics; inactive: the rest of motor_deploy_config.{SIDES[side]} {count}.",
        "short", (
            Query(f"max(motor:active_{side}_workers{{{sel}}})", "active"),
            Query(f"max(motor:inactive_{side}_workers{{{sel}}})", "inactive"),
            Query(f"vector({count})", SIDES[side]),
        ),
    )


def _latency(title: str, metric: str, sel: str) -> Panel:
    return Panel(
        title,
        f"Quantiles over 5 minutes of {metric}, the histogram Motor merges over the decode instances (prefill's "
        "too with a prefill-handoff connector): Motor's own _p50/_p95/_p99 gauges count since each engine started.",
        "s",
        tuple(Query(f"histogram_quantile({q}, sum by (le) (rate({metric}_bucket{{{sel}}}[5m])))", f"p{round(q * 100)}")
              for q in QUANTILES),
    )


def _workers_missing(side: str, count: int, namespace: str, sel: str) -> Alert:
    return Alert(
        name=f"Motor{side.capitalize()}WorkersInactive",
        expr=f"(max(motor:active_{side}_workers{{{sel}}}) or vector(0)) < {count}",
        duration="5m",
        # Short of one of one is none: the service cannot serve. Short of one of several, it serves with less.
        severity="critical" if count == 1 else "warning",
        summary=f"{side.capitalize()} instances of {namespace} are not serving",
        description=f"{{{{ $value }}}} of the {count} {side} instance(s) the stack runs "
        f"(motor_deploy_config.{SIDES[side]}) are active in Motor's coordinator for 5 minutes: the others are not "
        "registered with the controller, or one of their engines does not answer /metrics. Without a coordinator "
        "series (it is down, or no instance at all is available) the count is 0.",
    )


def motor_service(namespace: str, prefill: int, decode: int) -> Signals:
    """`prefill`, `decode`: the stack's instance counts, the alerts' thresholds."""
    sel = selector(namespace)
    panels = (
        _workers("prefill", prefill, sel),
        _workers("decode", decode, sel),
        Panel("Tokens per second",
              "Over all engines: the rate of the token counters Motor sums across instances (its own "
              "motor:*_tokens_per_second gauges carry one instance's rate: metric_registry.py passes them through "
              "from the first source).", "short", (
                  Query(rate("vllm:prompt_tokens_total", sel), "prompt"),
                  Query(rate("vllm:generation_tokens_total", sel), "generation"),
              )),
        Panel("Engines' KV cache usage", "The engines' KV cache blocks in use, Motor's mean over the instances.",
              "percentunit", (Query(f"vllm:kv_cache_usage_perc{{{sel}}}", "mean {{model_name}}"),)),
        Panel("Prefix cache hit rate",
              "Cached tokens per queried token: over 5 minutes, and Motor's vllm:prefix_cache_hit_rate (since the "
              "engines started).", "percentunit", (
                  Query(f"{rate('vllm:prefix_cache_hits_total', sel)} / {rate('vllm:prefix_cache_queries_total', sel)}",
                        "5m"),
                  Query(f"max(vllm:prefix_cache_hit_rate{{{sel}}})", "since start"),
              )),
        _latency("Time to first token", "vllm:time_to_first_token_seconds", sel),
        _latency("Time per output token", "vllm:time_per_output_token_seconds", sel),
        Panel("Requests", "Requests waiting for and in the engines' batches, summed over the instances.", "short", (
            Query(f"sum(vllm:num_requests_waiting{{{sel}}})", "waiting"),
            Query(f"sum(vllm:num_requests_running{{{sel}}})", "running"),
        )),
    )
    alerts = (
        Alert(
            name="MotorCoordinatorDown",
            expr=fewer_scraped(sel, 1),
            duration="1m",
            severity="critical",
            summary=f"Motor's coordinator of {namespace} is not scraped",
            description="The coordinator's observability port does not answer Prometheus: the service's metrics are "
            "gone, and if the coordinator itself is down no request is routed.",
        ),
        _workers_missing("prefill", prefill, namespace, sel),
        _workers_missing("decode", decode, namespace, sel),
    )
    return Signals(
        title=f"Motor service - {namespace}", uid=dashboard_uid("motor", namespace),
        tags=("motor-kvpool", "motor"), group="motor-service", panels=panels, alerts=alerts,
    )
