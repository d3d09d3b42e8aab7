"""The nodes of each cluster of the fleet, read through a kubeconfig (`kvpool fleet --kubeconfig FILE`) with the
Kubernetes Python client: `GET /api/v1/nodes` in the kubeconfig's context named as the stacks' `cluster` setting,
or its current context for the default cluster when it has no context of that name (the stacks that leave
`cluster` unset share whatever cluster the kubeconfig points at)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import urllib3
from kubernetes import config
from kubernetes.client import ApiClient, Configuration, CoreV1Api
from kubernetes.client.exceptions import ApiException
from kubernetes.config.config_exception import ConfigException

from kvpool.cli.fleet.capacity import ClusterNodes, Node, ready_nodes
from kvpool.errors import KvpoolError
from kvpool.settings.service import DEFAULT_CLUSTER

REQUEST_TIMEOUT_SECONDS = 30  # a large cluster's node list, yet a dead server does not hang the fleet


class NodesError(KvpoolError):
    """The kubeconfig cannot be read, or its API server does not list the nodes."""


def _contexts(kubeconfig: Path) -> tuple[list[str], str | None]:
    try:
        contexts, current = config.list_kube_config_contexts(config_file=str(kubeconfig))
    except (ConfigException, OSError) as error:
        raise NodesError(f"--kubeconfig {kubeconfig}: {error}") from None
    return [context["name"] for context in contexts], (current or {}).get("name")


def cluster_contexts(kubeconfig: Path, clusters: Iterable[str]) -> dict[str, str | None]:
    """The kubeconfig's context of each cluster, by name: the context named as the stacks' `cluster` setting, else
    the current one for the default cluster; None when it has none (the cluster is then not read)."""
    names, current = _contexts(kubeconfig)
    return {cluster: cluster if cluster in names else (current if cluster == DEFAULT_CLUSTER else None)
            for cluster in sorted(set(clusters))}


def cluster_nodes(kubeconfig: Path, clusters: Iterable[str]) -> list[ClusterNodes]:
    return [ClusterNodes(cluster, context, () if context is None else _list(kubeconfig, context))
            for cluster, context in cluster_contexts(kubeconfig, clusters).items()]


def read(kubeconfig: Path, context: str, doing: str, do: str, call: Callable[[ApiClient], Any]) -> Any:
    """The JSON `call` reads through a client of `context`; NodesError naming the kubeconfig and the context, and
    what was `doing` (what it could not `do`)."""
    where = f"--kubeconfig {kubeconfig} context {context}"
    try:
        settings = Configuration()
        settings.retries = False  # one refusal is enough to say so; urllib3 would retry three times
        client: ApiClient = config.new_client_from_config(config_file=str(kubeconfig), context=context,
                                                          persist_config=False, client_configuration=settings)
        with client:
            return json.loads(call(client).data)
    except ConfigException as error:
        raise NodesError(f"{where}: {error}") from None
    except ApiException as error:
        raise NodesError(f"{where}: {doing} was refused: {error.status} {error.reason}") from None
    except (urllib3.exceptions.HTTPError, ValueError) as error:
        raise NodesError(f"{where}: cannot {do}: {error}") from None


def _list(kubeconfig: Path, context: str) -> tuple[Node, ...]:
    nodes = read(kubeconfig, context, "listing the nodes", "list the nodes", lambda client: CoreV1Api(client).list_node(
        _preload_content=False, _request_timeout=REQUEST_TIMEOUT_SECONDS))
    return tuple(ready_nodes(nodes))
