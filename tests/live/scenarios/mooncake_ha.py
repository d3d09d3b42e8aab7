"""Mooncake production shape (mooncake-ha stack): the rendered etcd members, two masters with the rendered HA
flags, the standalone store process of the engine pod and an engine client that contributes no memory.

1. An engine writes N x 1 MiB and is SIGKILLed; a new engine client reads every key back: the data lives in
   the store process's segment (the engine, global_segment_size 0, mounts none and is not even counted among
   the master's active clients, so there is nothing of it for the master to reap after client_ttl).
2. The leader master is SIGKILLed; the standby takes over (etcd election + oplog) with every key's metadata.
   Reads find the keys once the store process has reconnected to the new leader and remounted its segment
   (a read right at promotion is recorded too); then a new engine client that finds the leader through
   etcd:// reads every key back, later than client_ttl after step 1.
"""

from __future__ import annotations

import json
import signal
import time

from _harness import ScenarioError, http_get, metric, probes, run, wait_until


def health(port: int):
    answer = http_get(f"http://127.0.0.1:{port}/health")
    return json.loads(answer[1]) if answer and answer[0] == 200 else None


def metrics(port: int) -> str:
    answer = http_get(f"http://127.0.0.1:{port}/metrics")
    if not answer or answer[0] != 200:
        raise ScenarioError(f"no /metrics on {port}")
    return answer[1]


def segments(port: int):
    answer = http_get(f"http://127.0.0.1:{port}/get_segments_detail")
    return json.loads(answer[1]) if answer and answer[0] == 200 else None


def main(plan, procs, result):
    n, prefix = plan["n"], "surv"
    etcd = [procs.start(spec) for spec in plan["etcd"]]
    for port in plan["etcd_client_ports"]:
        wait_until(f"etcd :{port}/health",
                   lambda port=port: '"health":"true"' in (http_get(f"http://127.0.0.1:{port}/health") or (0, ""))[1], 30,
                   watch=etcd)

    first, second = plan["master_metrics_ports"]
    leader = procs.start(plan["masters"][0])
    _, result["leader_serving_s"] = wait_until(
        "master-0 serving", lambda: (health(first) or {}).get("ha_state") == "serving", 40, watch=[leader])
    follower = procs.start(plan["masters"][1])
    standby, _ = wait_until("master-1 /health", lambda: health(second), 20, watch=[follower])
    result["standby_health"] = standby
    result["probes"] = {"leader": probes(plan["probes"][0]), "standby": probes(plan["probes"][1])}

    store = procs.start(plan["store"])
    detail, result["store_mounted_s"] = wait_until(
        "store process segment", lambda: (segments(first) or {}).get("total_segments") == 1 and segments(first), 60,
        watch=[store])
    store_segment = detail["segments"][0]
    result["store_segment"] = {k: store_segment[k] for k in ("segment_name", "size_bytes", "protocol")}

    writer = procs.start(plan["engine"], ["write", str(n), prefix], pipe=True, tag="writer")
    result["writer_setup"] = writer.read_json(30)
    result["written"] = writer.read_json(60)
    text = metrics(first)
    result["after_write"] = {
        "master_key_count": metric(text, "master_key_count"),
        "store_segment_allocated_bytes": metric(
            text, "segment_allocated_bytes", f'segment="{store_segment["segment_name"]}"'),
        "total_segments": segments(first)["total_segments"],
        "master_active_clients": metric(text, "master_active_clients"),
    }

    procs.stop(writer, signal.SIGKILL)
    writer_killed_at = time.monotonic()
    reader = procs.start(plan["engine"], ["read", str(n), prefix], pipe=True, tag="reader-after-writer-kill")
    reader.read_json(30)
    result["read_after_writer_kill"] = reader.read_json(60)

    procs.stop(leader, signal.SIGKILL)
    killed_at = time.monotonic()
    promoted, _ = wait_until("master-1 serving", lambda: (health(second) or {}).get("ha_state") == "serving" and
                             health(second), 60, interval=0.2, watch=[follower, store])
    result["failover_s"] = round(time.monotonic() - killed_at, 2)
    result["new_leader_health"] = promoted
    result["probes"]["new_leader"] = probes(plan["probes"][1])
    result["keys_on_new_leader_at_promotion"] = metric(metrics(second), "master_key_count")
    early = procs.start(plan["engine"], ["read", str(n), prefix], pipe=True, tag="reader-at-promotion")
    early.read_json(30)
    result["read_at_promotion"] = early.read_json(60)  # before the store process has found the new leader
    wait_until("the store process's segment on the new leader",
               lambda: (segments(second) or {}).get("total_segments") == 1, 60, interval=0.2, watch=[store])
    result["segment_remounted_s"] = round(time.monotonic() - killed_at, 2)
    result["keys_on_new_leader"] = metric(metrics(second), "master_key_count")
    # The last read must come later than client_ttl after the writer's death (it usually does already).
    time.sleep(max(0.0, plan["client_ttl_s"] + 1 - (time.monotonic() - writer_killed_at)))
    reader = procs.start(plan["engine"], ["read", str(n), prefix], pipe=True, tag="reader-after-failover")
    result["reader_after_failover_setup"] = reader.read_json(30)
    result["read_after_failover"] = reader.read_json(60)
    result["read_after_failover_s_after_writer_kill"] = round(time.monotonic() - writer_killed_at, 2)


if __name__ == "__main__":
    run(main)
