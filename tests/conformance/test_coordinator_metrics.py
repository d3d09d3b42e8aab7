"""Every metric the Motor-service dashboard and its alerts query is in what Motor's own coordinator serves on its
observability port: Motor's MetricsCollector (its update thread, fed the instances through its scheduler-provider
hook, as observability_server.py's lifespan feeds it) collects from engine endpoints and Motor's ObservabilityServer
answers GET /metrics, loaded from the user_config.json we render for mooncake-ha (2 prefill and 2 decode instances).

The engines are STUBS of vLLM (which needs an NPU): HTTP servers answering /metrics with the families vLLM's V1
Prometheus logger defines (names as Motor's metric_registry.py lists them, which the test checks; vLLM's help texts,
types, its model_name/engine labels and a subset of its histogram bucket bounds). Two prefill instances and one
decode instance answer, so one decode instance is inactive.

The scrape is recorded in tests/fixtures/pool_metrics/motor.prom (`KVPOOL_RECORD_METRICS=1` rewrites it), which
tests/test_kv_store_monitoring.py and promtool's rule tests read."""

from __future__ import annotations

import copy
import json
import os
from typing import Any

from tests.conformance.engine_server import run_motor
from tests.conformance.test_motor_boot import user_config_of
from tests.pool_metrics import RECORDINGS, exposed_families, queried_metrics
from tests.program_runs import render, stack_values

MODEL = "qwen"
# vLLM's V1 families (vllm/v1/metrics/loggers.py): name -> (type, help).
VLLM_FAMILIES = {
    "vllm:num_requests_running": ("gauge", "Number of requests in model execution batches."),
    "vllm:num_requests_waiting": ("gauge", "Number of requests waiting to be processed."),
    "vllm:kv_cache_usage_perc": ("gauge", "KV-cache usage. 1 means 100 percent usage."),
    "vllm:prefix_cache_queries_total": ("counter", "Prefix cache queries, in terms of number of queried tokens."),
    "vllm:prefix_cache_hits_total": ("counter", "Prefix cache hits, in terms of number of cached tokens."),
    "vllm:prompt_tokens_total": ("counter", "Number of prefill tokens processed."),
    "vllm:generation_tokens_total": ("counter", "Number of generation tokens processed."),
    "vllm:time_to_first_token_seconds": ("histogram", "Histogram of time to first token in seconds."),
    "vllm:time_per_output_token_seconds": ("histogram", "Histogram of time per output token in seconds."),
}
BOUNDS = ("0.1", "0.5", "1.0", "2.5", "+Inf")  # in both vLLM's TTFT and TPOT bucket lists
GAUGES_AND_COUNTERS = [name for name, (kind, _) in VLLM_FAMILIES.items() if kind != "histogram"]
# Each engine: its value of every gauge and counter (in GAUGES_AND_COUNTERS' order), its latency histograms' cumulative
# count per bucket bound and their sum.
ENGINES = [
    {"role": "prefill", "job_name": "mooncake-ha-p0", "values": (3, 1, 0.4, 1000, 250, 1000, 12),
     "buckets": (1, 4, 6, 8, 8), "sum": 4.5},
    {"role": "prefill", "job_name": "mooncake-ha-p1", "values": (5, 0, 0.6, 2000, 1500, 2000, 20),
     "buckets": (0, 2, 5, 9, 10), "sum": 8.25},
    {"role": "decode", "job_name": "mooncake-ha-d0", "values": (7, 2, 0.25, 0, 0, 64, 900),
     "buckets": (2, 3, 3, 4, 4), "sum": 1.5},
]

DRIVER = r'''
import asyncio, json, sys, threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
from motor.common.resources.endpoint import Endpoint
from motor.common.resources.instance import Instance
from motor.config.coordinator import CoordinatorConfig
from motor.coordinator.metrics.metric_registry import MetricRegistry
from motor.coordinator.metrics.metrics_collector import MetricsCollector

specs_path, results_path = sys.argv[1:3]
(spec,) = json.load(open(specs_path, encoding="utf-8"))


def stub_engine(text):
    """STUB of a vLLM engine's /metrics (vLLM needs an NPU)."""
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = text.encode()
            self.send_response(200 if self.path == "/metrics" else 404)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server.server_address[1]


instances = {}
for number, engine in enumerate(spec["engines"]):
    instance = Instance(job_name=engine["job_name"], model_name=spec["model"], id=number, role=engine["role"])
    port = stub_engine(engine["text"])
    instance.add_endpoints("127.0.0.1", {0: Endpoint(id=0, ip="127.0.0.1", business_port="0", mgmt_port=str(port))})
    instances[number] = instance


class Scheduler:
    """The live instance view observability_server.py's _SchedulerInstanceProvider reads from the scheduler."""

    async def get_all_instances(self):
        return instances, {}


config = CoordinatorConfig.from_json(spec["user_config"])
collector = MetricsCollector(config)  # the process's singleton, which the /metrics route reads

from motor.coordinator.api_server.observability_server import ObservabilityServer  # noqa: E402

server = ObservabilityServer(config)


async def main():
    collector.set_event_loop(asyncio.get_running_loop())
    collector.set_scheduler_provider(Scheduler)
    collector.start()
    for _ in range(300):
        if collector._collects_version:
            break
        await asyncio.sleep(0.1)
    transport = httpx.ASGITransport(app=server.observability_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://coordinator") as client:
        response = await client.get("/metrics")
    await asyncio.to_thread(collector.stop)
    return response


response = asyncio.run(main())
semantics = {}
for name in spec["families"]:
    known = MetricRegistry.get_semantic(name)
    semantics[name] = None if known is None else known.semantic.value
json.dump([{"status": response.status_code, "text": response.text, "semantics": semantics}],
          open(results_path, "w", encoding="utf-8"))
'''


