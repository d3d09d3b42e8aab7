"""The real engine for tests/e2e: the binaries tools/real-engine/build.sh builds, a loopback-only cluster
(etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok) and a Pulumi CLI on a file backend.

Everything binds to 127.0.0.1 on free ports, lives in temp directories, and is stopped by PID.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.e2e import kwok_stages
from tests.outside import MOTOR_CHECKOUT

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "tools" / "real-engine" / "build.sh"
BUILD_COMMAND = "bash tools/real-engine/build.sh"

# The plugin version the Python SDK asks the engine for (pulumi-kubernetes in requirements.txt); the binary is
# installed under this name (see tools/real-engine/README.md for the version it really is).
SDK_KUBERNETES_VERSION = next(
    line.split("==", 1)[1].strip()
    for line in (REPO / "requirements.txt").read_text().splitlines()
    if line.startswith("pulumi-kubernetes==")
)

MOTOR_DEPLOYER = MOTOR_CHECKOUT / "examples" / "deployer"
"""deploy.py's folder in Motor's checkout (tests/outside.py: MOTOR_CHECKOUT)."""

# The provider's forced server-side apply: takes back fields another field manager owns (an out-of-band edit, or a
# killed run's own apply), which the README's drift and recovery commands need.
FORCE = {"PULUMI_K8S_ENABLE_PATCH_FORCE": "true"}
PULUMI_BINARIES = ("pulumi", "pulumi-language-python", "pulumi-language-python-exec", "pulumi-resource-kubernetes")
YAML_BINARIES = ("pulumi-language-yaml",)
"""Added to PULUMI_BINARIES for `runtime: yaml` projects (PulumiWorkspace.bundle_yaml)."""
# The CLI and the language hosts beside it, as upstream ships them (PulumiWorkspace.bundle_yaml).
BUNDLED = ("pulumi", "pulumi-language-python", "pulumi-language-python-exec", "pulumi-language-yaml")
CLUSTER_BINARIES = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")


def bin_dirs() -> list[Path]:
    out = subprocess.run(["bash", str(BUILD_SCRIPT), "--print-bin-dirs"], capture_output=True, text=True, check=True)
    return [Path(line) for line in out.stdout.splitlines() if line.strip()]


def find_binaries(names: tuple[str, ...]) -> tuple[dict[str, Path], list[str]]:
    found: dict[str, Path] = {}
    for directory in bin_dirs():
        for name in names:
            if (directory / name).is_file() and name not in found:
                found[name] = directory / name
    return found, [name for name in names if name not in found]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 15) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


# ---------------------------------------------------------------------------------------------------------
# The cluster


@dataclass
class Cluster:
    bins: dict[str, Path]
    root: Path
    processes: list[subprocess.Popen] = field(default_factory=list)
    token: str = "e2e-admin-token"
    apiserver_port: int = 0
    kubeconfig: Path = Path()

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        etcd_port, peer_port = free_port(), free_port()
        self.apiserver_port = free_port()
        certs = self.root / "certs"
        certs.mkdir()
        subprocess.run(
            ["openssl", "genrsa", "-out", str(certs / "sa.key"), "2048"], check=True, capture_output=True
        )
        subprocess.run(
            ["openssl", "rsa", "-in", str(certs / "sa.key"), "-pubout", "-out", str(certs / "sa.pub")],
            check=True,
            capture_output=True,
        )
        (self.root / "tokens.csv").write_text(f'{self.token},e2e-admin,e2e-admin,"system:masters"\n')
        self._spawn(
            "etcd",
            "--name=e2e",
            f"--data-dir={self.root / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
            f"--initial-cluster=e2e=http://127.0.0.1:{peer_port}",
            "--quota-backend-bytes=1073741824",
            "--unsafe-no-fsync",
        )
        self._spawn(
            "kube-apiserver",
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={self.apiserver_port}",
            f"--cert-dir={certs}",
            f"--token-auth-file={self.root / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={certs / 'sa.pub'}",
            f"--service-account-signing-key-file={certs / 'sa.key'}",
            "--service-cluster-ip-range=10.96.0.0/16",
            "--endpoint-reconciler-type=none",
            "--enable-priority-and-fairness=false",
            "--allow-privileged=true",
        )
        self.kubeconfig = self.root / "kubeconfig"
        self.kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "e2e",
                            "cluster": {
                                "server": f"https://127.0.0.1:{self.apiserver_port}",
                                "insecure-skip-tls-verify": True,
                            },
                        }
                    ],
                    "users": [{"name": "e2e-admin", "user": {"token": self.token}}],
                    "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "e2e-admin"}}],
                    "current-context": "e2e",
                }
            )
        )
        self._wait_ready()
        self._spawn(
            "kube-controller-manager",
            f"--kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            "--leader-elect=false",
            f"--service-account-private-key-file={certs / 'sa.key'}",
            "--controllers=*,-nodeipam,-cloud-node-lifecycle,-service-lb-controller",
        )
        scheduler_config = self.root / "scheduler.yaml"
        # Motor's engine pods name schedulerName: volcano (deploy.py's templates do); no Volcano runs here, so one
        # kube-scheduler serves both names (a second profile), and placement follows the default plugins.
        scheduler_config.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "clientConnection": {"kubeconfig": str(self.kubeconfig)},
                    "leaderElection": {"leaderElect": False},
                    "profiles": [{"schedulerName": "default-scheduler"}, {"schedulerName": "volcano"}],
                }
            )
        )
        self._spawn(
            "kube-scheduler",
            f"--config={scheduler_config}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
        )
        # kwok's fast stages, engines of the rollout namespaces readied late (tests/e2e/kwok_stages.py).
        stages = kwok_stages.stages(self.bins["kwok"].parent.parent / "stages" / "fast.yaml", self.root / "stages.yaml")
        self._spawn(
            "kwok",
            f"--kubeconfig={self.kubeconfig}",
            f"--config={stages}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-ip=127.0.0.1",
            "--node-lease-duration-seconds=40",
            "--server-address=127.0.0.1:" + str(free_port()),
            "--cidr=10.244.0.1/16",
        )

    def _spawn(self, name: str, *args: str) -> None:
        log = open(self.root / f"{name}.log", "ab")  # noqa: SIM115 - closed with the process
        process = subprocess.Popen(
            [str(self.bins[name]), *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        self.processes.append(process)
        time.sleep(0.3)
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited at once: {self.log_tail(name)}")

    def log_tail(self, name: str, lines: int = 30) -> str:
        path = self.root / f"{name}.log"
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) if path.exists() else ""

    def _wait_ready(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.request("GET", "/readyz") == "ok":
                    return
            except (urllib.error.URLError, OSError, ValueError):
                pass
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"{process.args[0]} exited: {self.log_tail(Path(process.args[0]).name)}")
            time.sleep(0.5)
        raise RuntimeError(f"kube-apiserver not ready in {timeout}s: {self.log_tail('kube-apiserver')}")

    def stop(self) -> None:
        for process in reversed(self.processes):
            stop_process(process)

    def restart_apiserver(self, down_seconds: float = 3) -> None:
        """Stop kube-apiserver (SIGTERM, as a control-plane upgrade does), keep it down, start it with the same
        flags and wait until it is ready: etcd keeps every object."""
        process = next(p for p in self.processes if Path(p.args[0]).name == "kube-apiserver")
        stop_process(process)
        self.processes.remove(process)
        time.sleep(down_seconds)
        self._spawn("kube-apiserver", *process.args[1:])
        self._wait_ready()

    # --- a tiny REST client -------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> Any:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        # UTF-8 as written: the API server reads an apply body as YAML, whose parser refuses JSON's surrogate-pair escapes
        data = json.dumps(body, ensure_ascii=False).encode() if body is not None else None
        req = urllib.request.Request(
            f"https://127.0.0.1:{self.apiserver_port}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": content_type},
        )
        with urllib.request.urlopen(req, context=context, timeout=30) as response:
            text = response.read().decode()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def get(self, path: str) -> Any:
        try:
            return self.request("GET", path)
        except urllib.error.HTTPError as error:
            if error.code == 404:
                return None
            raise

    def add_nodes(self, labels: dict[str, str], count: int, extended: dict[str, str]) -> list[str]:
        """Fake nodes kwok keeps Ready, carrying `labels` and plenty of CPU, memory and `extended` resources."""
        names = []
        for _ in range(count):
            name = f"kwok-node-{len(self.get('/api/v1/nodes')['items'])}"
            capacity = {"cpu": "512", "memory": "4Ti", "pods": "110", "ephemeral-storage": "10Ti", **extended}
            self.request(
                "POST",
                "/api/v1/nodes",
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": name,
                        "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                        "labels": {
                            **labels,
                            "kubernetes.io/hostname": name,
                            "kubernetes.io/os": "linux",
                            "kubernetes.io/arch": "arm64",
                            "type": "kwok",
                        },
                    },
                    "spec": {},
                    "status": {"capacity": capacity, "allocatable": capacity},
                },
            )
            names.append(name)
        return names


# ---------------------------------------------------------------------------------------------------------
# The Pulumi CLI on a file backend, over a temp copy of the project


# build/ holds the live tests' backend installs (~700 MiB), which the program never reads.
COPY_IGNORE = shutil.ignore_patterns(
    ".git", "venv", "build", "out", "tests", "bench", "__pycache__", "*.pyc", ".pytest_cache"
)


@dataclass
class PulumiResult:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def check(self) -> PulumiResult:
        if self.returncode != 0:
            raise AssertionError(
                f"pulumi {' '.join(self.args)} exited {self.returncode} after {self.seconds:.1f}s\n"
                f"--- stdout\n{self.stdout[-6000:]}\n--- stderr\n{self.stderr[-6000:]}"
            )
        return self


@dataclass
class PulumiWorkspace:
    """A copy of the project (Pulumi.yaml, program, policies, stacks) with its own PULUMI_HOME and backend."""

    bins: dict[str, Path]
    root: Path
    kubeconfig: Path | None
    project: Path = Path()
    home: Path = Path()
    backend: Path = Path()

    def setup(self) -> None:
        self.project = self.root / "project"
        self.home = self.root / "pulumi-home"
        self.backend = self.root / "backend"
        shutil.copytree(REPO, self.project, ignore=COPY_IGNORE)
        (self.project / "venv").symlink_to(REPO / "venv")
        self.home.mkdir()
        self.backend.mkdir()
        self.run(
            "plugin",
            "install",
            "resource",
            "kubernetes",
            f"v{SDK_KUBERNETES_VERSION}",
            "--file",
            str(self.bins["pulumi-resource-kubernetes"]),
        ).check()

    def bundle_yaml(self) -> None:
        """Lets this workspace's CLI run `runtime: yaml` projects with the same offline environment (ambient plugins
        ignored). Needs bins found for PULUMI_BINARIES + YAML_BINARIES; call it before running the CLI.

        With PULUMI_IGNORE_AMBIENT_PLUGINS the CLI finds a bundled language host only beside its own executable
        (symlinks resolved), and pulumi-language-yaml finds pulumi-language-python, which runs a Python component
        package, only beside itself. build.sh keeps each in its own cache directory, so the four files are hard
        linked (copied across file systems) into one directory here, the layout of upstream's release, and the
        CLI runs from there. PATH instead of ambient-ignore also works, but warns on every run.
        """
        bundle = self.root / "bin"
        bundle.mkdir(parents=True, exist_ok=True)
        for name in BUNDLED:
            target = bundle / name
            target.unlink(missing_ok=True)
            try:
                os.link(self.bins[name], target)
            except OSError:
                shutil.copy2(self.bins[name], target)
            self.bins = {**self.bins, name: target}

    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("PULUMI_", "KUBE")) and key not in ("VIRTUAL_ENV", "PYTHONPATH")
        }
        env.update(
            # The virtualenv activated, as the README says: the policy pack runs in the Python first on PATH.
            PATH=f"{self.bins['pulumi'].parent}:{Path(sys.prefix) / 'bin'}:{env.get('PATH', '/usr/bin:/bin')}",
            PULUMI_HOME=str(self.home),
            PULUMI_BACKEND_URL=f"file://{self.backend}",
            PULUMI_CONFIG_PASSPHRASE="e2e-passphrase",
            PULUMI_SKIP_UPDATE_CHECK="1",
            PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION="1",
            PULUMI_IGNORE_AMBIENT_PLUGINS="1",
            PULUMI_SKIP_CONFIRMATIONS="1",
            PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK="1",
            NO_COLOR="1",
            KUBECONFIG=str(self.kubeconfig) if self.kubeconfig else str(self.root / "no-kubeconfig"),
        )
        return env

    def run(self, *args: str, timeout: float = 900, cwd: Path | None = None,
            extra_env: dict[str, str] | None = None) -> PulumiResult:
        start = time.monotonic()
        process = subprocess.run(
            [str(self.bins["pulumi"]), *args, "--non-interactive"] if args[0] not in ("plugin",) else
            [str(self.bins["pulumi"]), *args],
            cwd=cwd or self.project,
            env={**self.env(), **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return PulumiResult(list(args), process.returncode, process.stdout, process.stderr, time.monotonic() - start)

    def start(self, *args: str) -> subprocess.Popen:
        """The CLI running in the background, in its own process group (with its plugins), output to files."""
        logs = self.root / "background"
        logs.mkdir(exist_ok=True)
        name = "-".join(args)[:80].replace("/", "_")
        return subprocess.Popen(
            [str(self.bins["pulumi"]), *args, "--non-interactive"], cwd=self.project, env=self.env(),
            stdout=open(logs / f"{name}.out", "wb"), stderr=subprocess.STDOUT,  # noqa: SIM115 - closed with it
            start_new_session=True,
        )

    def stack_init(self, stack: str) -> None:
        """Creates the stack in the backend (its config is already in stacks/Pulumi.<stack>.yaml) and points the
        program at Motor's checkout."""
        self.run("stack", "init", stack).check()
        self.set_motor_checkout(stack)

    def set_motor_checkout(self, stack: str) -> None:
        """Without a Motor checkout a preview runs and warns; `pulumi up` refuses (the `workspace` fixture skips)."""
        if MOTOR_DEPLOYER.is_dir():
            self.run("config", "set", "motor_deployer_dir", str(MOTOR_DEPLOYER), "-s", stack).check()

    def config_json(self, project: Path, stack: str, text: str) -> tuple[dict[str, Any] | None, str]:
        """`pulumi config --json` of a stack of `project` whose stack file is `text`: {key: value handed to the
        program}, or None and the CLI's error."""
        (project / f"Pulumi.{stack}.yaml").unlink(missing_ok=True)  # `stack init` reads an existing stack file
        init = self.run("stack", "init", stack, cwd=project)
        assert init.returncode == 0 or "already exists" in init.output, init.output
        (project / f"Pulumi.{stack}.yaml").write_text(text, encoding="utf-8")
        result = self.run("config", "--json", "-s", stack, cwd=project)
        if result.returncode != 0:
            return None, result.output
        return {key: entry.get("value") for key, entry in json.loads(result.stdout).items()}, ""

    def state(self, stack: str) -> dict[str, Any]:
        path = self.backend / ".pulumi" / "stacks" / "motor-kvpool" / f"{stack}.json"
        return json.loads(path.read_text())
