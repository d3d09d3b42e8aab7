"""What our KVStore component renders, made runnable on this machine with a short, explicit list of changes.

`render(stack)` runs the offline preview in-process and reads back the manifests and outputs.json. `Loopback`
turns a rendered container into a process spec (argv, env, files) for tests/live/scenarios. It first applies
Kubernetes' own semantics (the downward API, `$(VAR)` expansion, ConfigMap volumes), then makes exactly these
changes, and nothing else:

  1. the pod's and the node's IP (status.podIP / status.hostIP) is 127.0.0.1;
  2. a rendered DNS name (Service FQDN, etcd member name) is 127.0.0.1, and every port is replaced by the free
     loopback port chosen for the pod that owns it: `name:port`, `127.0.0.1:port`, `0.0.0.0:port`,
     `${POD_IP}:port` and `--<something>port=N` (port 0 means "kernel-chosen" and is kept); a port that has
     no loopback port is an error, never left as it was;
  3. an absolute path under /etc, /tmp, /var or /usr/local/Ascend/pyMotor (a container's own filesystem) lives under `<work>/<pod>/`;
  4. binaries are the backend wheel's, found first on PATH (`<venv>/bin`); /bin/sh and etcd are Debian's.
Changes 2 and 3 apply to command, args, env values and the files of mounted ConfigMaps alike. A process gets
the container's env plus PATH (change 4) and HOME (`<work>/<pod>/home`), as an image would give them.

Two more changes concern file contents, and each test that uses one says so: `as_tcp` (protocol ascend -> tcp,
there is no NPU here) and `with_sizes` (a smaller Mooncake segment or buffer: the capacity measurement, the standalone store).
"""

from __future__ import annotations

import json
import re
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.kubelet_env import kubelet_expand

REPO = Path(__file__).resolve().parents[2]
BACKENDS = REPO / "build" / "backends"
LOOPBACK = "127.0.0.1"
BASE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# ---------------------------------------------------------------------------------------------------------------
# Rendering


@dataclass(frozen=True)
class Rendered:
    stack: str
    objects: list[dict[str, Any]]
    outputs: dict[str, Any]

    @property
    def namespace(self) -> str:
        return self.outputs["namespace"]

    @property
    def kv_store(self) -> dict[str, Any]:
        return self.outputs["kv_store"]

    def object(self, kind: str, name: str) -> dict[str, Any]:
        found = [o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name]
        if len(found) != 1:
            have = sorted(f"{o['kind']}/{o['metadata']['name']}" for o in self.objects)
            raise LookupError(f"{self.stack}: expected one {kind}/{name}, have {have}")
        return found[0]

    def pod_spec(self, kind: str, name: str) -> dict[str, Any]:
        return self.object(kind, name)["spec"]["template"]["spec"]

    def container(self, kind: str, name: str, container: str | None = None) -> dict[str, Any]:
        containers = self.pod_spec(kind, name)["containers"]
        if container is None:
            assert len(containers) == 1, f"{kind}/{name} has {len(containers)} containers; name one"
            return containers[0]
        return next(c for c in containers if c["name"] == container)

    def replicas(self, kind: str, name: str) -> int:
        return int(self.object(kind, name)["spec"].get("replicas", 1))


def render(stack: str, out_dir: Path, project_dir: Path = REPO) -> Rendered:
    """`python -m kvpool preview --stack <stack>`, in-process; reads back what it wrote."""
    from kvpool.cli.preview import (
        preview,  # the project's venv (pytest's); scenarios never import this module
    )

    result = preview(Path(project_dir), stack, Path(out_dir))
    objects = [yaml.safe_load(path.read_text()) for path in sorted(result.manifest_files)]
    return Rendered(stack, objects, json.loads(result.outputs_file.read_text()))