def exposition(engine: dict[str, Any]) -> str:
    """One stub engine's /metrics, laid out as prometheus_client writes vLLM's (HELP, TYPE, samples)."""
    labels = f'model_name="{MODEL}",engine="0"'
    lines = []
    values = dict(zip(GAUGES_AND_COUNTERS, engine["values"], strict=True))
    for name, (kind, help_text) in VLLM_FAMILIES.items():
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        if kind != "histogram":
            lines.append(f"{name}{{{labels}}} {float(values[name])}")
            continue
        lines += [f'{name}_bucket{{{labels},le="{bound}"}} {float(count)}'
                  for bound, count in zip(BOUNDS, engine["buckets"], strict=True)]
        lines += [f"{name}_count{{{labels}}} {float(engine['buckets'][-1])}", f"{name}_sum{{{labels}}} {engine['sum']}"]
    return "\n".join(lines) + "\n"


def test_every_queried_metric_is_in_motors_coordinator_metrics(motor_build, tmp_path):
    values = copy.deepcopy(stack_values("mooncake-ha"))
    values["motor_deploy_config"].update(p_instances_num=2, d_instances_num=2)
    user_config = tmp_path / "user_config.json"
    user_config.write_text(json.dumps(user_config_of(render(values, stack="mooncake-ha"))), encoding="utf-8")
    spec = {"user_config": str(user_config), "model": MODEL, "families": list(VLLM_FAMILIES),
            "engines": [{**engine, "text": exposition(engine)} for engine in ENGINES]}
    (result,) = run_motor(DRIVER, [spec], motor_build, tmp_path)
    assert result["status"] == 200
    # The stub's families are ones Motor's registry aggregates by meaning, not unknown names it would merely sum.
    assert result["semantics"] == {
        "vllm:num_requests_running": "state_gauge", "vllm:num_requests_waiting": "queue_gauge",
        "vllm:kv_cache_usage_perc": "cache_metric", "vllm:prefix_cache_queries_total": "ratio_denominator",
        "vllm:prefix_cache_hits_total": "ratio_numerator", "vllm:prompt_tokens_total": "throughput_counter",
        "vllm:generation_tokens_total": "throughput_counter", "vllm:time_to_first_token_seconds": "sla_metric",
        "vllm:time_per_output_token_seconds": "sla_metric",
    }
    text = result["text"]
    if os.environ.get("KVPOOL_RECORD_METRICS") == "1":
        RECORDINGS["motor"].write_text(text)
    samples = text.splitlines()
    # The worker counts against the rendered p_instances_num/d_instances_num: 2 of 2 prefill, 1 of 2 decode.
    for line in ("motor:active_prefill_workers 2", "motor:inactive_prefill_workers 0",
                 "motor:active_decode_workers 1", "motor:inactive_decode_workers 1"):
        assert line in samples
    # Aggregated as the panels' descriptions say: queues summed, KV cache usage averaged, the hit rate from the sums
    # (1750 of 3000), TTFT from the decode instance only.
    labels = f'model_name="{MODEL}",engine="0"'
    for line in (f"vllm:num_requests_waiting{{{labels}}} 3.0", f"vllm:kv_cache_usage_perc{{{labels}}} 0.4166666666666667",
                 "vllm:prefix_cache_hit_rate 0.5833333333333334",
                 f'vllm:time_to_first_token_seconds_bucket{{model_name="{MODEL}",le="+Inf"}} 4.0'):
        assert line in samples
    # One series set for the service: no role or instance label for a query to split by.
    assert [line for line in samples if 'role="' in line or 'instance_id="' in line] == []
    assert sorted(queried_metrics("motor") - exposed_families(text)) == []
    assert exposed_families(RECORDINGS["motor"].read_text()) == exposed_families(text)
