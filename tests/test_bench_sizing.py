"""bench/sizing.py's pure parts: the planner's predictions for its grid and the summary of recorded runs (no live
master, no timings: those are in bench/results/sizing.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.sizing import Cell, grid, predictions, summarize, table

RUNS = Path(__file__).resolve().parent.parent / "bench" / "results" / "sizing-runs.json"


def test_the_grid_is_planned_as_the_stack_with_one_mib_blocks_at_the_writers_pace():
    cells = grid("32,64,128,512", "1,2")
    planned = predictions(cells)  # planned() asserts 1 MiB blocks, the pool size and the rate through the planner
    assert len(planned) == 8
    # mooncake-layerwise's 0.6/0.4: 0.6 of the pool at 1 MiB per pace, then one 10 ms eviction period.
    assert planned[Cell(32, 1)]["first_eviction_s"] == pytest.approx(0.6 * 32 * 0.001 + 0.01)
    assert planned[Cell(512, 2)]["first_eviction_s"] == pytest.approx(0.6 * 512 * 0.002 + 0.01)
    assert planned[Cell(64, 1)]["lifetime_s"] == pytest.approx(0.36 * 64 * 0.001)
    assert planned[Cell(32, 1)]["share"] == pytest.approx(10 / 32)
    assert "did not keep" in planned[Cell(32, 1)]["frontier"]
    assert "0.6/0.4 kept" in planned[Cell(128, 2)]["frontier"]


def test_the_recorded_runs_summarize_into_the_results_table():
    runs = json.loads(RUNS.read_text())["runs"]
    cells = [Cell(32, 1), Cell(512, 2)]
    planned = predictions(cells)
    rows = [summarize(cell, planned[cell], runs[cell.label]) for cell in cells]
    assert [row["runs"] for row in rows] == [5, 5]
    assert all(abs(row["resident"] - row["floor"]) < 0.03 for row in rows)  # 0.6 x (1 - 0.4) of the pool
    lines = table(rows)
    assert len(lines) == 4 and lines[2].startswith("| 32 MiB | 1 ms/MiB | 29.2 ms |")
