"""The metric names the dashboards and alerts query (the pool's per backend, and the Motor service's), and the names
a Prometheus exposition holds.

The queries are read back from what the components render (the dashboard JSON and the PrometheusRule), so a
name written into any expression is checked, not a list kept beside them."""

from __future__ import annotations

import json
import re
from pathlib import Path

from kvpool.components.kv_store import monitoring
from kvpool.internal import dashboards, motor_monitoring
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.store import MemcacheStoreConfig
from tests.program_runs import stack_values

RECORDINGS = {
    backend: Path(__file__).resolve().parent / "fixtures" / "pool_metrics" / f"{backend}.prom"
    for backend in ("mooncake", "memcache", "motor")
}
NAMESPACE = "svc"


def _mooncake_ha() -> dashboards.Signals:
    settings = load_from_pulumi_config(stack_values("mooncake-ha"), "mooncake-ha")
    return monitoring.mooncake(settings.kv_cache_store_config, NAMESPACE, settings.pool_sizing())


# Every query of each backend: Mooncake as mooncake-ha runs it, with HA (its leader-change alert exists only then)
# and its own sizing (the sizing alert); "motor": Motor's coordinator (tests/conformance/test_coordinator_metrics.py
# records its /metrics).
SIGNALS = {
    "mooncake": _mooncake_ha,
    "memcache": lambda: monitoring.memcache(MemcacheStoreConfig(backend="memcache"), NAMESPACE),
    "motor": lambda: motor_monitoring.motor_service(NAMESPACE, 2, 2),
}
# PromQL words that look like names: aggregation modifiers, set operators, `bool`, `offset`.
_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool", "offset"}
_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def names_in(expr: str) -> set[str]:
    """The metric names of a PromQL expression: identifiers that are no function call, keyword, label matcher,
    grouping label or range."""
    expr = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)  # strings (label values)
    expr = re.sub(r"\{[^}]*\}", "", expr)  # label matchers
    expr = re.sub(r"\[[^\]]*\]", "", expr)  # ranges
    expr = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)  # grouping labels
    return {m.group() for m in _NAME.finditer(expr)
            if m.group() not in _KEYWORDS and not expr[m.end():].lstrip().startswith("(")
            and not re.fullmatch(r"[0-9]", expr[m.start() - 1: m.start()] or " ")}


def rendered_queries(backend: str) -> list[str]:
    signals = SIGNALS[backend]()
    board = json.loads(dashboards.dashboard_json(signals))
    exprs = [target["expr"] for panel in board["panels"] for target in panel["targets"]]
    return exprs + [rule["expr"] for group in dashboards.rule_groups(signals) for rule in group["rules"]]


def queried_metrics(backend: str) -> set[str]:
    """What the binary must expose: every name queried, less the series Prometheus writes itself (`up`)."""
    return {name for expr in rendered_queries(backend) for name in names_in(expr)} - dashboards.PROMETHEUS_SERIES


def exposed_families(text: str) -> set[str]:
    return {line.split()[0].split("{")[0] for line in text.splitlines() if line and not line.startswith("#")}
