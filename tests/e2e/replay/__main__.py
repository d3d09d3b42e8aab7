"""A Pulumi program that registers a recorded program run (kvpool.mock_engine.ProgramRun) as it was recorded:
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


registered = {}
for resource in RUN["resources"]:
    options = pulumi.ResourceOptions(parent=registered.get(resource["parent_urn"]), protect=resource["protect"],
                                     retain_on_delete=resource["retain_on_delete"])
    inputs = with_secrets(resource["inputs"], resource["secret_paths"])
    if resource["custom"]:
        registered[resource["urn"]] = pulumi.CustomResource(resource["type"], resource["name"], inputs, options)
    else:
        registered[resource["urn"]] = pulumi.ComponentResource(resource["type"], resource["name"], inputs, options)

for name, value in RUN["outputs"].items():
    pulumi.export(name, value)
