"""Property: any configuration either loads or fails with a SettingsError whose every line names a field."""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from components.errors import SettingsError
from components.settings import PROJECT, PULUMI_CONFIG_KEYS, ServiceSettings, _unwrap, load_from_pulumi_config
from tests.service_configs import memcache_pool, mooncake_pool, plain_pd

json_scalars = st.none() | st.booleans() | st.integers(-70000, 70000) | st.floats(allow_nan=False) | st.text(max_size=12)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
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
keys = st.sampled_from(FIELD_NAMES) | st.text(min_size=1, max_size=10)
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


FIELD_PATH_START = tuple(f"{key}" for key in PULUMI_CONFIG_KEYS) + (f"{PROJECT}:", "kv_cache_pool_config", "version")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_services())
def test_random_configurations_load_or_name_a_field(service):
    try:
        load_from_pulumi_config(service, "svc")
    except SettingsError as error:
        assert error.problems, "a SettingsError must carry at least one problem"
        for problem in error.problems:
            assert problem.startswith(FIELD_PATH_START), problem
