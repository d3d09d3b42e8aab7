"""Every check of a value by a pattern is a full match (issue 33 class 3): Python's `$` in `re.match` accepts a final
"\\n", so "kv\\n" passed as a label value and "50%\\n" as a rollout percentage. Collected from the code itself, not
listed by hand: the patterns the settings, the policy rules, the offline tooling and the API-server mirror check
values with (each `fullmatch` call's pattern, and every pydantic `pattern=` constraint of the settings models), and
for each, a value it accepts is accepted with no trailing newline only."""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
from pathlib import Path
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, TypeAdapter, ValidationError

ROOT = Path(__file__).resolve().parent.parent
# Patterns used other than to check a whole value, each with why a partial match is what it needs.
NOT_VALUE_CHECKS = {
    ("kvpool.settings.loader", "_PATH_BREAKER"): "search: a forbidden character anywhere",
    ("kvpool.settings.loader", "_CONTROL_CHARACTER"): "search: a forbidden character anywhere",
    ("kvpool.policies.rules.security", "_NAME_WORDS"): "split: the words of a name",
    ("kvpool.cli.views.importer", "_STEP"): "tokenizer: one step of a path at a position",
    ("kvpool.cli.apiserver.openapi", "_SPACE"): "tokenizer: JSON whitespace at a position",
    ("kvpool.cli.apiserver.openapi", "_DEFINITION_REF"): "finds references inside a schema's text",
    ("kvpool.cli.views.manifests", "_PRINTABLE_ASCII_LINES"): "chooses YAML's block style for multi-line text",
    ("kvpool.internal.input_files", "_JSON_STRUCTURE"): "tokenizer: the next string or bracket of JSON at a position",
}
# Calls that may take a part of a value, with why.
PARTIAL_CALLS = {
    # (file, the call as ast.unparse writes it)
    ("kvpool/cli/views/blast_radius.py", "re.match('\\\\s*(\\\\d+(?:\\\\.\\\\d+)?)', str(value))"): "the number a display starts with",
    ("kvpool/cli/apiserver/names.py", "re.search('[a-z]', name)"): "a port name holds at least one letter",
}


def modules() -> list:
    found = []
    for info in pkgutil.walk_packages(importlib.import_module("kvpool").__path__, "kvpool."):
        if not info.name.endswith("__main__"):
            found.append(importlib.import_module(info.name))
    return found


MODULES = modules()


def source_of(module) -> tuple[str, ast.AST]:
    text = Path(module.__file__).read_text()
    return text, ast.parse(text)


def fullmatch_patterns() -> dict[str, re.Pattern]:
    """Every pattern a `fullmatch` call of the code base checks with: `NAME.fullmatch(...)` (NAME a module's
    compiled pattern) and `re.fullmatch(PATTERN, ...)` (a literal or a module constant)."""
    patterns = {}
    for module in MODULES:
        _, tree = source_of(module)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "fullmatch"):
                continue
            target = node.func.value
            if isinstance(target, ast.Name) and target.id == "re":
                argument = node.args[0]
                if isinstance(argument, ast.Constant):
                    pattern = re.compile(argument.value)
                elif isinstance(argument, ast.Name) and isinstance(getattr(module, argument.id, None), str):
                    pattern = re.compile(getattr(module, argument.id))
                else:
                    continue  # a pattern from configuration (kvpool/policies/rules/store.py's production_stacks)
                patterns[f"{module.__name__}: re.fullmatch({ast.unparse(argument)})"] = pattern
            elif isinstance(target, ast.Name) and isinstance(getattr(module, target.id, None), re.Pattern):
                if (module.__name__, target.id) in NOT_VALUE_CHECKS:
                    continue
                patterns[f"{module.__name__}.{target.id}"] = getattr(module, target.id)
    return patterns


def model_patterns() -> set[str]:
    """Every `pattern` constraint in the core schemas of the settings models (pydantic-core applies them)."""
    found: set[str] = set()

    def walk(node) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                found.add(value) if key == "pattern" and isinstance(value, str) else walk(value)
        elif isinstance(node, (list, tuple)):
            for value in node:
                walk(value)

    for module in MODULES:
        for obj in vars(module).values():
            if inspect.isclass(obj) and issubclass(obj, BaseModel) and obj.__module__ == module.__name__:
                assert "regex_engine" not in obj.model_config, obj  # the tests below prove pydantic-core's rust-regex
                obj.model_rebuild()
                walk(obj.__pydantic_core_schema__)
    return found


