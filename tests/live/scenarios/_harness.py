"""What every scenario shares (standard library only: scenarios run in a backend's venv, inside `unshare -n`).

A scenario reads its plan (JSON: process specs made by tests/live/rendered.py), starts processes, bounds every
wait, and prints exactly one JSON line on stdout: its results, plus "error" when it failed. Every process it
started is stopped by PID before that line is printed, also on failure, timeout or SIGTERM; each child also
gets SIGKILL from the kernel if the scenario itself dies (PR_SET_PDEATHSIG).
"""

from __future__ import annotations

import ctypes
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import traceback
import urllib.parse
from pathlib import Path
from typing import Any, Callable

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


class ScenarioError(Exception):
    pass


def _die_with_parent() -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Proc:
    def __init__(self, name: str, popen: subprocess.Popen, log: Path) -> None:
        self.name, self.popen, self.log = name, popen, log
        self._buffer = b""

    @property
    def pid(self) -> int:
        return self.popen.pid

    def alive(self) -> bool:
        return self.popen.poll() is None

    def read_json(self, timeout: float) -> dict[str, Any]:
        """The next stdout line of a process started with stdout=PIPE, as JSON; bounded by `timeout`."""
        deadline = time.monotonic() + timeout
        fd = self.popen.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ScenarioError(f"{self.name}: no output line within {timeout:.0f} s; log {self.log}")
            ready, _, _ = select.select([fd], [], [], left)
            if ready:
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise ScenarioError(f"{self.name} exited ({self.popen.poll()}) without a line: {self.tail()}")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)

    def tail(self, lines: int = 15, width: int = 300) -> str:
        try:
            last = self.log.read_text(errors="replace").splitlines()[-lines:]
        except OSError:
            return ""
        return "\n".join(line if len(line) <= width else line[:width] + " [...]" for line in last)


class Procs:
    """Every process a scenario starts; all of them are stopped by `stop_all`."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.logs.mkdir(parents=True, exist_ok=True)
        self.procs: list[Proc] = []

    def start(self, spec: dict[str, Any], extra_args: list[str] = (), pipe: bool = False, tag: str = "") -> Proc:
        name = spec["name"] + (f"#{tag}" if tag else "")
        log = self.logs / (name.replace("/", "_") + ".log")
        out = open(log, "ab")
        popen = subprocess.Popen(
            [*spec["argv"], *extra_args],
            env=spec["env"],
            cwd=spec["cwd"],
            stdin=subprocess.PIPE if pipe else subprocess.DEVNULL,
            stdout=subprocess.PIPE if pipe else out,
            stderr=out,
            preexec_fn=_die_with_parent,
        )
        out.close()
        proc = Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    def stop(self, proc: Proc, sig: int = signal.SIGTERM, timeout: float = 10.0) -> float:
        """Signal one process by PID and wait for it (SIGKILL after `timeout`); seconds it took to go."""
        started = time.monotonic()
        if proc.alive():
            try:
                os.kill(proc.pid, sig)
            except ProcessLookupError:
                pass
            try:
                proc.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                proc.popen.wait(5)
        for stream in (proc.popen.stdin, proc.popen.stdout):
            if stream:
                stream.close()
        return time.monotonic() - started

    def stop_all(self) -> list[str]:
        """Newest first (clients before servers); returns the names that were still running."""
        running = [proc for proc in reversed(self.procs) if proc.alive()]
        for proc in running:
            self.stop(proc, signal.SIGTERM, timeout=8)
        return [proc.name for proc in running]


def wait_until(
    what: str, check: Callable[[], Any], timeout: float, interval: float = 0.1, watch: list[Proc] = ()
) -> tuple[Any, float]:
    """Polls `check` until it returns something truthy; (that value, seconds waited). Fails at once when a
    process in `watch` has exited (a server that died is not going to become ready)."""
    started = time.monotonic()
    while True:
        value = check()
        if value:
            return value, time.monotonic() - started
        for proc in watch:
            if not proc.alive():
                raise ScenarioError(f"{proc.name} exited ({proc.popen.returncode}) while waiting for {what}")
        if time.monotonic() - started > timeout:
            raise ScenarioError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(interval)


def http_get(url: str, timeout: float = 2.0) -> tuple[int, str] | None:
    """(status, body), or None when nothing answers yet. http.client, not urllib: urllib sends
    `Connection: close`, and MemCache 1.3.0's HTTP server then never sends the body (see kube_probe)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    try:
        connection.request("GET", parts.path + (f"?{parts.query}" if parts.query else ""))
        response = connection.getresponse()
        return response.status, response.read().decode(errors="replace")
    except (OSError, http.client.HTTPException):
        return None
    finally:
        connection.close()


