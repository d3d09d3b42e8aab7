"""Stand-in for an engine's Mooncake store client (vllm-ascend's mooncake backend), run in the Mooncake venv.

Like the engine, it reads the JSON file at MOONCAKE_CONFIG_PATH (our rendered mooncake.json) and passes its
keys to MooncakeDistributedStore.setup(), with the pod's own IP (POD_IP) as local_hostname, as the engine
adds its own address. Then one job, given on the command line; results are JSON lines on stdout. It never
calls close() (an etcd:// client's close() takes ~30 s): it ends with os._exit, or the scenario kills it.

  basic              put/get/is_exist, then the lease: remove() after get() until it stops returning -706
  fill N MODE        N x 1 MiB puts back to back (capacity); MODE "same": one prepared value for every put,
                     "distinct": each value derived from its key just before its put (~46 us more per put)
  write N PREFIX     N x 1 MiB puts with contents derived from the key
  read N PREFIX      is_exist + get of those keys, contents verified
After `fill` and `write` it waits on stdin: the data stays until the scenario kills it.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

RESULTS = os.fdopen(os.dup(1), "w")  # the JSON lines; whatever the library prints goes to stderr
os.dup2(2, 1)

from mooncake.mooncake_config import _parse_segment_size  # noqa: E402 - the wheel's size syntax ("1GB", ints)
from mooncake.store import MooncakeDistributedStore  # noqa: E402

MIB = 1 << 20


def emit(**fields) -> None:
    RESULTS.write(json.dumps(fields) + "\n")
    RESULTS.flush()


def value(key: str, size: int = MIB) -> bytes:
    block = hashlib.sha256(key.encode()).digest()
    return (block * (size // len(block) + 1))[:size]


def setup() -> MooncakeDistributedStore:
    config = json.load(open(os.environ["MOONCAKE_CONFIG_PATH"]))
    store = MooncakeDistributedStore()
    started = time.monotonic()
    rc = store.setup(
        os.environ["POD_IP"],
        config["metadata_server"],
        _parse_segment_size(config["global_segment_size"]),
        _parse_segment_size(config["local_buffer_size"]),
        config["protocol"],
        config["device_name"],
        config["master_server_address"],
    )
    if rc != 0:
        emit(setup_rc=rc)
        os._exit(1)
    emit(setup_rc=rc, setup_s=round(time.monotonic() - started, 3))
    return store


def basic(store: MooncakeDistributedStore) -> None:
    payload = value("live-k", 100 * 1024)
    put_rc = store.put("live-k", payload)
    got = store.get("live-k")
    exist = store.is_exist("live-k")
    store.put("lease-a", b"a")
    remove_after_put_rc = store.remove("lease-a")  # put() alone grants no lease
    store.put("lease-b", b"b")
    got_b = store.get("lease-b")  # grants a lease of default_kv_lease_ttl
    leased_at = time.monotonic()
    emit(
        put_rc=put_rc,
        get_ok=bytes(got) == payload,
        exist=exist,
        remove_after_put_rc=remove_after_put_rc,
        get_b_ok=bytes(got_b) == b"b",
        keys=["live-k", "lease-b"],
    )
    first_rc = rc = store.remove("lease-b")
    attempts = 1
    while rc != 0 and time.monotonic() - leased_at < 30:
        time.sleep(0.02)
        rc = store.remove("lease-b")
        attempts += 1
    emit(first_remove_rc=first_rc, final_remove_rc=rc, blocked_s=round(time.monotonic() - leased_at, 3),
         attempts=attempts, exist_after=store.is_exist("lease-b"))


def fill(store: MooncakeDistributedStore, count: int, mode: str) -> None:
    payload = value("fill", MIB)
    rcs: dict[str, int] = {}
    started = time.monotonic()
    for index in range(count):
        key = f"obj-{index:05d}"
        rc = store.put(key, payload if mode == "same" else value(key))
        rcs[str(rc)] = rcs.get(str(rc), 0) + 1
    emit(n=count, ok=rcs.get("0", 0), rcs=rcs, put_s=round(time.monotonic() - started, 3))


def write(store: MooncakeDistributedStore, count: int, prefix: str) -> None:
    rcs = [store.put(f"{prefix}-{index}", value(f"{prefix}-{index}")) for index in range(count)]
    emit(n=count, ok=sum(rc == 0 for rc in rcs), rcs=sorted(set(rcs)))


def read(store: MooncakeDistributedStore, count: int, prefix: str) -> None:
    exist = verified = 0
    for index in range(count):
        key = f"{prefix}-{index}"
        if store.is_exist(key) == 1:
            exist += 1
            data = store.get(key)
            verified += bytes(data) == value(key)
    emit(n=count, exist=exist, verified=verified)


def main() -> None:
    job, *args = sys.argv[1:]
    store = setup()
    if job == "basic":
        basic(store)
    elif job == "fill":
        fill(store, int(args[0]), args[1])
    elif job == "write":
        write(store, int(args[0]), args[1])
    elif job == "read":
        read(store, int(args[0]), args[1])
        os._exit(0)
    else:
        raise SystemExit(f"unknown job {job}")
    sys.stdin.read()  # keep the segment (and the data in it) until the scenario kills this process
    os._exit(0)


if __name__ == "__main__":
    main()
