"""A store owner's `kv_store` output, read by a consumer: data, never code.

The owner's stack output reaches the consumer's engine pods (their env, a ConfigMap of the consumer's namespace,
host mounts). A forged or compromised owner could otherwise put a privileged
container, a hostPath `/`, `LD_PRELOAD` or a ConfigMap key `../../escape` into the consumer's cluster objects. So
the consumer accepts only what the schema allows, and builds everything it renders itself, from the owner's data
fields, with the same functions the owner's backend uses:
- `host`: never taken from the owner: the consumer computes the store Service's name from the backend and its FQDN
  from the owner's namespace, deploy mode and the consumer's own cluster_domain (kvpool/components/kv_store/hosts.py), and
  refuses an output that names another host;
- `engine_env`: exactly the variables the backend sets, each with the value the consumer computes from the owner's
  host and port (its RENDERER's engine_env_from_output);
- `client_files`: exactly the backend's files (its RENDERER's client_files: mooncake.json, mmc-local.conf), bounded
  in size, each parsed and re-rendered by its backend;
- `host_paths`: exactly its RENDERER's host_paths (Yuanrong's socket folder, at its exact path; none for the others);
- `lease_ttl_ms`: only for a backend with a lease, held to the owner's own settings model (its RENDERER's
  lease_problems);
- `standalone_store`: true or false, and true only for a backend that runs a standalone store (rules.Backend
  standalone_store: the store process then runs in the consumer's own engine containers, from the consumer's own
  user_config.json).
What is common to every backend is read here; what differs is each backend's, found by the backend's name through
registry.renderer and rules.BACKENDS. Every refusal names the owner stack and the field of its output.
"""

from __future__ import annotations

import re
from typing import Any

from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.components.kv_store.hosts import store_host
from kvpool.components.kv_store.output import OUTPUT, OutputProblems
from kvpool.components.kv_store.registry import Renderer, renderer
from kvpool.components.workloads import Workloads
from kvpool.internal.units import MAX_PORT, is_dns_label
from kvpool.policies import rules
from kvpool.settings.deploy import DEPLOY_MODES
from kvpool.settings.types import CLUSTER_NAME, MAX_CLUSTER_NAME

MAX_CLIENT_FILE_BYTES = 64 * 1024
# The backends that may run a standalone store, as the standalone_store refusal names them.
STANDALONE_BACKENDS = " or ".join(name for name, facts in rules.BACKENDS.items() if facts.standalone_store)


