"""`python -m kvpool size`: the smallest pool that reaches a target, ready to paste into the stack file."""

from __future__ import annotations

import pytest

from kvpool.cli.commands.cli import main
from kvpool.cli.commands.preview_cmd import sizing_lines
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.views.size_plan import SizingInputError, plan
from tests.program_runs import PROJECT_DIR


def size(capsys, *args: str) -> list[str]:
    assert main(["size", "--project-dir", str(PROJECT_DIR), *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_a_lifetime_target_sizes_the_mooncake_segment_and_eviction_pair(capsys):
    lines = size(capsys, "--stack", "mooncake-layerwise", "--lifetime", "10")
    assert lines[0] == "Smallest pool of mooncake-layerwise (set by a 10 s block lifetime):"
    assert lines[2].split("  ")[0] == "mooncake-layerwise"
    # 0.6 x (1 - 0.4) of the pool stays after an eviction: 16GB per rank keeps 10 s (the stack's 29GB keeps 18.56 s).
    assert "16 GiB x 2 engine ranks = 232960 tokens in 1820 blocks of 128 (232960 per writing instance)" in lines[2]
    assert "10.24 s (above the 10 s minimum)" in lines[2]
    assert lines[-4:] == [
        "  motor-kvpool:kv_cache_store_config:",
        "    global_segment_size: 16GB",
        "    eviction_high_watermark_ratio: 0.6",
        "    eviction_ratio: 0.4",
    ]


def test_a_token_target_keeps_that_many_tokens_after_an_eviction(capsys):
    # 1,000,000 tokens = 7813 blocks of 128 x 18 MiB, kept at the 0.36 floor of 0.6/0.4 across 2 ranks: 191GB each
    lines = size(capsys, "--stack", "mooncake-layerwise", "--tokens", "1000000")
    assert lines[0] == "Smallest pool of mooncake-layerwise (set by 1000000 cached tokens):"
    assert lines[-3] == "    global_segment_size: 191GB"


def test_memcache_is_sized_by_dram_size_per_engine_pod(capsys):
    """dev's pods run 2 ranks each: Motor gives each 12GB // 2 (its LocalService.prepare)."""
    lines = size(capsys, "--stack", "dev", "--tokens", "100000")
    assert lines[-2:] == ["  motor-kvpool:kv_cache_store_config:", "    dram_size: 12GB"]


def test_yuanrong_is_sized_in_mib_per_node_worker(capsys):
    assert size(capsys, "--stack", "yuanrong", "--lifetime", "10")[-1] == "    shared_memory_size_mb: 5760"


def test_a_stack_whose_store_holds_nothing_is_not_sized():
    with pytest.raises(SizingInputError, match="the stack owns no pool any engine writes to: nothing to size"):
        plan(None, lifetime_seconds=10)


def test_the_target_is_required(capsys):
    assert main(["size", "--stack", "dev"]) == 1
    assert "one of the arguments --lifetime --tokens is required" in capsys.readouterr().err


def test_preview_prints_the_stacks_sizing_table():
    config = load_stack_config(PROJECT_DIR, "mooncake-layerwise")
    lines = sizing_lines(config)
    assert lines[:2] == ["", "KV pool sizing (docs/sizing.md):"]
    assert lines[2].split() == ["POOL", "BACKEND", "WRITERS", "KV", "BYTES/TOKEN", "CAPACITY", "BLOCK", "LIFETIME",
                                "FRONTIER"]
    assert [cell.strip() for cell in lines[3].split("  ") if cell.strip()] == [
        "mooncake-layerwise", "mooncake", "1 prefill x 8192 tok/s",
        "147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))",
        "29 GiB x 2 engine ranks = 422272 tokens in 3299 blocks of 128 (422272 per writing instance)",
        "18.56 s (above the 10 s minimum)",
        "0.02% of the pool per 10 ms (row <= 8%): 0.6/0.4 kept >= 99 % of puts",
    ]


def test_preview_of_another_projects_program_prints_no_sizing():
    config = load_stack_config(PROJECT_DIR / "tests" / "fixtures" / "programs" / "kv-demo", "dev")
    assert sizing_lines(config) == []


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--lifetime", "nan", "argument --lifetime: 'nan' is not a lifetime: write a number of seconds above 0, e.g. 10"),
    ("--lifetime", "inf", "argument --lifetime: 'inf' is not a lifetime: write a number of seconds above 0, e.g. 10"),
    ("--lifetime", "-5", "argument --lifetime: '-5' is not a lifetime: write a number of seconds above 0, e.g. 10"),
    ("--lifetime", "0", "argument --lifetime: '0' is not a lifetime: write a number of seconds above 0, e.g. 10"),
    ("--lifetime", "ten", "argument --lifetime: 'ten' is not a number of seconds, e.g. 10"),
    ("--tokens", "-3", "argument --tokens: '-3' is not a number of tokens: write a whole number above 0"),
    ("--tokens", "1.5", "argument --tokens: '1.5' is not a whole number of tokens, e.g. 200000"),
])
def test_a_target_that_is_no_lifetime_or_token_count_is_refused_naming_the_flag(capsys, flag, value, message):
    assert main(["size", "--project-dir", str(PROJECT_DIR), "--stack", "dev", flag, value]) == 1
    assert capsys.readouterr().err.splitlines()[0] == f"error: {message}"


@pytest.mark.parametrize(("flag", "value", "need"), [
    ("--lifetime", "1e300", "a 1e+300 s block lifetime"),
    ("--tokens", str(10**30), f"{10**30} cached tokens"),
])
def test_a_target_beyond_any_node_is_refused_instead_of_printing_a_size_the_settings_refuse(capsys, flag, value, need):
    assert main(["size", "--project-dir", str(PROJECT_DIR), "--stack", "mooncake-layerwise", flag, value]) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {need} needs more than one node's memory (16384GB, the most the settings accept) in each of the "
        "pool's 2 engine ranks (kv_cache_store_config.global_segment_size); ask for less, or add engines to the pool"
    ]
