"""bench/pool_dashboard.py's drawing step on the committed record of its live run (no master, no Prometheus):
the record holds the dashboard the stack renders now, the picture's data and the results page come from it."""

from __future__ import annotations

import json

import pytest

from bench.pool_dashboard import (
    PAGE,
    PHASES,
    POOL_MIB,
    RECORD,
    axis_unit,
    drawn_panels,
    page,
    signals,
    summary,
)

RECORDED = json.loads(RECORD.read_text())


def test_the_record_holds_every_query_of_the_dashboard_the_stack_renders() -> None:
    """Else the picture shows a dashboard the program no longer renders: run the bench again."""
    board = signals(RECORDED["namespace"])
    assert [(p["title"], p["unit"], [(q["expr"], q["legend"]) for q in p["queries"]]) for p in RECORDED["panels"]] == [
        (p.title, p.unit, [(q.expr, q.legend) for q in p.queries]) for p in board.panels]


def test_the_panels_are_drawn_in_their_units_with_their_legends() -> None:
    panels = {panel["title"]: panel for panel in drawn_panels(RECORDED)}
    assert list(panels) == [panel["title"] for panel in RECORDED["panels"]]
    capacity = panels["Capacity and used"]
    assert capacity["suffix"] == "MiB" and [line["label"] for line in capacity["lines"]] == ["capacity", "used"]
    assert max(capacity["lines"][0]["v"]) == POOL_MIB  # the segment, bytes -> MiB
    watermark = panels["Used against the eviction watermark"]
    assert watermark["suffix"] == "%" and all(v == pytest.approx(60.0) for v in watermark["lines"][1]["v"])
    # Every query drew its series or is named as having none; no legend keeps a {{label}} template.
    for title, panel in panels.items():
        recorded = next(p for p in RECORDED["panels"] if p["title"] == title)
        assert len(panel["lines"]) == sum(len(q["result"]) for q in recorded["queries"])
        assert panel["missing"] == [q["legend"] for q in recorded["queries"] if not q["result"]]
        assert all("{{" not in line["label"] and len(line["t"]) == len(line["v"]) for line in panel["lines"])
        assert min(t for line in panel["lines"] for t in line["t"]) >= panel["x"][0] == -RECORDED["lead_s"]


def test_the_run_overflowed_the_pool_and_the_master_counted_what_the_writer_saw() -> None:
    numbers = summary(RECORDED)
    assert numbers["capacity_mib"] == POOL_MIB
    assert numbers["peak_used_share"] > numbers["watermark"] == 0.6 and numbers["evicted_keys"] > 0
    assert numbers["put_failures"] == numbers["writer_put_failures"] > 0
    assert numbers["puts"] == sum(phase["n"] for phase in RECORDED["phases"])
    # Puts alone keep every put (eviction keeps up at this pace); reading each back leases the pool full.
    assert [phase["name"] for phase in RECORDED["phases"]] == [name for _, _, name in PHASES]
    first, last = RECORDED["phases"][0], RECORDED["phases"][-1]
    assert first["ok"] == first["n"] and last["ok"] < last["n"]


def test_the_committed_page_is_the_records() -> None:
    assert PAGE.read_text() == page(RECORDED)


@pytest.mark.parametrize(("unit", "peak", "expected"), [
    ("bytes", 256 * 2**20, (2**20, "MiB")), ("bytes", 3 * 2**30, (2**30, "GiB")), ("bytes", 100, (1, "B")),
    ("percentunit", 1.0, (0.01, "%")), ("reqps", 50, (1, "req/s")), ("short", 5, (1, "")),
])
def test_axis_units_follow_grafanas(unit: str, peak: float, expected: tuple[float, str]) -> None:
    assert axis_unit(unit, peak) == expected
