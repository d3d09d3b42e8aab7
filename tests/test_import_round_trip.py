"""Issue 33 §9: what `kvpool import` writes reads back as exactly what it read from user_config.json and env.json.

The stack file is read here by the offline reader (kvpool/cli/engine/stack_config.py), the mirror of the Pulumi CLI's
yaml.v3 reading that tests/e2e/test_stack_file_yaml.py proves against the real CLI;
tests/e2e/test_import_round_trip.py runs the same values through `pulumi config --json`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_yaml import lost_in_the_clis_reencoding
from kvpool.cli.views.importer import ConversionError, convert, stack_file_text
from tests.service_configs import as_motor_files, mooncake_pool

# Text that yaml.v3 reads plain as a number, a boolean, null, a date or a merge key, and its near misses.
TRICKY_TEXTS = [
    "1e3", "1E3", "-.5e3", "0o17", "0O17", "0X1F", "0x1f", "0B11", "0b11", "08", "0755", "1_000", "0x_1", "+1", ".5",
    "1.", "9223372036854775808", "18446744073709551616", "1e400", "2024-1-2", "2024-01-01", "2024-01-01 10:00:00",
    "2024-01-01T10:00:00Z", "2024-13-40", "<<", "yes", "On", "y", "~", "", "null", "NULL", "true", "False", "1:30",
    ".inf", "-.Inf", ".NaN", "=", "#x", "a #b", "x: y", "- x", "'q'", '"q"', "\\", "tab\there", "line\nbreak",
    " lead", "trail ", "é", "\u2028", "\x85", "\r\nx", " \nx", "x\n\n", "\x85\nx",
]
# Characters from which yaml.v3's numbers, dates and keywords are made, and the punctuation around them.
NUMBERISH = st.text(alphabet="0123456789+-._eExXoObBtTzZ: nuly~<", min_size=0, max_size=8)


def round_trip(tmp_path: Path, env_values: dict[str, Any], engine_config: dict[str, Any] | None = None) -> tuple:
    """Import a pair with these env values (and engine_config keys), read the written stack back offline."""
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = env_values
    user_config["motor_engine_prefill_config"]["engine_config"].update(engine_config or {})
    text = stack_file_text(convert(user_config, env), "a/user_config.json + a/env.json")
    (tmp_path / "Pulumi.yaml").write_text("name: motor-kvpool\nruntime: python\n")
    (tmp_path / "Pulumi.imported.yaml").write_text(text, encoding="utf-8")
    values = load_stack_config(tmp_path, "imported").values
    prefill = json.loads(values["motor-kvpool:motor_engine_prefill_config"])["engine_config"]
    return json.loads(values["motor-kvpool:env"])["motor_common_env"], prefill


def test_every_tricky_text_reads_back_as_the_text(tmp_path):
    written = {f"V{index}": text for index, text in enumerate(TRICKY_TEXTS)}
    read_back, _ = round_trip(tmp_path, written)
    assert read_back == written


def test_the_issues_values_are_quoted_in_the_file():
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = {"A": "1e3", "B": "0o17", "C": "0X1F", "D": "0B11", "E": "2024-1-2"}
    text = stack_file_text(convert(user_config, env), "x")
    assert "      A: '1e3'\n      B: '0o17'\n      C: '0X1F'\n      D: '0B11'\n      E: '2024-1-2'\n" in text


def test_numbers_and_switches_stay_numbers_and_switches(tmp_path):
    engine_config = {"max_num_seqs": 9223372036854775807, "gpu_memory_utilization": 1e-07, "enforce_eager": True}
    read_back, prefill = round_trip(tmp_path, {"N": 0, "F": 1e21, "B": False, "Z": None}, engine_config)
    assert read_back == {"N": 0, "F": 1e21, "B": False, "Z": None}
    assert {key: prefill[key] for key in engine_config} == engine_config


def test_an_integer_the_cli_would_round_is_refused_naming_the_field():
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = {"BIG": 2**64 - 1}
    with pytest.raises(ConversionError) as caught:
        stack_file_text(convert(user_config, env), "x")
    assert str(caught.value) == (
        "env.motor_common_env.BIG: 18446744073709551615 is beyond a 64-bit integer, which the Pulumi CLI rounds; "
        'write it quoted ("18446744073709551615") if it is text'
    )


def test_an_integer_below_64_bits_is_refused_as_one_above(tmp_path):
    # -2**63 is int64's lowest and reads back as itself; one lower the CLI reads as a float, rounded
    read_back, _ = round_trip(tmp_path, {"LOW": -(2**63)})
    assert read_back == {"LOW": -(2**63)}
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = {"LOW": -(2**63) - 1}
    with pytest.raises(ConversionError) as caught:
        stack_file_text(convert(user_config, env), "x")
    assert str(caught.value) == (
        "env.motor_common_env.LOW: -9223372036854775809 is beyond a 64-bit integer, which the Pulumi CLI rounds; "
        'write it quoted ("-9223372036854775809") if it is text'
    )


def test_a_text_the_cli_would_change_is_refused_naming_the_field():
    user_config, env = as_motor_files(mooncake_pool())
    env["motor_common_env"] = {"HEAD": "\nfirst line lost", "TAB": "\tunreadable\n"}
    with pytest.raises(ConversionError) as caught:
        stack_file_text(convert(user_config, env), "x")
    assert str(caught.value).splitlines() == [
        "env.motor_common_env.HEAD: the Pulumi CLI cannot keep '\\nfirst line lost': it rewrites a text holding a line "
        "break as a YAML literal block, which loses a leading line break and cannot start with a tab; drop the "
        "leading line break",
        "env.motor_common_env.TAB: the Pulumi CLI cannot keep '\\tunreadable\\n': it rewrites a text holding a line "
        "break as a YAML literal block, which loses a leading line break and cannot start with a tab; drop the "
        "leading tab",
    ]


@settings(max_examples=150, deadline=None)
@given(values=st.dictionaries(st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True),
                              NUMBERISH | st.sampled_from(TRICKY_TEXTS) | st.text(max_size=6), max_size=6))
def test_any_text_reads_back_as_itself_or_is_refused(tmp_path_factory, values):
    if any(lost_in_the_clis_reencoding(text) for text in values.values()):
        with pytest.raises(ConversionError, match="the Pulumi CLI cannot keep"):
            round_trip(tmp_path_factory.mktemp("rt"), values)
    else:
        read_back, _ = round_trip(tmp_path_factory.mktemp("rt"), values)
        assert read_back == values


def nested(levels: int) -> Any:
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def test_a_pass_through_section_as_deep_as_the_stack_file_holds_reads_back_and_one_deeper_is_refused(tmp_path):
    # user_config.json may be 64 levels deep; its sections land two levels lower in the stack file, which reads 64
    user_config, env = as_motor_files(mooncake_pool())
    user_config["motor_deploy_config"]["tls_config"] = nested(61)
    (tmp_path / "Pulumi.yaml").write_text("name: motor-kvpool\nruntime: python\n")
    (tmp_path / "Pulumi.imported.yaml").write_text(stack_file_text(convert(user_config, env), "x"), encoding="utf-8")
    values = load_stack_config(tmp_path, "imported").values
    assert json.loads(values["motor-kvpool:motor_deploy_config"])["tls_config"] == nested(61)
    user_config["motor_deploy_config"]["tls_config"] = nested(62)
    with pytest.raises(ConversionError) as caught:
        stack_file_text(convert(user_config, env), "x")
    assert str(caught.value) == (
        f"motor_deploy_config.tls_config{'.a' * 61}: nested more than 62 levels deep, which the stack file (its top "
        "level and `config:` above it, 64 levels in all) cannot hold; flatten it"
    )
