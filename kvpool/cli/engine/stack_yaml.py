"""A stack file's plain values read as the Pulumi CLI reads them: with gopkg.in/yaml.v3's resolution (its
resolve.go), not PyYAML's YAML 1.1 one.

They differ on values users write: `yes`, `on`, `y` and `off` are text for the CLI (booleans in YAML 1.1); `1:30`
is text (a base-60 integer in 1.1); `0o17` is 15 and `1e3`, `1.5e3` are numbers (text in 1.1); `=` is text (a
`!!value` in 1.1). The CLI drops `_` from a number and reads it as Go's strconv.ParseInt with base 0 (`0x10` is
16, `0755` is 493, `0b11` is 3, `+1` is 1), then as an unsigned 64-bit integer, then, if it looks like a float, as
a float64. A date stays text (yaml.v3 keeps a timestamp as its text in an untyped value). A value the CLI reads
but cannot hand over as JSON (`.inf`, `.nan`) is refused here, naming the key and how to quote it.
"""

from __future__ import annotations

import datetime
import math
import re
from decimal import Decimal
from typing import Any

import yaml

from kvpool.internal.input_files import SafeYamlLoader

_BOOLEANS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_SPECIAL_FLOATS = {
    **dict.fromkeys((".nan", ".NaN", ".NAN"), math.nan),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), math.inf),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), -math.inf),
}
_NUMBER_START = frozenset("+-0123456789")
_YAML_STYLE_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_GO_DECIMAL_FLOAT = re.compile(r"^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$")
_BASES = {"x": 16, "o": 8, "b": 2}
# yaml.v3's timestamp layouts (parseTimestamp): 2006-1-2, 2006-1-2 15:4:5.999999999 and with T/t and a zone.
_TIMESTAMP = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:(?:[Tt]\d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))|"
                        r"(?: \d{1,2}:\d{1,2}:\d{1,2}(?:\.\d+)?))?$")
_INT64 = (-(2**63), 2**63 - 1)
_YAML_BREAKS = frozenset("\r\n\x85\u2028\u2029")
_UINT64_MAX = 2**64 - 1

TAG = "tag:yaml.org,2002:"


class GoYamlLoader(SafeYamlLoader):
    """Safe YAML (the project's bounds and key rules) that tags and builds plain scalars as yaml.v3 does."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            # yaml.v3 resolves a plain `<<` as its merge tag: as a key it merges the aliased mappings in
            return TAG + ("merge" if value == "<<" else go_kind(value)[0])
        return super().resolve(kind, value, implicit)

    def construct_merge_scalar(self, node: yaml.ScalarNode) -> str:
        """A plain `<<` that is not a key is the text "<<" for yaml.v3."""
        return node.value

    def construct_go_scalar(self, node: yaml.ScalarNode) -> Any:
        kind, value = go_kind(node.value)
        wanted = node.tag[len(TAG):]
        if kind == wanted or (wanted == "float" and kind == "int"):
            return float(value) if wanted == "float" else value
        raise yaml.constructor.ConstructorError(
            None, None, f"{node.value!r} is not a {wanted} for the Pulumi CLI; drop the tag !!{wanted}", node.start_mark
        )


class GoYamlDumper(yaml.SafeDumper):
    """Writes text that yaml.v3 would read plain as something else (`1e3`, `0o17`, `0X1F`, `08`, `2024-1-2`, `<<`)
    in single quotes, so that the CLI reads back exactly the text written; PyYAML quotes only by YAML 1.1's rules.
    Text with a line break goes in double quotes, where every break is an escape: in single quotes PyYAML writes
    NEL as a raw break, which a reader folds into a space."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if _YAML_BREAKS.intersection(data):
            style = '"'
        else:
            style = None if data != "<<" and go_kind(data)[0] == "str" else "'"
        return self.represent_scalar(TAG + "str", data, style=style)


GoYamlDumper.add_representer(str, GoYamlDumper.represent_str)


def dump_for_the_cli(data: Any) -> str:
    """YAML text of `data` that `pulumi config` reads back as `data`: block style, keys in their order."""
    return yaml.dump(data, Dumper=GoYamlDumper, sort_keys=False, allow_unicode=True, default_flow_style=False, width=120)


for _kind in ("null", "bool", "int", "float"):
    GoYamlLoader.add_constructor(TAG + _kind, GoYamlLoader.construct_go_scalar)
GoYamlLoader.add_constructor(TAG + "merge", GoYamlLoader.construct_merge_scalar)


