"""bench/fleet.py: the fleets it generates, and one run at N=2 writing its table (what it measures is not checked
here: timings belong to bench/results/fleet.md, never to a test)."""

from __future__ import annotations

import re
from pathlib import Path

from bench.fleet import fleet_stacks, main


def test_the_generated_fleet_is_owners_each_with_three_admitted_consumers():
    stacks = fleet_stacks(6)
    assert list(stacks) == ["owner-0", "consumer-0-1", "consumer-0-2", "consumer-0-3", "owner-1", "consumer-1-1"]
    assert stacks["owner-0"]["kv_cache_store_config"]["allowed_consumers"] == [
        "consumer-0-1", "consumer-0-2", "consumer-0-3"]
    assert stacks["owner-1"]["kv_cache_store_config"]["allowed_consumers"] == ["consumer-1-1"]
    assert stacks["consumer-1-1"]["kv_cache_store_config"]["target_stack"] == "organization/motor-kvpool/owner-1"


def test_the_bench_runs_at_two_stacks_and_writes_its_table(tmp_path: Path):
    results = tmp_path / "fleet.md"
    main(["--sizes", "2", "--results", str(results)])  # stops (SystemExit) when the two modes' reports differ
    lines = results.read_text().splitlines()
    assert lines[:3] == ["# kvpool fleet over generated fleets", "", lines[2]]
    assert lines[2].startswith("`venv/bin/python bench/fleet.py --sizes 2 --reps 1`, ")
    header = lines.index("| stacks | serial wall (min) | serial s/stack | serial CPU | parallel wall (min) | "
                         "parallel s/stack | parallel CPU | parallel / serial wall |")
    assert re.fullmatch(r"\| 2 \| [\d.]+ s \([\d.]+\) \| [\d.]+ \| [\d.]+ s \| [\d.]+ s \([\d.]+\) \| [\d.]+ \| "
                        r"[\d.]+ s \| [\d.]+x \|", lines[header + 2])
    assert lines[header + 3:header + 5] == ["", lines[header + 4]]
    assert lines[header + 4].startswith("Other load on the machine: ")
