"""The scenario of bench/mooncake_ha_failover.py, run in the Mooncake venv inside `unshare -n` (tests/live's _harness).

tests/live/scenarios/mooncake_ha.py's production shape (the rendered etcd members, two masters with the rendered HA
flags, the standalone store process) with a pool of many small objects: one engine client (bench/mooncake_writer.py
`keys`) writes them over about a minute, then the leader is SIGKILLed right after the last put; the standby's
promotion, the store process's remount and the key count until it settles are timed, and a new client reads every
key back (with a kill time, the leader is killed while the writer puts, at its first progress line past that
time, and the writer goes on). Then the killed master is started again (a roll's new pod: a standby that
bootstraps while the pool is full) and the new leader is SIGKILLed in turn, the same measurements again.
Throughout: the masters' RSS, their ha_* metrics, etcd's keys (by prefix, with their bytes) and its database size.
"""

from __future__ import annotations

import base64
import http.client
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "live" / "scenarios"))

from _harness import ScenarioError, http_get, metric, run, wait_until  # noqa: E402 - tests/live's scenario harness

MASTER_METRICS = ("master_key_count", "master_active_clients", "master_evicted_key_count",
                  "master_total_capacity_bytes",
                  "ha_oplog_last_sequence_id", "ha_oplog_applied_sequence_id", "ha_oplog_standby_lag",
                  "ha_oplog_pending_entries", "ha_oplog_applied_entries_total", "ha_oplog_skipped_entries_total",
                  "ha_oplog_etcd_write_failures_total", "ha_oplog_batch_commits_total")
ETCD_METRICS = ("etcd_mvcc_db_total_size_in_bytes", "etcd_mvcc_db_total_size_in_use_in_bytes",
                "etcd_debugging_mvcc_keys_total")


def health(port: int):
    answer = http_get(f"http://127.0.0.1:{port}/health")
    return json.loads(answer[1]) if answer and answer[0] == 200 else None


def master_metrics(port: int) -> dict | None:
    answer = http_get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    if not answer or answer[0] != 200:
        return None
    values = {name: metric(answer[1], name) for name in MASTER_METRICS}
    return {name: int(value) if value is not None and value == int(value) else value for name, value in values.items()}


def key_count(port: int):
    return (master_metrics(port) or {}).get("master_key_count")


def segments(port: int):
    answer = http_get(f"http://127.0.0.1:{port}/get_segments_detail")
    return json.loads(answer[1]) if answer and answer[0] == 200 else None


def memory(pid: int) -> dict | None:
    """VmRSS and VmHWM (peak RSS) of a running process, MiB."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    fields = dict(line.split(":", 1) for line in lines if ":" in line)
    return {name: round(int(fields[name].split()[0]) / 1024, 1) for name in ("VmRSS", "VmHWM")}


def etcd_post(port: int, path: str, body: dict, timeout: float = 60) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise ScenarioError(f"etcd {path}: {response.status} {data[:300]!r}")
        return json.loads(data)
    finally:
        connection.close()


def etcd_keys(port: int) -> dict:
    """Every key in etcd (the v3 JSON gateway, no etcdctl here), grouped by its first two path components: how
    many keys, their value bytes, and a few example keys."""
    everything = base64.b64encode(b"\0").decode()
    prefixes: dict[str, dict] = {}
    start, total = everything, 0
    while True:
        answer = etcd_post(port, "/v3/kv/range", {"key": start, "range_end": everything, "limit": 2000})
        kvs = answer.get("kvs", [])
        for kv in kvs:
            key = base64.b64decode(kv["key"]).decode(errors="replace")
            size = len(base64.b64decode(kv.get("value", "")))
            group = "/".join(key.split("/")[:3]) if key.startswith("/") else key.split("/")[0][:40]
            entry = prefixes.setdefault(group, {"keys": 0, "value_bytes": 0, "examples": []})
            entry["keys"] += 1
            entry["value_bytes"] += size
            if len(entry["examples"]) < 3:
                entry["examples"].append(key[:120])
            total += 1
        if not answer.get("more") or not kvs:
            break
        start = base64.b64encode(base64.b64decode(kvs[-1]["key"]) + b"\0").decode()
    return {"keys": total, "by_prefix": prefixes, "revision": int(answer["header"]["revision"])}


def etcd_metrics(port: int) -> dict:
    answer = http_get(f"http://127.0.0.1:{port}/metrics", timeout=10)
    text = answer[1] if answer and answer[0] == 200 else ""
    return {name: metric(text, name) for name in ETCD_METRICS}


class Sampler:
    """One row of the time series: both masters' metrics and memory, the store process's memory, etcd's size."""

    def __init__(self, plan, masters: dict, store, started: float) -> None:
        self.plan, self.masters, self.store, self.started = plan, masters, store, started
        self.rows: list[dict] = []

    def __call__(self, event: str, keys: bool = False) -> dict:
        row: dict = {"t": round(time.monotonic() - self.started, 2), "event": event}
        for index, port in enumerate(self.plan["master_metrics_ports"]):
            proc = self.masters.get(index)
            alive = proc is not None and proc.alive()
            row[f"master-{index}"] = {
                "alive": alive,
                "ha_state": (health(port) or {}).get("ha_state") if alive else None,
                "memory_mib": memory(proc.pid) if alive else None,
                "metrics": master_metrics(port) if alive else None,
            }
        row["store_process_memory_mib"] = memory(self.store.pid)
        etcd_port = self.plan["etcd_client_ports"][0]
        row["etcd"] = etcd_metrics(etcd_port)
        if keys:
            row["etcd"]["listing"] = etcd_keys(etcd_port)
        self.rows.append(row)
        return row


