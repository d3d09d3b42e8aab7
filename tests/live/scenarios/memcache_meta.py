"""MemCache (dev stack): the MetaService started by our rendered `sh -c` (it renders mmc-meta.conf from the
ConfigMap's template with the pod IP, then execs the MetaService); its /health, /livez, /metrics on the
rendered metrics port; and our rendered mmc-local.conf loaded by the client library (see memcache_engine.py),
plus the same conf with one invalid value, which the library must refuse.

Only one MetaService can run per host: it takes a POSIX lock on /tmp/mmc_meta_service.lock and leaves the file
behind. Afterwards the file is removed unless some other MetaService on this host still holds the lock.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
from pathlib import Path

from _harness import http_get, probes, run, wait_until

LOCK = Path("/tmp/mmc_meta_service.lock")


def summary_counts(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split("=", 1) for item in text.split()) if v.isdigit()}


def remove_lock_if_free() -> bool:
    try:
        fd = os.open(LOCK, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a live MetaService holds it
    except OSError:
        return False
    else:
        LOCK.unlink()
        return True
    finally:
        os.close(fd)


def main(plan, procs, result):
    result["lock_existed_before"] = LOCK.exists()
    try:
        meta = procs.start(plan["meta"])
        admin = f"http://127.0.0.1:{plan['metrics_port']}"
        # /health answers 200 before the service is ready (service_ready false): wait for the state the test asserts
        health, result["meta_ready_s"] = wait_until(
            "MetaService /health with service_ready", lambda: (a := http_get(admin + "/health")) and a[0] == 200
            and json.loads(a[1]).get("service_ready") is True and a, 20, watch=[meta])
        result["health"] = json.loads(health[1])
        result["livez"] = http_get(admin + "/livez")
        status, text = http_get(admin + "/metrics")
        families = sorted({line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")})
        result["metrics"] = {"status": status, "families": len(families),
                             "memcache_families": sum(f.startswith("memcache_") for f in families)}
        result["rendered_meta_conf"] = Path(plan["meta_conf"]).read_text()
        result["probes"] = probes(plan["probes"])

        engine = procs.start(plan["engine"], pipe=True, tag="rendered-conf")
        result["engine"] = engine.read_json(30)
        result["summary_after_put"] = {k: v for k, v in summary_counts(http_get(admin + "/metrics/summary")[1]).items()
                                       if k.startswith("alloc_")}
        # After the client's put reached the MetaService: the exposition dashboards and alerts are checked against.
        result["metrics_text"] = http_get(admin + "/metrics")[1]
        bad = procs.start(plan["engine_bad_conf"], pipe=True, tag="invalid-conf")
        result["engine_bad_conf"] = bad.read_json(30)
        result["meta_stop_s"] = round(procs.stop(meta, signal.SIGTERM, timeout=15), 2)
        result["meta_exit_code"] = meta.popen.returncode
    finally:
        procs.stop_all()
        result["lock_removed"] = remove_lock_if_free()
        result["lock_left"] = LOCK.exists()


if __name__ == "__main__":
    run(main)