def kube_probe(probe: dict[str, Any]) -> dict[str, Any]:
    """One run of a rendered probe as the kubelet runs it (plans.probe_plan made `probe`).

    httpGet: the kubelet's Go client disables keep-alive, so the request carries `Connection: close`; the probe
    passes when the status is 200-399 and the body (up to 10 KiB) arrives within timeoutSeconds.
    tcpSocket: a connection within timeoutSeconds. exec: the command exits 0 within timeoutSeconds.
    """
    timeout, started = probe["timeout_s"], time.monotonic()
    try:
        if probe["kind"] == "exec":
            done = subprocess.run(probe["argv"], env=probe["env"], timeout=timeout, capture_output=True)
            return {"ok": done.returncode == 0, "detail": f"exit {done.returncode}"}
        with socket.create_connection(("127.0.0.1", probe["port"]), timeout=timeout) as sock:
            if probe["kind"] == "tcp":
                return {"ok": True, "detail": "connected"}
            sock.sendall((f"GET {probe['path']} HTTP/1.1\r\nHost: 127.0.0.1:{probe['port']}\r\n"
                          "User-Agent: kube-probe/1.31\r\nAccept: */*\r\nConnection: close\r\n\r\n").encode())
            data, complete = b"", False
            while not complete:
                sock.settimeout(max(0.01, timeout - (time.monotonic() - started)))
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    head = data.partition(b"\r\n\r\n")[0].split(b"\r\n")[0].decode(errors="replace")
                    return {"ok": False, "detail": f"timed out after {timeout} s; received {len(data)} bytes "
                                                   f"({head or 'nothing'}) and no complete body"}
                data += chunk
                head, separator, body = data.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
                complete = bool(separator) and (len(body) >= int(length.group(1)) if length else not chunk)
                if not chunk:
                    break
            status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
            return {"ok": 200 <= status < 400 and complete, "detail": f"status {status}, body complete: {complete}"}
    except (OSError, subprocess.TimeoutExpired) as error:
        return {"ok": False, "detail": f"{type(error).__name__} after {time.monotonic() - started:.1f} s: {error}"}


def probes(plan_probes: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {name: kube_probe(probe) for name, probe in plan_probes.items()}


def metric(text: str, name: str, labels: str | None = None) -> float | None:
    """One sample of a Prometheus text exposition (`name` or `name{labels}`), or None."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        bare, _, rest = key.partition("{")
        if bare == name and (labels is None or rest.rstrip("}") == labels):
            return float(value)
    return None


def run(main: Callable[[dict[str, Any], Procs, dict[str, Any]], None]) -> None:
    """Entry point of a scenario: `python scenario.py PLAN.json`."""
    plan = json.loads(Path(sys.argv[1]).read_text())
    result: dict[str, Any] = {}
    procs = Procs(Path(plan["work"]) / "logs")

    def on_signal(signum: int, _frame: Any) -> None:
        raise ScenarioError(f"scenario interrupted by signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGALRM, on_signal)
    signal.alarm(int(plan["timeout"]))  # the scenario's own deadline, below the test's
    started = time.monotonic()
    try:
        main(plan, procs, result)
    except BaseException as error:  # noqa: BLE001 - reported, then the processes are stopped
        result["error"] = f"{type(error).__name__}: {error}"
        result["traceback"] = traceback.format_exc(limit=6)
        result["logs"] = {proc.name: proc.tail() for proc in procs.procs}
    finally:
        signal.alarm(0)
        result["stopped_at_end"] = procs.stop_all()
        result["pids"] = [proc.pid for proc in procs.procs]
        result["seconds"] = round(time.monotonic() - started, 2)
        print(json.dumps(result), flush=True)
