"""Names and labels, as small pure functions usable before any resource exists (tests and policies import them)."""

from __future__ import annotations

from kvpool.internal.units import MAX_NAME_LENGTH

MANAGED_BY = "motor-kvpool"
# Engine pods carry this label; the store's NetworkPolicy admits exactly the pods that have it.
KV_CLIENT_LABEL = "motor-kvpool.io/kv-client"
# Kubernetes' default cluster DNS domain, which deploy.py writes into every service name.
DEFAULT_CLUSTER_DOMAIN = "cluster.local"
# Pods carrying this label may read the store's metrics port (its NetworkPolicy's SCRAPERS): Prometheus, and Motor's
# coordinator, which fetches the pool's /metrics itself.
METRICS_SCRAPER_LABEL = "motor-kvpool.io/metrics-scraper"


def k8s_name(*parts: str) -> str:
    """Join parts with '-' and cap at 63 characters, the limit of most Kubernetes names."""
    return "-".join(parts)[:MAX_NAME_LENGTH].rstrip("-")


def service_fqdn(service: str, namespace: str, cluster_domain: str) -> str:
    return f"{service}.{namespace}.svc.{cluster_domain}"


# Engine instances: `vllm-p0`, `vllm-d3` (deploy.py's names).
ENGINE_BASE = "vllm"
SIDE_LETTER = {"prefill": "p", "decode": "d"}


def instance_name(side: str, index: int | None) -> str:
    """`vllm-p0` for an instance; `vllm-p` for the role template of a service set."""
    return f"{ENGINE_BASE}-{SIDE_LETTER[side]}{'' if index is None else index}"


def engine_job_name(namespace: str, side: str, index: int | None) -> str:
    """The engine pods' job-name label (and JOB_NAME): `<job_id>-p0`, `<job_id>-p` for a role template."""
    return f"{namespace}-{instance_name(side, index).removeprefix(ENGINE_BASE + '-')}"


def common_labels(namespace: str, component: str, name: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": name,
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/part-of": namespace,
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }


def app_selector(app: str) -> dict[str, str]:
    """The labels by which a workload's Service, NetworkPolicies and ServiceMonitor select its pods: deploy.py's `app`."""
    return {"app": app}