def render_variant(stack: str, variant: str, store_changes: Mapping[str, Any], work_dir: Path) -> Rendered:
    """Render `stack` with some kv_cache_store_config keys changed, through the same program and component.

    The variant lives in a throw-away project folder: Pulumi.yaml is copied, every other top-level entry of the
    repository is a symlink, and stacks/ holds the variant's stack file (stacks/ of the repository is untouched).
    """
    project = Path(work_dir) / f"project-{variant}"
    (project / "stacks").mkdir(parents=True)
    for entry in REPO.iterdir():
        if entry.name in {"Pulumi.yaml", "stacks", ".git", "venv", "build", "out"}:
            continue
        (project / entry.name).symlink_to(entry)
    (project / "Pulumi.yaml").write_text((REPO / "Pulumi.yaml").read_text())
    document = yaml.safe_load((REPO / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    store = document["config"]["motor-kvpool:kv_cache_store_config"]
    unknown = set(store_changes) - set(store)
    assert not unknown, f"{stack} sets no {sorted(unknown)}: a variant only changes keys the stack sets"
    store.update(store_changes)
    (project / "stacks" / f"Pulumi.{variant}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    return render(variant, Path(work_dir) / "out", project)


# ---------------------------------------------------------------------------------------------------------------
# Kubernetes semantics (not changes: what the kubelet itself would do)

# Kubernetes' `$(VAR)` expansion in command, args and env values: `$$` is `$`, unknown names stay.
k8s_expand = kubelet_expand


def container_env(container: Mapping[str, Any], pod_name: str, namespace: str) -> dict[str, str]:
    """The container's environment as the kubelet builds it; the downward API gives change 1 (127.0.0.1)."""
    fields = {
        "status.podIP": LOOPBACK,
        "status.hostIP": LOOPBACK,
        "metadata.name": pod_name,
        "metadata.namespace": namespace,
    }
    env: dict[str, str] = {}
    for item in container.get("env", []):
        if "value" in item:
            env[item["name"]] = k8s_expand(item["value"], env)
        else:
            path = item["valueFrom"]["fieldRef"]["fieldPath"]
            if path not in fields:
                raise ValueError(f"env {item['name']}: downward API field {path!r} has no stand-in here")
            env[item["name"]] = fields[path]
    return env


# ---------------------------------------------------------------------------------------------------------------
# The changes


def free_ports(count: int) -> list[int]:
    """Distinct ports free on 127.0.0.1 here, hence in a fresh network namespace too."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket()
            s.bind((LOOPBACK, 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


_PORT_FLAG = re.compile(r"(--[A-Za-z0-9_.-]*port=)(\d+)\b")
_HOST_PORT = re.compile(r"(?<![A-Za-z0-9_.-])(\$\{POD_IP\}|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*):(\d+)\b")
# /usr/local/Ascend/pyMotor: Motor's CONFIG_PATH, where its scripts copy config files inside the container.
_POD_PATH = re.compile(r"(?<![A-Za-z0-9_.\-/])/(?:etc|tmp|var|usr/local/Ascend/pyMotor)/[A-Za-z0-9_.\-/]*")
_OWN_ADDRESSES = {LOOPBACK, "0.0.0.0", "${POD_IP}"}


@dataclass
class Pod:
    """One pod of the rendered deployment, here: its own loopback ports and its own folder as filesystem."""

    name: str
    root: Path
    ports: dict[int, int]  # rendered port -> loopback port

    def port(self, rendered: int) -> int:
        if rendered not in self.ports:
            raise KeyError(f"pod {self.name}: rendered port {rendered} has no loopback port (have {self.ports})")
        return self.ports[rendered]


@dataclass
class Loopback:
    work: Path
    namespace: str
    pods: dict[str, Pod] = field(default_factory=dict)
    dns: dict[str, str] = field(default_factory=dict)  # rendered DNS name -> the pod answering it

    def add_pod(
        self, name: str, rendered_ports: Iterable[int], dns_names: Iterable[str] = (), network_of: str | None = None
    ) -> Pod:
        """`network_of`: the pod reaches another pod's ports at its own node address ($(HOST_IP)), as an engine
        reaches the host-network datasystem worker of its node; they share that pod's loopback ports."""
        ports = sorted(set(rendered_ports))
        if network_of is not None:
            assert not ports, "a pod on another pod's network has no ports of its own"
            pod = Pod(name, self.work / name, self.pods[network_of].ports)
        else:
            pod = Pod(name, self.work / name, dict(zip(ports, free_ports(len(ports)), strict=True)))
        for folder in ("etc", "tmp", "var", "home"):  # what every container image has (home: $HOME)
            (pod.root / folder).mkdir(parents=True, exist_ok=True)
        self.pods[name] = pod
        for dns in dns_names:
            self.dns[dns] = name
        return pod

    def rewrite(self, text: str, pod: str) -> str:
        """Changes 2 and 3 on one rendered string, seen from inside `pod`."""
        own = self.pods[pod]

        def host_port(m: re.Match[str]) -> str:
            host, port = m.group(1), int(m.group(2))
            if host in self.dns:
                return f"{LOOPBACK}:{self.pods[self.dns[host]].port(port)}"
            if host in _OWN_ADDRESSES:
                return f"{host}:{own.port(port)}"
            return m.group(0)  # not an address (or one of no pod here): left exactly as rendered

        def port_flag(m: re.Match[str]) -> str:
            port = int(m.group(2))
            return m.group(0) if port == 0 else f"{m.group(1)}{own.port(port)}"

        text = _HOST_PORT.sub(host_port, text)
        text = _PORT_FLAG.sub(port_flag, text)
        for name in sorted(self.dns, key=len, reverse=True):  # a bare name (KVS_MASTER_SERVICE)
            text = re.sub(rf"(?<![A-Za-z0-9_.-]){re.escape(name)}(?![A-Za-z0-9_-])", LOOPBACK, text)
        return _POD_PATH.sub(lambda m: str(own.root) + m.group(0), text)

    def local_path(self, pod: str, rendered_path: str) -> Path:
        return Path(self.rewrite(rendered_path, pod))

    def write_file(self, pod: str, rendered_path: str, content: str) -> Path:
        """A file the pod sees at `rendered_path` (a ConfigMap key, a client file)."""
        path = self.local_path(pod, rendered_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        return path

    def process(
        self,
        container: Mapping[str, Any],
        pod: str,
        venv: str | None,
        configmaps: Mapping[str, Mapping[str, str]] = {},
        volumes: Iterable[Mapping[str, Any]] = (),
        command: list[str] | None = None,
    ) -> dict[str, Any]:
        """A container as a process spec for tests/live/scenarios (plain JSON). `command` replaces the rendered
        command and args: only for the engine, whose stand-in is a test script."""
        env = container_env(container, pod, self.namespace)
        rendered = [*container.get("command", []), *container.get("args", [])]
        argv = command if command is not None else [self.rewrite(k8s_expand(part, env), pod) for part in rendered]
        self._mount(pod, container.get("volumeMounts", []), volumes, configmaps)
        root = self.pods[pod].root
        path = f"{BACKENDS / venv / 'bin'}:{BASE_PATH}" if venv else BASE_PATH  # change 4
        return {
            "name": f"{pod}/{container['name']}",
            "argv": argv,
            "env": {
                "PATH": path,
                "HOME": str(root / "home"),
                **{key: self.rewrite(value, pod) for key, value in env.items()},
            },
            "cwd": str(root),
        }

    def _mount(self, pod, mounts, volumes, configmaps) -> None:
        """ConfigMap keys become files (one key with subPath); a hostPath folder is shared by every pod that
        mounts it (a symlink into <work>/host); mounts outside /etc, /tmp, /var (/dev/shm, /mnt/...) are
        the machine's own and are left alone."""
        by_name = {volume["name"]: volume for volume in volumes}
        for mount in mounts:
            source, target = by_name[mount["name"]], mount["mountPath"]
            if self.local_path(pod, target) == Path(target):
                continue
            if "configMap" in source:
                data = configmaps[source["configMap"]["name"]]
                keys = [mount["subPath"]] if "subPath" in mount else list(data)
                for key in keys:
                    path = target if "subPath" in mount else f"{target}/{key}"
                    self.write_file(pod, path, self.rewrite(data[key], pod))
            elif "hostPath" in source and "subPath" not in mount:
                shared = self.work / "host" / source["hostPath"]["path"].lstrip("/")
                shared.mkdir(parents=True, exist_ok=True)
                link = self.local_path(pod, target)
                link.parent.mkdir(parents=True, exist_ok=True)
                if not link.is_symlink():
                    link.symlink_to(shared)
            else:
                self.local_path(pod, target).mkdir(parents=True, exist_ok=True)


# ---------------------------------------------------------------------------------------------------------------
# File-content changes (named where used)


def as_tcp(mooncake_json: str) -> str:
    """protocol ascend -> tcp in a Mooncake client file: the ascend transport needs an NPU."""
    data = json.loads(mooncake_json)
    assert data["protocol"] == "ascend", data
    data["protocol"] = "tcp"
    return json.dumps(data, indent=2) + "\n"


def with_sizes(mooncake_json: str, **sizes: str) -> str:
    """global_segment_size / local_buffer_size replaced (only keys the file already has)."""
    data = json.loads(mooncake_json)
    for key, value in sizes.items():
        assert key in data, f"{key} not in {data}"
        data[key] = value
    return json.dumps(data, indent=2) + "\n"