def _is_port(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PORT


def _str_map(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items())


def sanitized_endpoint(
    cluster_domain: str, target: str, output: dict[str, Any]
) -> tuple[KVStoreEndpoint | None, list[str]]:
    """(the endpoint the consumer renders, built from the owner's data fields and the consumer's own `cluster_domain`;
    problems). The endpoint is None when there are problems."""
    problems = OutputProblems(target)
    backend, port = output.get("backend"), output.get("port")
    facts = rules.backend_facts(backend)
    if facts is None:
        problems.add("backend", f"{backend!r} is not a store backend ({', '.join(rules.BACKENDS)})")
    for field in ("port", "metrics_port"):
        if not _is_port(output.get(field)):
            problems.add(field, "is not a port number (1-65535)")
    namespace = output.get("namespace")
    if not isinstance(namespace, str) or not is_dns_label(namespace):
        problems.add("namespace", "is not a namespace name")
    for finding in rules.check_system_namespace(namespace, "namespace"):
        problems.add(finding.path, finding.message)
    if output.get("deploy_mode") not in DEPLOY_MODES:
        problems.add("deploy_mode", f"is not a deploy mode ({', '.join(DEPLOY_MODES)})")
    if output.get("stack") != target:
        problems.add("stack", f"is {output.get('stack')!r}, not the stack it was read from")
    cluster = output.get("cluster")
    if not (isinstance(cluster, str) and len(cluster) <= MAX_CLUSTER_NAME and re.fullmatch(CLUSTER_NAME, cluster)):
        problems.add("cluster", "is not a cluster name (one line of letters, digits and -_.:@/)")
    lease = output.get("lease_ttl_ms")
    if lease is not None and facts is not None:
        check = renderer(facts.name).lease_problems
        for message in check(lease) if check else [f"is {lease!r}, but a {backend} store has no lease"]:
            problems.add("lease_ttl_ms", message)
    consumers = output.get("allowed_consumers", [])
    if not isinstance(consumers, list) or not all(isinstance(c, str) for c in consumers):
        problems.add("allowed_consumers", "is not a list of namespace names")
    if not isinstance(output.get("compatibility", {}), dict):
        problems.add("compatibility", "is not a mapping")
    standalone = output.get("standalone_store", False)
    if not isinstance(standalone, bool) or standalone and not (facts and facts.standalone_store):
        problems.add("standalone_store",
                     f"must be false for a {backend} store, or true or false for a {STANDALONE_BACKENDS} store")
    if problems:
        return None, list(problems)
    # Where the owner's store is, computed here: in the owner's namespace, in this cluster's domain.
    workloads = Workloads(namespace, output["deploy_mode"], cluster_domain)
    host = store_host(backend, workloads)
    if output.get("host") != host:
        problems.add("host", f"is {output.get('host')!r}, but the {backend} store of namespace {namespace} is "
                             f"{host!r} (its Service in cluster domain {cluster_domain}); a consumer dials "
                             f"no other host")
        return None, list(problems)

    rendering = renderer(backend)
    engine_env = _engine_env(problems, backend, rendering, host, port, output.get("engine_env"))
    client_files = _client_files(problems, backend, rendering, host, port, workloads, output.get("client_files", {}))
    host_paths = _host_paths(problems, backend, rendering, output.get("host_paths", {}))
    if problems:
        return None, list(problems)
    return KVStoreEndpoint(
        backend=backend, host=host, port=port, metrics_port=output["metrics_port"], namespace=namespace,
        deploy_mode=output["deploy_mode"], engine_env=engine_env, client_files=client_files, standalone_store=standalone,
        host_paths=host_paths, lease_ttl_ms=lease, allowed_consumers=list(consumers),
        compatibility=dict(output.get("compatibility", {})),
    ), []


def _engine_env(
    problems: OutputProblems, backend: str, rendering: Renderer, host: str, port: int, theirs: Any
) -> dict[str, str]:
    ours = rendering.engine_env_from_output(problems, host, port, theirs)
    if not _str_map(theirs):
        problems.add("engine_env", "is not a mapping of variable names to text")
        return ours
    for name in sorted(set(theirs) - set(ours)):
        problems.add(f"engine_env.{name}", f"is not a variable a {backend} store sets (it sets {', '.join(ours)})")
    for name, value in ours.items():
        if theirs.get(name) != value:
            problems.add(f"engine_env.{name}", f"must be {value!r}, what {OUTPUT}.host and port give")
    return ours


def _client_files(
    problems: OutputProblems, backend: str, rendering: Renderer, host: str, port: int, workloads: Workloads,
    theirs: Any,
) -> dict[str, str]:
    expected = rendering.client_files
    if not _str_map(theirs):
        problems.add("client_files", "is not a mapping of file names to text")
        return {}
    for name in sorted(set(theirs) - set(expected)):
        problems.add(f"client_files[{name!a}]", f"is not a client file of a {backend} store "
                                                  f"({', '.join(expected) or 'it has none'})")
    files = {}
    for name, rebuild in expected.items():
        text = theirs.get(name)
        where = f"client_files[{name!a}]"
        if text is None:
            problems.add(where, "is missing")
        elif len(text.encode()) > MAX_CLIENT_FILE_BYTES:
            problems.add(where, f"is larger than {MAX_CLIENT_FILE_BYTES // 1024} KiB")
        elif (rendered := rebuild(problems, where, text, host, port, workloads)) is not None:
            files[name] = rendered
    return files


def _host_paths(problems: OutputProblems, backend: str, rendering: Renderer, theirs: Any) -> dict[str, dict[str, str]]:
    ours = rendering.host_paths()
    if theirs != ours:
        allowed = f"exactly {ours}" if ours else f"none for a {backend} store"
        problems.add("host_paths", f"engines mount {allowed}; refusing any other host path")
    return ours
