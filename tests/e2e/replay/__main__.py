"""A Pulumi program that registers a recorded program run (kvpool.cli.engine.mock_engine.ProgramRun) as it was recorded:
each resource with its type, name, parent, inputs, secrets and options, and the run's exports. The policy-case
test of tests/e2e runs `pulumi preview --policy-pack` on it, so the engine's pack sees exactly the resources the
offline pack runner saw (a case edits what the real program rendered; no stack config can produce the edit).

Reads `run.json` beside it: {"resources": [...], "outputs": {...}}, resources parents first."""

import json
from pathlib import Path

import pulumi

RUN = json.loads((Path(__file__).parent / "run.json").read_text())


def with_secrets(value, paths):
    """The value with each secret path wrapped as a secret Output, as the program marked it."""
    for path in paths:
        holder = value
        for step in path[:-1]:
            holder = holder[step]
        holder[path[-1]] = pulumi.Output.secret(holder[path[-1]])
    return value


def type_and_name(urn):
    """(type, name) of a URN: a parent is found by these (a recorded URN may spell its own parent chain otherwise)."""
    qualified_type, name = urn.split("::", 3)[2:4]
    return qualified_type.split("$")[-1], name


registered = {}
for resource in RUN["resources"]:
    parent = registered.get(type_and_name(resource["parent_urn"])) if resource["parent_urn"] else None
    options = pulumi.ResourceOptions(parent=parent, protect=resource["protect"],
                                     retain_on_delete=resource["retain_on_delete"])
    inputs = with_secrets(resource["inputs"], resource["secret_paths"])
    kind = pulumi.CustomResource if resource["custom"] else pulumi.ComponentResource
    key = (resource["type"], resource["name"])
    assert key not in registered, f"two resources {key}: the replay finds parents by type and name"
    if resource["type"] == "pulumi:pulumi:StackReference":
        # A read of another stack's outputs (the program's own last ones, or an owner's), which no policy checks: the
        # replay's project and backend hold no such stack to read.
        continue
    registered[key] = kind(resource["type"], resource["name"], inputs, options)

for name, value in RUN["outputs"].items():
    pulumi.export(name, value)
