"""Property: any configuration either loads or fails with a SettingsError whose every line starts with the
dotted path of a field that exists in the model or in the input."""

from __future__ import annotations

import copy
import re

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kvpool.errors import SettingsError
from kvpool.settings.loader import PULUMI_CONFIG_KEYS, _unwrap, load_from_pulumi_config
from kvpool.settings.service import PROJECT, ServiceSettings
from tests.service_configs import memcache_pool, mooncake_pool, plain_pd

# Keys look like config keys (so that a path in a message can be told apart from the prose after it).
key_text = st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,9}", fullmatch=True)
json_scalars = st.none() | st.booleans() | st.integers(-70000, 70000) | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(key_text, inner, max_size=3),
    max_leaves=8,
)
def _field_names() -> list[str]:
    """Every key the model knows, so that mutations hit real fields as well as unknown ones."""
    names: set[str] = set()
    pending = [ServiceSettings]
    seen = set()
    while pending:
        model = pending.pop()
        if model in seen:
            continue
        seen.add(model)
        names.update(model.model_fields)
        for field in model.model_fields.values():
            pending.extend(_unwrap(field.annotation))
    return sorted(names)


FIELD_NAMES = _field_names()
keys = st.sampled_from(FIELD_NAMES) | key_text
bases = st.sampled_from([plain_pd, memcache_pool, mooncake_pool])


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


@st.composite
def mutated_services(draw):
    service = copy.deepcopy(draw(bases)())
    for _ in range(draw(st.integers(1, 4))):
        paths = list(_paths(service))
        path = draw(st.sampled_from(paths))
        holder = service
        for element in path[:-1]:
            holder = holder[element]
        action = draw(st.sampled_from(["replace", "add", "delete"]))
        if not path:
            service[draw(keys)] = draw(json_values)
        elif action == "replace":
            holder[path[-1]] = draw(json_values)
        elif action == "delete" and isinstance(holder, dict):
            del holder[path[-1]]
        elif isinstance(holder, dict):
            holder[draw(keys)] = draw(json_values)
    return service


TOP_LEVEL = {*PULUMI_CONFIG_KEYS, "kv_cache_pool_config"}
LEADING_PATH = re.compile(r"^(?:motor-kvpool:)?([A-Za-z0-9_.\-\[\]]+)")


def _input_keys(node) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _input_keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _input_keys(value)}
    return set()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_services())
def test_random_configurations_load_or_name_a_field(service):
    try:
        load_from_pulumi_config(service, "svc")
    except SettingsError as error:
        assert error.problems, "a SettingsError must carry at least one problem"
        known = {*FIELD_NAMES, *_input_keys(service)}
        for problem in error.problems:
            path = LEADING_PATH.match(problem)
            assert path, problem
            steps = [step for step in re.split(r"\.|\[\d+\]", path.group(1)) if step]
            assert steps[0] in TOP_LEVEL or problem.startswith(f"{PROJECT}:"), problem
            assert all(step in known for step in steps), problem
