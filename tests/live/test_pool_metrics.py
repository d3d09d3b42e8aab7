"""Every metric the pool dashboards and alerts query is in a live scrape of the real binaries: mooncake_master
after the mooncake-layerwise stack's engine client put, read (taking a lease) and removed keys, and MemCache's
MetaService after our rendered client's put reached it (test_mooncake.py's and test_memcache.py's runs).

The scrapes are recorded in tests/fixtures/pool_metrics/ (`KVPOOL_RECORD_METRICS=1` rewrites them); promtool's rule
tests (tests/e2e/test_promtool.py) start from those series."""

from __future__ import annotations

import os

import pytest

from tests.live.test_memcache import dev, meta  # noqa: F401 (fixtures: the MetaService run)
from tests.live.test_mooncake import basic, layerwise  # noqa: F401 (fixtures: the master under the engine's load)
from tests.pool_metrics import RECORDINGS, exposed_families, queried_metrics

SCRAPES = {"mooncake": "basic", "memcache": "meta"}


@pytest.fixture(params=sorted(SCRAPES))
def scrape(request) -> tuple[str, str]:
    backend = request.param
    text = request.getfixturevalue(SCRAPES[backend])["metrics_text"]
    if os.environ.get("KVPOOL_RECORD_METRICS") == "1":
        RECORDINGS[backend].write_text(text)
    return backend, text


def test_every_queried_metric_is_exposed_by_the_real_binary(scrape):
    backend, text = scrape
    missing = sorted(queried_metrics(backend) - exposed_families(text))
    assert missing == [], f"{backend}: queried but not in the live scrape: {missing}"


def test_the_recording_holds_the_families_of_the_live_scrape(scrape):
    """The committed series promtool's tests start from are this binary's exposition, not a guess of it."""
    backend, text = scrape
    assert exposed_families(RECORDINGS[backend].read_text()) == exposed_families(text)