FULLMATCH = fullmatch_patterns()
MODEL_PATTERNS = sorted(model_patterns())


def test_every_compiled_pattern_checks_whole_values_or_says_why_not() -> None:
    compiled = {(module.__name__, name) for module in MODULES for name, obj in vars(module).items()
                if isinstance(obj, re.Pattern) and getattr(obj, "__module__", None) is None
                and module.__name__ in {m.__name__ for m in MODULES}}
    # only patterns defined in the module (an imported constant is checked where it is defined)
    compiled = {(mod, name) for mod, name in compiled
                if re.search(rf"^{re.escape(name)}\s*=\s*re\.compile", source_of(importlib.import_module(mod))[0], re.M)}
    unchecked = {entry for entry in compiled if f"{entry[0]}.{entry[1]}" not in FULLMATCH} - set(NOT_VALUE_CHECKS)
    assert unchecked == set()
    assert len(FULLMATCH) >= 30 and len(MODEL_PATTERNS) >= 9  # the collection found them


def test_no_value_is_checked_by_a_prefix_match() -> None:
    """`match` and `search` only where NOT_VALUE_CHECKS or PARTIAL_CALLS say why a part is meant."""
    allowed = {name for _, name in NOT_VALUE_CHECKS}
    partial = []
    for module in MODULES:
        text, tree = source_of(module)
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("match", "search") and isinstance(node.func.value, ast.Name)
                    and node.func.value.id not in allowed):
                where = (str(Path(module.__file__).relative_to(ROOT)), ast.unparse(node))
                if where not in PARTIAL_CALLS:
                    partial.append(where)
    assert partial == []


@pytest.mark.parametrize("name", sorted(FULLMATCH))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_pattern_that_accepts_a_value_refuses_it_with_a_trailing_newline(name, data) -> None:
    pattern = FULLMATCH[name]
    value = data.draw(st.from_regex(pattern, fullmatch=True).map(lambda v: v[:200]).filter(pattern.fullmatch))
    assert pattern.fullmatch(value + "\n") is None


@pytest.mark.parametrize("pattern", MODEL_PATTERNS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(data=st.data())
def test_a_settings_pattern_refuses_a_trailing_newline(pattern, data) -> None:
    """pydantic-core searches a `pattern=` with Rust's regex, where `$` is the end of the text: proven per pattern."""
    adapter = TypeAdapter(Annotated[str, Field(pattern=pattern)])
    value = data.draw(st.from_regex(pattern, fullmatch=True))
    adapter.validate_python(value)  # accepted as it is
    with pytest.raises(ValidationError):
        adapter.validate_python(value + "\n")


def test_the_api_server_mirror_refuses_a_trailing_newline_in_a_node_selector() -> None:
    """kvpool/cli/apiserver answers as the API server does for the issue's examples: "ssd\\n" in a nodeSelector, a
    namespace "dev\\n"."""
    from kvpool.cli.apiserver.names import check_labels, dns1123_label, show

    path = ("spec", "template", "spec", "nodeSelector")
    assert check_labels({"disk": "ssd\n", "pool\n": "kv"}, path) == [
        ((*path, "disk"), f"label value {show('ssd' + chr(10))}: a valid label must be an empty string or consist of "
                          "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"),
        ((*path, "pool\n"), f"label key {show('pool' + chr(10))}: name part must consist of alphanumeric characters, "
                            "'-', '_' or '.', and must start and end with an alphanumeric character"),
    ]
    assert dns1123_label("dev\n") == ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                                      "or '-', and must start and end with an alphanumeric character")


def test_the_policy_rules_refuse_a_trailing_newline() -> None:
    """The rules took a stripped text: "v0.17.0rc2\\n" was a version."""
    from kvpool.policies import rules

    assert [str(finding) for finding in rules.check_layerwise_pool_patch("v0.17.0rc2\n", {})] == [
        "vllm_ascend_version: 'v0.17.0rc2\\n' is not a version such as v0.17.0rc2."
    ]
    assert rules.parse_version("v0.17.0rc2") == (0, 17, 0, "rc", 2)