def settle(port: int, quiet_s: float, limit_s: float) -> list[tuple[float, int | None]]:
    """master_key_count every second until it has not changed for quiet_s (at most limit_s): (s, count) pairs."""
    started, series = time.monotonic(), []
    while True:
        series.append((round(time.monotonic() - started, 1), key_count(port)))
        changed = [t for (t, count), (_, before) in zip(series[1:], series, strict=False) if count != before]
        since = series[-1][0] - (changed[-1] if changed else 0)
        if since >= quiet_s or series[-1][0] >= limit_s:
            return series
        time.sleep(1)


def read_back(procs, plan, tag: str) -> dict:
    reader = procs.start(plan["engine"], ["check", str(plan["n"]), str(plan["size"]), plan["prefix"],
                                          str(plan["batch"])], pipe=True, tag=tag)
    setup = reader.read_json(60)
    return {"setup": setup, **reader.read_json(plan["read_timeout"])}


def failover(plan, procs, masters, sample, old: int, new: int, store, label: str, writer=None) -> dict:
    """SIGKILL master `old` (the leader), time master `new`'s promotion and the store's remount, count, read. With
    `writer` (still putting), the writer's remaining lines are read after the promotion: its last one is "written"."""
    ports = plan["master_metrics_ports"]
    out: dict = {"before": sample(f"{label}: before the kill", keys=writer is None)}
    out["standby_lag_at_kill"] = (out["before"][f"master-{new}"]["metrics"] or {}).get("ha_oplog_standby_lag")
    out["keys_on_leader_at_kill"] = (out["before"][f"master-{old}"]["metrics"] or {}).get("master_key_count")
    procs.stop(masters[old], signal.SIGKILL)
    killed_at = time.monotonic()
    promoted, _ = wait_until(f"master-{new} serving", lambda: (health(ports[new]) or {}).get("ha_state") == "serving"
                             and health(ports[new]), 120, interval=0.1, watch=[masters[new], store])
    out["failover_s"] = round(time.monotonic() - killed_at, 2)
    out["new_leader_health"] = promoted
    out["keys_at_promotion"] = key_count(ports[new])
    out["at_promotion"] = sample(f"{label}: promoted")
    if writer is not None:
        while "progress" in (line := writer.read_json(plan["seconds"] * 3 + 120)):
            sample(f"{label}: writing on: {line['progress']} keys put")
        out["written"] = line
    wait_until("the store process's segment on the new leader",
               lambda: (segments(ports[new]) or {}).get("total_segments") == 1, 120, interval=0.2, watch=[store])
    out["segment_remounted_s"] = round(time.monotonic() - killed_at, 2)
    out["keys_at_remount"] = key_count(ports[new])
    out["settle_series"] = settle(ports[new], plan["quiet_s"], 90)
    out["keys_settled"] = out["settle_series"][-1][1]
    out["settled_s"] = round(time.monotonic() - killed_at, 2)
    out["read"] = read_back(procs, plan, f"reader-{label}")
    out["after_read"] = sample(f"{label}: after the read", keys=True)
    return out


def main(plan, procs, result):
    started = time.monotonic()
    etcd = [procs.start(spec) for spec in plan["etcd"]]
    for port in plan["etcd_client_ports"]:
        healthy = (lambda port=port:
                   '"health":"true"' in (http_get(f"http://127.0.0.1:{port}/health") or (0, ""))[1])
        wait_until(f"etcd :{port}/health", healthy, 30, watch=etcd)
    first, second = plan["master_metrics_ports"]
    masters = {0: procs.start(plan["masters"][0])}
    wait_until("master-0 serving", lambda: (health(first) or {}).get("ha_state") == "serving", 60, watch=[masters[0]])
    masters[1] = procs.start(plan["masters"][1], tag="first")
    wait_until("master-1 standby", lambda: (health(second) or {}).get("ha_state"), 30, watch=[masters[1]])
    store = procs.start(plan["store"])
    wait_until("store process segment", lambda: (segments(first) or {}).get("total_segments") == 1, 60, watch=[store])
    result["store_segment_bytes"] = segments(first)["segments"][0]["size_bytes"]
    sample = Sampler(plan, masters, store, started)
    result["empty"] = sample("empty pool", keys=True)

    writer = procs.start(plan["engine"], ["keys", str(plan["n"]), str(plan["seconds"]), str(plan["size"]),
                                          plan["prefix"], str(plan["batch"])], pipe=True, tag="writer")
    result["writer_setup"] = writer.read_json(60)
    kill_at = plan["kill_during_writes_s"]
    while "progress" in (line := writer.read_json(plan["seconds"] * 3 + 60)):
        sample(f"writing: {line['progress']} keys put")
        if kill_at is not None and line["t"] >= kill_at:
            result["keys_put_at_kill"] = line["progress"]
            result["failovers"] = [failover(plan, procs, masters, sample, 0, 1, store, "failover 1", writer)]
            line = result["failovers"][0]["written"]
            break
    result["written"] = line
    result["keys_before"] = key_count(first if "failovers" not in result else second)
    if "failovers" not in result:
        result["failovers"] = [failover(plan, procs, masters, sample, 0, 1, store, "failover 1")]
    if plan["second_failover"]:
        masters[0] = procs.start(plan["masters"][0], tag="restarted")
        _, result["restarted_standby_up_s"] = wait_until(
            "master-0 standby again", lambda: (health(first) or {}).get("ha_state"), 60, watch=[masters[0]])
        time.sleep(plan["standby_warmup_s"])  # as a roll's new pod would run before the old leader is stopped
        result["restarted_standby"] = sample("master-0 restarted as standby")
        result["failovers"].append(failover(plan, procs, masters, sample, 1, 0, store, "failover 2"))
    result["series"] = sample.rows
    procs.stop(writer, signal.SIGKILL)


if __name__ == "__main__":
    run(main)
