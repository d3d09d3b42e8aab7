"""Stand-in for an engine's openYuanrong client (vllm-ascend's yuanrong backend), run in the yuanrong venv.

It reaches the datasystem worker of its node at DS_WORKER_ADDR (host:port, from our rendered engine env) with
yr.datasystem.KVClient, with a request timeout (without one, a failing call blocks ~60 s); the SDK writes its
logs to DATASYSTEM_CLIENT_LOG_DIR. set/get/exist/delete of N x 1 MiB; one JSON line out, then os._exit.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

RESULTS = os.fdopen(os.dup(1), "w")  # the JSON line; whatever the SDK prints goes to stderr
os.dup2(2, 1)

from yr.datasystem import KVClient  # noqa: E402

MIB = 1 << 20
N = int(os.environ.get("KEYS", "16"))


def value(key: str) -> bytes:
    block = hashlib.sha256(key.encode()).digest()
    return (block * (MIB // len(block)))[:MIB]


host, port = os.environ["DS_WORKER_ADDR"].rsplit(":", 1)
started = time.monotonic()
client = KVClient(host, int(port), req_timeout_ms=5000)
client.init()
result = {"init_s": round(time.monotonic() - started, 3), "n": N}
keys = [f"live-{i}" for i in range(N)]
for key in keys:
    client.set(key, value(key))
got = client.get(keys)
result["get_verified"] = sum(bytes(data) == value(key) for key, data in zip(keys, got, strict=False))  # a short answer counts as misses
result["exist"] = client.exist([keys[0], "never-set"])
result["delete_failed"] = client.delete(keys)
result["exist_after_delete"] = sum(client.exist(keys))
try:
    client.get([keys[0]])
    result["get_deleted"] = "returned"
except RuntimeError as error:
    result["get_deleted"] = str(error).split("]")[0] + "]"  # "code: [Key not found]"
RESULTS.write(json.dumps(result) + "\n")
RESULTS.flush()
os._exit(0)
