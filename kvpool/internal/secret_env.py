"""Secret environment for Motor's pods: the stack's `secret_env` (set with `pulumi config set --secret --path
secret_env.NAME VALUE`) becomes one Kubernetes Secret that every Motor container loads with envFrom. The values
stay Pulumi secrets end to end: they never enter the settings model, a ConfigMap or a plain env entry."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from kvpool.internal import sdk_internals
from kvpool.internal.checksums import PREFIX, digest
from kvpool.internal.labels import common_labels

SECRET_NAME = "motor-kvpool-secret-env"


@dataclass(frozen=True)
class SecretEnv:
    """What a Motor pod template takes from the Secret: its envFrom, and the digest annotation that rolls the pods
    when a value changes (envFrom is read at start only). The digest is published unsecret: a sha256 of the
    values, never the values."""

    env_from: list[dict]
    annotation: dict[str, pulumi.Output[str]]


def secret_env(namespace: str, opts: pulumi.ResourceOptions | None, project: str, key: str,
               name: str = SECRET_NAME) -> SecretEnv | None:
    """The Secret (`name`: its Pulumi name), or None when the stack sets no secret_env (Pulumi.yaml's default is {}).
    `project` and `key`: where the stack configuration holds it (the settings' PROJECT and from_stack.SECRET_ENV_KEY,
    `motor-kvpool:secret_env`)."""
    # Emptiness from the raw text: reading the value itself outside a secret would log it as plain.
    if sdk_internals.raw_config(f"{project}:{key}") in (None, "", "{}"):
        return None
    values = pulumi.Config(project).require_secret_object(key)  # read_stack_settings checked it is secret
    string_data = values.apply(lambda data: {str(k): str(v) for k, v in (data or {}).items()})
    k8s.core.v1.Secret(
        name,
        metadata={"name": SECRET_NAME, "namespace": namespace, "labels": common_labels(namespace, "secret-env", SECRET_NAME)},
        type="Opaque",
        string_data=string_data,
        opts=opts,
    )
    return SecretEnv(
        env_from=[{"secretRef": {"name": SECRET_NAME}}],
        annotation={f"{PREFIX}secret-env": pulumi.Output.unsecret(string_data.apply(digest))},
    )
