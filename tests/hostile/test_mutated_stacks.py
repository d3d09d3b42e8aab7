"""Every example stack, mutated one field at a time, loads or is refused with a field-named SettingsError; and when it
loads, the program's manifests pass the strict schema and the API server's own checks (kvpool/cli/apiserver/checks.py).

In-process and fast: the mutated stack file goes through what `python -m kvpool settings|preview` runs first (the
stack file reader, then the settings loader with the consistency rules). A mutation replaces one value (scalar,
huge number, unicode text, list, mapping), deletes a key or adds an unknown one. Any exception other than the
project's user errors, a refusal without a dotted path, or accepted settings whose manifests the API server would
refuse, fails the test; so does an input that takes more memory than `bounded_memory` allows (MemoryError). In CI the
examples are derandomized (tests/conftest.py).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kvpool.cli.engine.mock_engine import run_program
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.engine.stack_references import resolve
from kvpool.cli.views.manifests import (
    KubernetesObject,
    ManifestValidationError,
    kubernetes_objects,
    validate_objects,
)
from kvpool.errors import KvpoolError, SettingsError
from kvpool.internal.input_files import InputFileError
from kvpool.settings.from_stack import settings_from_config
from kvpool.settings.service import ServiceSettings

REPOSITORY = Path(__file__).resolve().parents[2]
STACK_FILES = sorted((REPOSITORY / "stacks").glob("Pulumi.*.yaml"))
EXAMPLES = {path.name[len("Pulumi.") : -len(".yaml")]: yaml.safe_load(path.read_text()) for path in STACK_FILES}
# A problem line starts with the field it is about: `motor-kvpool:key`, `section.key`, `section.list[2].key`.
PROBLEM_LINE = re.compile(r"^(motor-kvpool:)?[\w-]*(\[\d+\]|\[('|\")[^\n]*?('|\")\]|\.[\w.-]+)*: \S")

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([0, -1, 1e20, 2**63, 10**40, 0.5, float("inf")]),
    st.text(max_size=12),
    st.sampled_from(["", "ucm", "mooncake", "yes", "1Gi", "/", "../x", "ü漢字\u202e", "a" * 300, "0x10"]),
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.text(min_size=1, max_size=8), scalars, max_size=3),
)


def paths_of(document: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path below config.<motor-kvpool:key> (the keys themselves included)."""
    found = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, child in document.items():
            found += paths_of(child, (*prefix, key))
    elif isinstance(document, list):
        for index, child in enumerate(document):
            found += paths_of(child, (*prefix, index))
    return found


def mutate(config: dict, path: tuple, operation: str, value: Any) -> None:
    *parents, last = path
    holder: Any = config
    for step in parents:
        holder = holder[step]
    if operation == "replace":
        holder[last] = value
    elif operation == "delete":
        del holder[last]
    elif isinstance(holder[last], dict):  # add an unknown key next to the known ones
        holder[last]["unknown_key_" + str(len(holder[last]))] = value
    else:
        holder[last] = value


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("project")
    (folder / "Pulumi.yaml").write_text((REPOSITORY / "Pulumi.yaml").read_text())
    (folder / "stacks").mkdir()
    return folder


def rendered(project: Path) -> list[KubernetesObject]:
    """The manifests of the program run on the stack `load` wrote."""
    config = load_stack_config(project, "mutated")
    run = run_program(REPOSITORY, config, stack_references=resolve(REPOSITORY, config, None))
    return kubernetes_objects(run.resources)


def render_and_check(project: Path) -> None:
    """Validate the rendered manifests as the preview does (ManifestValidationError lists every object the schema or
    the API server's rules refuse)."""
    validate_objects(rendered(project), "1.30")


def load(project: Path, document: dict) -> ServiceSettings:
    (project / "stacks" / "Pulumi.mutated.yaml").write_text(yaml.safe_dump(document, allow_unicode=True))
    config = load_stack_config(project, "mutated")
    return settings_from_config(config.values, set(config.secret_keys), "mutated")


@settings(max_examples=200, deadline=10000, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                     HealthCheck.too_slow])
@given(data=st.data(), stack=st.sampled_from(sorted(EXAMPLES)), operation=st.sampled_from(["replace", "delete", "add"]))
def test_a_one_field_mutation_loads_or_names_the_field(
    project: Path, bounded_memory: int, data: st.DataObject, stack: str, operation: str
):
    document = yaml.safe_load(yaml.safe_dump(EXAMPLES[stack]))
    path = data.draw(st.sampled_from(paths_of(document["config"])), label="path")
    value = data.draw(values, label="value")
    mutate(document["config"], path, operation, value)
    try:
        load(project, document)
    except SettingsError as error:
        assert error.problems, error
        for problem in error.problems:
            assert PROBLEM_LINE.match(problem), f"problem names no field: {problem!r}"
    except (InputFileError, KvpoolError) as error:
        assert re.search(r"(Pulumi\.mutated\.yaml|motor-kvpool:\w+|'\w+')", str(error)), f"names no file or key: {error}"
    else:
        event("settings loaded: manifests rendered and checked")
        try:
            render_and_check(project)
        except ManifestValidationError as error:
            pytest.fail(f"settings accepted, manifests refused: {error}")
        except SettingsError as error:  # a refusal the program makes while rendering (a stack reference, env.json)
            for problem in error.problems:
                assert PROBLEM_LINE.match(problem), f"problem names no field: {problem!r}"
        except KvpoolError as error:
            assert re.search(r"(motor-kvpool:\w+|[\w\]]+(\.[\w\[\]]+)+):? ", str(error)), f"names no field: {error}"


def test_the_examples_load_unmutated(project: Path) -> None:
    for stack, document in EXAMPLES.items():
        assert isinstance(load(project, document), ServiceSettings), stack
