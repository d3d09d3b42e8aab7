"""ConfigMap `motor-config`: the effective user_config.json that Motor's in-pod code reads (and re-syncs)."""

from __future__ import annotations

import json

import pulumi
import pulumi_kubernetes as k8s

from components.settings import ServiceSettings

MOTOR_CONFIG_NAME = "motor-config"
USER_CONFIG_KEY = "user_config.json"


def render_user_config(settings: ServiceSettings) -> str:
    """Stable text: key order as Motor writes its files, so an unchanged config never shows a diff."""
    return json.dumps(settings.user_config(), indent=2, ensure_ascii=False) + "\n"


def motor_config_map(settings: ServiceSettings, opts: pulumi.ResourceOptions | None = None) -> k8s.core.v1.ConfigMap:
    return k8s.core.v1.ConfigMap(
        MOTOR_CONFIG_NAME,
        metadata=k8s.meta.v1.ObjectMetaArgs(
            name=MOTOR_CONFIG_NAME,
            namespace=settings.namespace,
            labels={"app.kubernetes.io/part-of": settings.namespace, "app.kubernetes.io/managed-by": "motor-kvpool"},
        ),
        data={USER_CONFIG_KEY: render_user_config(settings)},
        opts=opts,
    )
