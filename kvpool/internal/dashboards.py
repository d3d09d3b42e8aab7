"""What every dashboard and alert set of the stack shares: the panels and alerts as data, the Grafana dashboard JSON
(built with the Grafana foundation SDK, not written as JSON), the PrometheusRule's groups, and the three
Prometheus-operator / Grafana-sidecar objects that carry them (ServiceMonitor, dashboard ConfigMap, PrometheusRule).

The pool's signals are kvpool/components/kv_store/monitoring.py, the Motor service's kvpool/internal/motor_monitoring.py."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

import pulumi
import pulumi_kubernetes as k8s
from grafana_foundation_sdk.builders import dashboard as gdash
from grafana_foundation_sdk.builders import prometheus as gprom
from grafana_foundation_sdk.builders import timeseries
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models.dashboard import DataSourceRef

from kvpool.internal.child_names import ChildNames
from kvpool.internal.labels import app_selector

# kube-prometheus-stack's Grafana sidecar loads every ConfigMap with this label (sidecar.dashboards.label/labelValue).
DASHBOARD_LABEL = {"grafana_dashboard": "1"}
DATASOURCE = DataSourceRef(type_val="prometheus", uid="${datasource}")
# Series Prometheus writes itself for every target (not in any binary's exposition).
PROMETHEUS_SERIES = frozenset({"up"})
MONITORING_API = "monitoring.coreos.com/v1"


@dataclass(frozen=True)
class Query:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    unit: str
    queries: tuple[Query, ...]


@dataclass(frozen=True)
class Alert:
    name: str
    expr: str
    duration: str  # how long the condition holds before the alert fires ("for")
    severity: str
    summary: str
    description: str


@dataclass(frozen=True)
class Signals:
    """One dashboard and its alert group."""

    title: str
    uid: str
    tags: tuple[str, ...]
    group: str  # the PrometheusRule's group name
    panels: tuple[Panel, ...]
    alerts: tuple[Alert, ...]


def job_selector(service: str, namespace: str) -> str:
    """A ServiceMonitor's series: Prometheus names their job after the Service it selects."""
    return f'job="{service}",namespace="{namespace}"'


def rate(metric: str, sel: str) -> str:
    """The counter's per-second rate over 5 minutes, summed over its series."""
    return f"sum(rate({metric}{{{sel}}}[5m]))"


def fewer_scraped(sel: str, count: int) -> str:
    """Fewer targets than `count` answer Prometheus (none at all counts as 0, not as no series)."""
    return f"(sum(up{{{sel}}}) or vector(0)) < {count}"


def dashboard_uid(prefix: str, namespace: str) -> str:
    """Grafana caps a uid at 40 characters; a namespace has up to 63."""
    return f"{prefix}-" + hashlib.sha256(namespace.encode()).hexdigest()[:20]


def dashboard_json(signals: Signals) -> str:
    board = (
        gdash.Dashboard(signals.title)
        .uid(signals.uid)
        .tags(list(signals.tags))
        .refresh("30s")
        .time("now-1h", "now")
        .with_variable(gdash.DatasourceVariable("datasource").label("Prometheus").type("prometheus"))
    )
    for panel in signals.panels:
        built = (
            timeseries.Panel().title(panel.title).description(panel.description).unit(panel.unit)
            .datasource(DATASOURCE).height(8).span(12)
        )
        for ref, query in zip("ABCDEFGH", panel.queries, strict=False):
            built = built.with_target(gprom.Dataquery().expr(query.expr).legend_format(query.legend).ref_id(ref))
        board = board.with_panel(built)
    return json.dumps(board.build(), cls=JSONEncoder, indent=2, sort_keys=True) + "\n"


def rule_groups(signals: Signals) -> list[dict[str, Any]]:
    return [{
        "name": signals.group,
        "rules": [
            {
                "alert": alert.name,
                "expr": alert.expr,
                "for": alert.duration,
                "labels": {"severity": alert.severity},
                "annotations": {"summary": alert.summary, "description": alert.description},
            }
            for alert in signals.alerts
        ],
    }]


def service_monitor(name: str, metadata: dict[str, Any], app: str, port: str,
                    opts: pulumi.ResourceOptions) -> k8s.apiextensions.CustomResource:
    """Scrapes /metrics on the named port of the Services labelled app=`app` in the object's namespace."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version=MONITORING_API,
        kind="ServiceMonitor",
        metadata=metadata,
        spec={
            "selector": {"matchLabels": app_selector(app)},
            "namespaceSelector": {"matchNames": [metadata["namespace"]]},
            "endpoints": [{"port": port, "path": "/metrics", "interval": "30s"}],
        },
        opts=opts,
    )


def dashboard_objects(signals: Signals, names: tuple[str, str], key: str, metadata: dict[str, Any],
                      children: ChildNames, opts: pulumi.ResourceOptions) -> list[pulumi.Resource]:
    """The dashboard ConfigMap (the sidecar's label, the dashboard under `key`) and the PrometheusRule, named
    `names` (ConfigMap, PrometheusRule), both with `metadata`'s namespace, labels and annotations; children of the
    component `children` names."""
    dashboard, rules = names
    return [
        k8s.core.v1.ConfigMap(
            children.name(dashboard),
            metadata={**metadata, "name": dashboard, "labels": {**metadata["labels"], **DASHBOARD_LABEL}},
            data={key: dashboard_json(signals)},
            opts=children.opts(dashboard, opts),
        ),
        k8s.apiextensions.CustomResource(
            children.name(rules),
            api_version=MONITORING_API,
            kind="PrometheusRule",
            metadata={**metadata, "name": rules},
            spec={"groups": rule_groups(signals)},
            opts=children.opts(rules, opts),
        ),
    ]
