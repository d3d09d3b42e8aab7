"""A recording stand-in for the Kubernetes API server, the authorizer's view of a request, and an RBAC evaluator.

RecordingApiServer answers every request on 127.0.0.1 with a plausible object (a one-item list, the object, or
one watch event) and records method, path and query. request_info() turns a recorded request into what the API
server authorizes (verb, group, resource, namespace, name), as Kubernetes' RequestInfoFactory does.
Authorizer evaluates such requests against Role/ClusterRole/RoleBinding/ClusterRoleBinding manifests for one
service account, with Kubernetes' RBAC rule semantics, and remembers which rules allowed something."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

TRUE = {"true", "True", "1"}


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: tuple[tuple[str, str], ...]

    def param(self, key: str) -> str | None:
        return next((value for name, value in self.query if name == key), None)


@dataclass(frozen=True)
class RequestInfo:
    verb: str
    group: str
    resource: str  # "pods", or "pods/log" for a subresource
    namespace: str  # "" for cluster-scoped requests and for lists across all namespaces
    name: str  # "" when the request names no object


def request_info(request: Recorded) -> RequestInfo:
    """Kubernetes' RequestInfoFactory for resource requests: /api/v1/... (core) and /apis/<group>/<version>/...;
    list/watch with fieldSelector metadata.name=<n> carry <n> as their name (what resourceNames match)."""
    parts = [p for p in request.path.split("/") if p]
    if parts[:1] == ["api"]:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"]:
        group, rest = parts[1], parts[3:]
    else:
        raise ValueError(f"not a resource request: {request.path}")
    legacy_watch = rest[:1] == ["watch"]
    if legacy_watch:
        rest = rest[1:]
    namespace = ""
    if rest[:1] == ["namespaces"] and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    resource, name = rest[0], rest[1] if len(rest) > 1 else ""
    if len(rest) > 2:
        resource = f"{resource}/{rest[2]}"
    if resource == "namespaces" and name:
        namespace = name
    if not name:
        selector = request.param("fieldSelector") or ""
        for term in selector.split(","):
            if term.startswith("metadata.name="):
                name = term.split("=", 1)[1]
    watching = legacy_watch or (request.param("watch") in TRUE)
    collection = len(rest) == 1
    verb = {
        "GET": ("watch" if watching else "list") if collection else "get",
        "HEAD": "get",
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "deletecollection" if collection else "delete",
    }[request.method]
    return RequestInfo(verb, group, resource, namespace, name)


def _item(resource: str, name: str, namespace: str) -> dict[str, Any]:
    metadata = {"name": name, "resourceVersion": "2", **({"namespace": namespace} if namespace else {})}
    item: dict[str, Any] = {"metadata": metadata}
    if resource == "pods":
        item["spec"] = {"nodeName": RecordingApiServer.NODE, "containers": [{"name": "c"}]}
        item["status"] = {"podIP": RecordingApiServer.POD_IP}
    elif resource == "nodes":
        item["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    elif resource == "configmaps":
        item["data"] = {}
    return item


class RecordingApiServer:
    """Serves until closed; `requests` holds everything asked, in order."""

    NODE = "node-a"
    POD_IP = "10.0.0.5"

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _answer(self) -> None:
                url = urlsplit(self.path)
                recorded = Recorded(
                    self.command, url.path,
                    tuple((k, v) for k, values in parse_qs(url.query).items() for v in values),
                )
                with server._lock:
                    server.requests.append(recorded)
                try:
                    info = request_info(recorded)
                except (ValueError, IndexError, KeyError):
                    self.send_response(404)
                    self.end_headers()
                    return
                resource = info.resource.split("/")[0]
                item = _item(resource, info.name or f"some-{resource[:-1]}", info.namespace)
                if info.verb == "watch":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write((json.dumps({"type": "MODIFIED", "object": item}) + "\n").encode())
                    self.wfile.flush()
                    time.sleep(0.05)  # then end the stream: the client re-watches
                    return
                body = item if info.verb in ("get", "create", "update", "patch") else {
                    "metadata": {"resourceVersion": "1"}, "items": [item],
                }
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _answer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def kubeconfig(self, path: Path) -> Path:
        path.write_text(json.dumps({
            "apiVersion": "v1", "kind": "Config", "current-context": "recording",
            "clusters": [{"name": "recording", "cluster": {"server": self.url}}],
            "users": [{"name": "recording", "user": {"token": "recording"}}],
            "contexts": [{"name": "recording", "context": {"cluster": "recording", "user": "recording"}}],
        }))
        return path

    def infos(self) -> set[RequestInfo]:
        with self._lock:
            return {request_info(r) for r in self.requests}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@dataclass
class Authorizer:
    """RBAC for subject ServiceAccount `namespace/name` over `objects` (manifests of any kinds)."""

    objects: list[dict[str, Any]]
    namespace: str
    name: str
    # (rule id, verb, group, resource) that allowed a request; rule id = (kind, namespace, name, rule index)
    used: set[tuple[tuple[str, str, str, int], str, str, str]] = field(default_factory=set)

    def _binds_subject(self, binding: dict[str, Any]) -> bool:
        return any(
            s.get("kind") == "ServiceAccount" and s.get("name") == self.name
            and s.get("namespace", binding["metadata"].get("namespace")) == self.namespace
            for s in binding.get("subjects") or []
        )

    def _role(self, kind: str, name: str, namespace: str | None) -> dict[str, Any] | None:
        return next(
            (o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name
             and (kind == "ClusterRole" or o["metadata"].get("namespace") == namespace)),
            None,
        )

    def bound_rules(self) -> list[tuple[str | None, tuple[str, str, str, int], dict[str, Any]]]:
        """(namespace the rule applies in, None = everywhere; rule id; rule) for every rule bound to the subject."""
        found = []
        for binding in self.objects:
            if binding["kind"] not in ("RoleBinding", "ClusterRoleBinding") or not self._binds_subject(binding):
                continue
            where = binding["metadata"].get("namespace") if binding["kind"] == "RoleBinding" else None
            ref = binding["roleRef"]
            role = self._role(ref["kind"], ref["name"], where)
            if role is None:
                continue
            for index, rule in enumerate(role.get("rules") or []):
                rule_id = (role["kind"], role["metadata"].get("namespace") or "", role["metadata"]["name"], index)
                found.append((where, rule_id, rule))
        return found

    @staticmethod
    def _matches(rule: dict[str, Any], info: RequestInfo) -> bool:
        def has(key: str, value: str) -> bool:
            values = rule.get(key) or []
            return "*" in values or value in values

        names = rule.get("resourceNames") or []
        return (
            has("verbs", info.verb) and has("apiGroups", info.group) and has("resources", info.resource)
            and (not names or (info.verb != "create" and info.name in names))
        )

    def allows(self, info: RequestInfo) -> bool:
        allowed = False
        for where, rule_id, rule in self.bound_rules():
            if where is not None and where != info.namespace:
                continue  # a RoleBinding grants only inside its namespace, never cluster-wide
            if self._matches(rule, info):
                self.used.add((rule_id, info.verb, info.group, info.resource))
                allowed = True
        return allowed

    def unused_grants(self) -> list[tuple[tuple[str, str, str, int], str, str, str]]:
        """Every (rule, verb, group, resource) a bound rule grants that no allowed request needed; a wildcard
        counts as unused, since no request needs everything."""
        return [
            (rule_id, verb, group, resource)
            for _, rule_id, rule in self.bound_rules()
            for verb in rule.get("verbs") or []
            for group in rule.get("apiGroups") or []
            for resource in rule.get("resources") or []
            if (rule_id, verb, group, resource) not in self.used
        ]
