"""Every metric the pool dashboards and alerts query is in a live scrape of the real binaries under load:
mooncake_master after an engine client wrote three times the pool's capacity through eviction (the capacity
run) and after the mooncake-layerwise stack's engine client put, read (taking a lease) and removed keys; MemCache's
MetaService after our rendered client's put reached it (test_mooncake.py's and test_memcache.py's runs).

The scrapes are recorded in tests/fixtures/pool_metrics/ (`KVPOOL_RECORD_METRICS=1` rewrites them); promtool's rule
tests (tests/e2e/test_promtool.py) start from those series."""

from __future__ import annotations

import os

import pytest

from tests.live.test_memcache import dev, meta  # noqa: F401 (fixtures: the MetaService run)
from tests.live.test_mooncake import basic, capacity, layerwise  # noqa: F401 (fixtures: the master under load)
from tests.pool_metrics import RECORDINGS, exposed_families, queried_metrics

# backend -> the runs scraped; the first one's scrape is the recording.
SCRAPES = {"mooncake": ("capacity", "basic"), "memcache": ("meta",)}


def scraped(request, backend: str, run: str) -> str:
    text = request.getfixturevalue(run)["metrics_text"]
    if os.environ.get("KVPOOL_RECORD_METRICS") == "1" and run == SCRAPES[backend][0]:
        RECORDINGS[backend].write_text(text)
    return text


@pytest.mark.parametrize("backend, run", [(b, run) for b, runs in SCRAPES.items() for run in runs])
def test_every_queried_metric_is_exposed_by_the_real_binary(request, backend, run):
    missing = sorted(queried_metrics(backend) - exposed_families(scraped(request, backend, run)))
    assert missing == [], f"{backend} ({run} run): queried but not in the live scrape: {missing}"


@pytest.mark.parametrize("backend", sorted(SCRAPES))
def test_the_recording_holds_the_families_of_the_live_scrape(request, backend):
    """The committed series promtool's tests start from are this binary's exposition, not a guess of it."""
    text = scraped(request, backend, SCRAPES[backend][0])
    assert exposed_families(RECORDINGS[backend].read_text()) == exposed_families(text)
