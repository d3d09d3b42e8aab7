"""A fake Kubernetes API server for the commands that read a cluster through `--kubeconfig FILE` (kvpool fleet): a
small HTTP server on 127.0.0.1 that answers GETs from a table of paths as the API server does (404 Status for a
path it does not hold, `refused`'s status for its paths, or one status for every request when `status` is set) and records what it was asked."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml


class APIServer(BaseHTTPRequestHandler):
    objects: dict[str, Any] = {}  # path -> the JSON it answers
    status: int | None = None  # set: every request answers this status's Failure
    refused: dict[str, int] = {}  # path -> the Failure status it answers
    paths: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 (the standard library's name)
        type(self).paths.append(self.path)
        status = self.refused.get(self.path) or self.status or (200 if self.path in self.objects else 404)
        reason = {403: "Forbidden", 404: "NotFound"}.get(status, "Failure")
        body = json.dumps(self.objects[self.path] if status == 200 else {
            "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": reason, "code": status,
            "message": f'{self.path} is {reason.lower()}: User "viewer" cannot get it' if status == 403
            else f"{self.path} not found"}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def serving() -> Iterator[str]:
    """The server's URL, with an empty table, while the block runs (each test module's `api_server` fixture)."""
    APIServer.objects, APIServer.status, APIServer.refused, APIServer.paths = {}, None, {}, []
    server = ThreadingHTTPServer(("127.0.0.1", 0), APIServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def write_kubeconfig(path: Path, server: str) -> Path:
    """A kubeconfig whose one context, `lab`, is current and points at `server`."""
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server}}],
        "users": [{"name": "viewer", "user": {"token": "t"}}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "viewer"}}],
    }))
    return path
