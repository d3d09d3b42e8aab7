"""Stand-in for an engine's MemCache client (vllm-ascend's memcache backend), run in the MemCache venv.

The library itself reads the LocalService conf at MMC_LOCAL_CONFIG_PATH (our rendered mmc-local.conf) in
DistributedObjectStore.init(). The engine calls init(device_id), which also initialises the memory pool
(hybm) and needs the Ascend driver and CANN (reference/research/backends.md §2): without an NPU the only part
that runs is init(device_id, init_bm=False): the conf is loaded and validated and the client is set up against
the MetaService. A put then reaches the MetaService and fails for want of memory (-1). One JSON line out.
"""

from __future__ import annotations

import json
import os

RESULTS = os.fdopen(os.dup(1), "w")  # the JSON lines; the library logs to stdout, which goes to stderr
os.dup2(2, 1)

import memcache_hybrid  # noqa: E402 - after the redirection

store = memcache_hybrid.DistributedObjectStore()
init_rc = store.init(0, False)
put_rc = store.put("live-k", b"v") if init_rc == 0 else None
RESULTS.write(json.dumps({"init_rc": init_rc, "put_rc": put_rc}) + "\n")
RESULTS.flush()
os._exit(0)