def go_kind(text: str) -> tuple[str, Any]:
    """yaml.v3's (kind, value) of a plain scalar: null, bool, int, float or str."""
    if text in _NULLS:
        return "null", None
    if text in _BOOLEANS:
        return "bool", _BOOLEANS[text]
    if text in _SPECIAL_FLOATS:
        return "float", _SPECIAL_FLOATS[text]
    if text[0] == ".":
        value = float(text) if _GO_DECIMAL_FLOAT.fullmatch(text) else math.inf
        return ("float", value) if math.isfinite(value) else ("str", text)
    if text[0] not in _NUMBER_START:
        return "str", text
    if _is_timestamp(text):
        return "timestamp", text
    plain = text.replace("_", "")
    number = _go_parse_int(plain)
    if number is not None and (_INT64[0] <= number <= _INT64[1] or (plain[0] not in "+-" and number <= _UINT64_MAX)):
        return "int", number
    if _YAML_STYLE_FLOAT.fullmatch(plain):
        value = float(plain)
        if math.isfinite(value):  # Go's ParseFloat fails out of range: the text stays text
            return "float", value
    return "str", text


def _is_timestamp(text: str) -> bool:
    match = _TIMESTAMP.fullmatch(text)
    if not match:
        return False
    try:
        datetime.date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:  # Go's time.Parse refuses the day, and the value stays text
        return False
    return True


def _go_parse_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, ...) without its range check: sign, then 0x/0o/0b or a leading 0 for octal."""
    sign, digits = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    base = 10
    if digits[:1] == "0" and len(digits) >= 3 and digits[1].lower() in _BASES:
        base, digits = _BASES[digits[1].lower()], digits[2:]
    elif digits[:1] == "0":
        base, digits = 8, digits[1:] or "0"
    try:
        return sign * int(digits, base) if digits and digits.isascii() and digits.isalnum() else None
    except ValueError:
        return None


def go_json_float(value: float) -> str:
    """A float64 as Go's encoding/json writes it: positional from 1e-6 up to 1e21 (an integral one without a
    point), else the shortest exponent form with `e-7` rather than `e-07`."""
    if 1e-6 <= abs(value) < 1e21 or value == 0:
        return format(Decimal(repr(value)), "f").removesuffix(".0")
    return re.sub(r"e-0(\d)$", r"e-\1", repr(value))


def as_go_json(value: Any) -> Any:
    """A value whose floats Go's encoding/json writes without a point (integral, below 1e21) as the integers those
    digits read as: 2.0 is 2, -9.223372036854776e18 is -9223372036854776000 (not Python's exact int of the float)."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(Decimal(repr(value)))
    if isinstance(value, dict):
        return {key: as_go_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [as_go_json(item) for item in value]
    return value


def json_problems(value: Any, where: str) -> list[str]:
    """Values the CLI cannot hand the program as JSON (.inf, .nan: it fails), hands over rounded (beyond int64), or
    loses in its own re-encoding of the stack file (see `lost_in_the_clis_reencoding`), keys included."""
    if isinstance(value, str) and lost_in_the_clis_reencoding(value):
        return [f"{where}: the Pulumi CLI cannot keep {value!r}: it rewrites a text holding a line break as a YAML "
                "literal block, which loses a leading line break and cannot start with a tab; drop the leading "
                f"{'tab' if value[0] == chr(9) else 'line break'}"]
    if isinstance(value, float) and not math.isfinite(value):
        return [f"{where}: {value!r} is not a number JSON can carry; write it quoted (\"{_written(value)}\") if it "
                "is text"]
    if isinstance(value, int) and not isinstance(value, bool) and not _INT64[0] <= value <= _INT64[1]:
        return [f"{where}: {value} is beyond a 64-bit integer, which the Pulumi CLI rounds; write it quoted "
                f"(\"{value}\") if it is text"]
    if isinstance(value, dict):
        return [problem for key, item in value.items()
                for problem in json_problems(key, f"{where} key") + json_problems(item, f"{where}.{key}")]
    if isinstance(value, list):
        return [problem for index, item in enumerate(value) for problem in json_problems(item, f"{where}[{index}]")]
    return []


def lost_in_the_clis_reencoding(text: str) -> bool:
    """Whether the CLI hands the program something else than this text (or refuses the file). It reads a stack file,
    writes it again with yaml.v3 and reads that (LoadProjectStackBytes). yaml.v3 writes a text holding "\n" as a
    literal block unless its emitter rules that out (a character it cannot print as is, a space before a line break
    or at the end); in that block a leading line break is lost and a leading tab reads as indentation. Proven
    against the real CLI by tests/e2e/test_stack_file_yaml.py."""
    if "\n" not in text or text[0] not in "\t\n\u2028\u2029" or text.endswith(" "):
        return False
    if any(char != "\t" and not _printable_for_yaml_v3(char) for char in text):
        return False
    return not any(first == " " and second in _YAML_BREAKS for first, second in zip(text, text[1:], strict=False))


def _printable_for_yaml_v3(char: str) -> bool:
    code = ord(char)
    return char == "\n" or 0x20 <= code <= 0x7E or 0xA0 <= code <= 0xD7FF or (0xE000 <= code <= 0xFFFD and code != 0xFEFF)


def _written(value: float) -> str:
    return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
