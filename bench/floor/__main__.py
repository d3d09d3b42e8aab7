"""The floor: what any Pulumi Python program needs to declare the objects our preview writes.

Reads every YAML file of the folder in config `kvpool-floor:manifests` (a `kvpool preview`'s out/<stack>/manifests)
and declares each object with its typed pulumi_kubernetes class (`apps/v1 Deployment` ->
pulumi_kubernetes.apps.v1.Deployment), its top-level fields as the class's arguments. Nothing else: no settings, no
components, no checks, no exports, and one option: an object of a namespace the folder declares depends on that
Namespace, without which `pulumi up` creates them at once and the provider's retries (1, 2, 4 ... 32 s, while the
object holds one of the program's few registration threads) can end before the Namespace is created. The resource
name is the manifest's file name (kind, namespace and name), unique within a preview. bench/floor.py runs it.
"""

import importlib
import re
from pathlib import Path

import pulumi
import yaml

_CAMEL_HUMP = re.compile(r"(?<!^)(?=[A-Z])")


def typed_class(api_version: str, kind: str) -> type:
    """`rbac.authorization.k8s.io/v1`, `ClusterRole` -> pulumi_kubernetes.rbac.v1.ClusterRole (`v1`: core.v1)."""
    group, _, version = api_version.rpartition("/")
    module = importlib.import_module(f"pulumi_kubernetes.{group.split('.')[0] or 'core'}.{version}")
    return getattr(module, kind)


manifests = {path.stem: yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)
             for path in sorted(Path(pulumi.Config().require("manifests")).glob("*.yaml"))}
namespaces: dict[str, pulumi.Resource] = {}
for name, body in sorted(manifests.items(), key=lambda item: item[1]["kind"] != "Namespace"):  # Namespaces first
    kind = body.pop("kind")
    namespace = namespaces.get(body["metadata"].get("namespace"))
    resource = typed_class(body.pop("apiVersion"), kind)(
        name, opts=pulumi.ResourceOptions(depends_on=[namespace]) if namespace else None,
        **{_CAMEL_HUMP.sub("_", key).lower(): value for key, value in body.items()},
    )
    if kind == "Namespace":
        namespaces[body["metadata"]["name"]] = resource
