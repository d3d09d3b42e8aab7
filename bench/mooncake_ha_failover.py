"""Does Mooncake HA (--enable_ha, --enable_oplog) keep a pool of realistic size across a leader failover?

The mooncake-ha stack rendered with store_mode standalone and protocol tcp, run as tests/live runs it
(tests/live/mooncake_plans.py ha_plan: the rendered etcd members, two masters with the rendered flags, the store
process as Motor's node manager starts it, in a private network namespace), with one change: the store process's
segment is --segment (the live test's 256MB would evict a pool of this size at the stack's 0.6 watermark). One
engine client (bench/mooncake_writer.py `keys`) puts --keys distinct objects of --size bytes over --seconds; the
leader is SIGKILLed after the last put, then (unless --one-failover) the killed master is started again as a
standby and the new leader is SIGKILLed in turn. Scenario: bench/mooncake_ha_scenario.py.

    venv/bin/python -m bench.mooncake_ha_failover [--keys 50000 --seconds 60 --size 4096]
        [--write bench/results/mooncake-ha-failover.md] [--json FILE]
    (bench/results/mooncake-ha-failover-during-writes.md: --kill-during-writes 30 --write that file)

With --kill-during-writes the first leader is killed while the writer puts; the writer reports which batches did
not return 0 and the reader which keys it did not find, so a put that returned success and was lost is counted.

Needs tests/live/install_backends.sh (the Mooncake venv and etcd).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from bench.mooncake_capacity import WRITER, machine, publish, run_capacity_scenario
from tests.live.mooncake_plans import ha_plan
from tests.live.plans import python
from tests.live.rendered import render_variant

STANDBY_WARMUP_S = 30
RCS = {"0": "OK", "-200": "NO_AVAILABLE_HANDLE", "-900": "RPC_FAIL"}  # mooncake-store's ErrorCode
ROOT = Path(__file__).resolve().parent.parent
SCENARIO = ROOT / "bench" / "mooncake_ha_scenario.py"
OPLOG = "/oplog/mooncake_cluster"  # the etcd prefix mooncake_master 0.3.13's oplog lands under (its cluster id)
VARIANT = {"store_mode": "standalone", "protocol": "tcp"}  # tests/live/test_mooncake.py's ha_rendered


def plan_for(work: Path, args: argparse.Namespace) -> dict:
    rendered = render_variant("mooncake-ha", "mooncake-ha", VARIANT, work)
    plan = ha_plan(rendered, work / "ha")
    config = Path(plan["store"]["argv"][plan["store"]["argv"].index("--config") + 1])
    config.write_text(json.dumps({**json.loads(config.read_text()), "global_segment_size": args.segment}, indent=2))
    return {
        **plan,
        "engine": {**plan["engine"], "argv": [python("mooncake"), str(WRITER)]},
        "n": args.keys, "seconds": args.seconds, "size": args.size, "batch": args.batch, "prefix": "kv",
        "quiet_s": 10, "standby_warmup_s": STANDBY_WARMUP_S, "read_timeout": 600,
        "second_failover": not args.one_failover, "kill_during_writes_s": args.kill_during_writes,
        "master_flags": rendered.container("Deployment", "mindie-motor-kv-store")["args"],
    }


def mib(value) -> str:
    return "–" if value is None else f"{value / 2**20:.1f} MiB"


def rss(row: dict, master: str) -> str:
    memory = row[master]["memory_mib"]
    return "–" if not memory else f"{memory['VmRSS']:.0f} MiB"


def oplog(row: dict) -> str:
    listing = row["etcd"].get("listing")
    if not listing:
        return "–"
    groups = sorted(listing["by_prefix"].items(), key=lambda item: -item[1]["value_bytes"])
    return "; ".join(f"`{name}` {g['keys']} keys, {mib(g['value_bytes'])}" for name, g in groups[:4])


def acknowledged_missing(missing: list[list[int]], failed: list[list[int]]) -> list[list[int]]:
    """The [start, end) runs of `missing` outside every run of `failed`: keys whose put returned 0, yet not found."""
    failed_keys = {index for start, end in failed for index in range(start, end)}
    lost: list[list[int]] = []
    for start, end in missing:
        for index in range(start, end):
            if index not in failed_keys:
                if lost and lost[-1][1] == index:
                    lost[-1][1] = index + 1
                else:
                    lost.append([index, index + 1])
    return lost


def report(result: dict, args: argparse.Namespace, command: str, started: datetime.datetime) -> list[str]:
    written = result["written"]
    lines = [
        f"# Mooncake HA across leader failovers, {written['n']} keys of {args.size} B",
        "",
        f"Command: `{command}`",
        "",
        f"Measured {started:%Y-%m-%d %H:%M} on {machine()}, load average at the end "
        f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; the machine was busy (a full CI run on the same 2 cores).",
        "",
        "mooncake-transfer-engine-non-cuda 0.3.13.post1's mooncake_master, etcd "
        f"{shutil.which('etcd') and os.popen('etcd --version').readline().split()[-1]} (three members), the "
        "mooncake-ha stack's master flags: `" + " ".join(result["plan_flags"]) + "`; the store process's segment "
        f"{mib(result['store_segment_bytes'])}, put_batch of {args.batch} keys.",
        "",
        f"Written: {written['ok']} of {written['n']} puts ok (rcs: "
        + ", ".join(f"{rc} {RCS.get(rc, '?')} x {count}" for rc, count in written["rcs"].items())
        + f") in {written['put_s']} s; "
        f"keys on the leader after the last put: {result['keys_before']}.",
        "",
        "| | keys on the leader at the kill | failover (kill → serving) | keys at promotion | keys at remount "
        "| keys settled | segment remounted | reads: exist / verified of all | read time | acknowledged puts not "
        "found |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for index, f in enumerate(result["failovers"], 1):
        read = f["read"]
        lost = acknowledged_missing(read["missing"], written["failed"])
        count = sum(end - start for start, end in lost)
        lost_text = f"{count}" + (f" (keys {', '.join(f'{a}–{b - 1}' for a, b in lost[:5])})" if lost else "")
        lines.append(
            f"| {index} | {f['keys_on_leader_at_kill']} | {f['failover_s']} s | {f['keys_at_promotion']} | "
            f"{f['keys_at_remount']} | {f['keys_settled']} | {'≤ ' if 'written' in f else ''}"
            f"{f['segment_remounted_s']} s | {read['exist']} / {read['verified']} of {read['n']} | "
            f"{read['read_s']} s | {lost_text} |")
    listed = [(row["t"], row["etcd"]["listing"]["by_prefix"].get(OPLOG, {})) for row in result["series"]
              if row["etcd"].get("listing")]
    counts = [entry.get("keys", 0) for _, entry in listed]
    shrank = any(later < earlier for earlier, later in zip(counts, counts[1:], strict=False))
    first_kill, settled = result["failovers"][0], result["failovers"][-1]["keys_settled"]
    during = "keys_put_at_kill" in result
    first_when = (f"while the writer put, {first_kill['keys_on_leader_at_kill']} keys on the leader at the kill "
                  f"({result['keys_put_at_kill']} put by the writer's last progress line), the writer going on "
                  "through the failover (the segment's remount is timed once the writer has ended, so its time is "
                  "an upper bound; the series below shows when puts succeeded again)"
                  if during else "right after the last put")
    lines += [
        "",
        f"Scope: each leader was SIGKILLed when its standby's ha_oplog_standby_lag read "
        f"{', '.join(str(f['standby_lag_at_kill']) for f in result['failovers'])}; the first {first_when}"
        + (f"; the second failover's new leader is the killed master started again as a standby "
           f"{result.get('restarted_standby_up_s', 0):.1f} s + {result['standby_warmup_s']} s before the kill, as a "
           "roll's new pod" if len(result["failovers"]) > 1 else "")
        + ". Not measured here: " + ("" if during else "a kill while puts are in flight, and ")
        + "removes or evictions (nothing was removed, so nothing could be trimmed). etcd's `" + OPLOG + "` keys "
        + ("shrank at some listing" if shrank else "never shrank") + f" over the {listed[-1][0] - listed[0][0]:.0f} s "
        f"listed: {listed[0][1].get('keys', 0)} → {listed[-1][1].get('keys', 0)} keys, "
        f"{mib(listed[-1][1].get('value_bytes'))} of values for {settled} objects.",
    ]
    lines += ["", "Masters' RSS, the standby's oplog lag and etcd over the run:", "",
              "| t (s) | event | master-0 RSS | master-1 RSS | keys (leader) | standby lag | etcd db size "
              "| etcd keys |",
              "|---|---|---|---|---|---|---|---|"]
    for row in result["series"]:
        leader = next((m for m in ("master-0", "master-1") if row[m]["ha_state"] == "serving"), None)
        standby = next((m for m in ("master-0", "master-1") if row[m]["alive"] and m != leader), None)
        keys = (row[leader]["metrics"] or {}).get("master_key_count") if leader else None
        lag = (row[standby]["metrics"] or {}).get("ha_oplog_standby_lag") if standby else None
        listing = row["etcd"].get("listing")
        lines.append(f"| {row['t']} | {row['event']} | {rss(row, 'master-0')} | {rss(row, 'master-1')} | {keys} | "
                     f"{lag} | {mib(row['etcd']['etcd_mvcc_db_total_size_in_bytes'])} | "
                     f"{listing['keys'] if listing else int(row['etcd']['etcd_debugging_mvcc_keys_total'] or 0)} |")
    lines += ["", "etcd's keys by prefix (value bytes) where they were listed:", ""]
    lines += [f"- {row['t']} s, {row['event']}: {oplog(row)}" for row in result["series"] if row["etcd"].get("listing")]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keys", type=int, default=50000)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--size", type=int, default=4096, help="bytes per value")
    parser.add_argument("--batch", type=int, default=16, help="keys per put_batch")
    parser.add_argument("--segment", default="1GB", help="the store process's global_segment_size")
    parser.add_argument("--one-failover", action="store_true")
    parser.add_argument("--kill-during-writes", type=float, metavar="S",
                        help="kill the first leader while the writer puts, at its first progress line past S s")
    parser.add_argument("--write", type=Path, metavar="FILE", help="write the results (markdown) to FILE")
    parser.add_argument("--keep", action="store_true", help="keep the work folder (the processes' logs)")
    parser.add_argument("--json", type=Path, metavar="FILE", help="write the scenario's whole result to FILE")
    args = parser.parse_args()
    command = "venv/bin/python -m bench.mooncake_ha_failover " + " ".join(sys.argv[1:])
    started = datetime.datetime.now()
    work = Path(tempfile.mkdtemp(prefix="kvb-ha-"))
    try:
        plan = plan_for(work, args)
        result = run_capacity_scenario({k: v for k, v in plan.items() if k != "master_flags"}, work / "ha",
                                       timeout=args.seconds * 3 + 1500, script=SCENARIO)
    finally:
        if args.keep:
            print(f"work folder: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    result["standby_warmup_s"] = STANDBY_WARMUP_S
    result["plan_flags"] = [flag for flag in plan["master_flags"] if "etcd_endpoints" not in flag]
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    publish(report(result, args, command, started), args.write)


if __name__ == "__main__":
    main()
