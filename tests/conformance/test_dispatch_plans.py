"""The dispatch plan the rules read for a side (rules.dispatch_plan) is the one Motor's node manager advertises for
it (NodeManagerConfig._infer_dispatch_capabilities, run here from Motor's checkout), and the connector rules refuse
every prefill/decode pair that Motor's coordinator could not pair (has_compatible_dispatch_pair)."""

from __future__ import annotations

import itertools
from typing import Any

from kvpool.policies import rules
from tests.conformance.engine_server import run_motor

DRIVER = r'''
import json, sys
specs_path, results_path = sys.argv[1:3]
from motor.config.node_manager import NodeManagerConfig
from motor.common.resources.dispatch import has_compatible_dispatch_pair
from types import SimpleNamespace
specs = json.load(open(specs_path, encoding="utf-8"))
results = []
for section in specs["sections"]:
    try:
        results.append({"capabilities": NodeManagerConfig._infer_dispatch_capabilities(section)})
    except ValueError as error:
        results.append({"refused": str(error)})
pairs = []
for p, d in specs["pairs"]:
    prefill, decode = results[p], results[d]
    if "refused" in prefill or "refused" in decode:
        pairs.append(False)
        continue
    pairs.append(has_compatible_dispatch_pair([SimpleNamespace(dispatch_capabilities=prefill["capabilities"])],
                                              [SimpleNamespace(dispatch_capabilities=decode["capabilities"])]))
json.dump([{"sections": results, "pairs": pairs}], open(results_path, "w", encoding="utf-8"))
'''
PLAN_OF_CAPABILITY = {"prefill_handoff_decode": "handoff", "concurrent_engine_sync": "trigger"}
CONNECTORS = ("MooncakeConnectorV1", "MooncakeHybridConnector", "MooncakeLayerwiseConnector", "NixlConnector",
              "P2pNcclConnector", " mooncakelayerwiseconnector ")
PROFILES = (None, "", "handoff", "Trigger", " bootstrap ", "prefill_handoff_decode", "concurrent_engine_sync",
            "unknown", "hand-off")


def section(connector: str, multi: bool, profile: str | None, profile_in_engine_config: bool) -> dict[str, Any]:
    transfer = {"kv_connector": connector}
    if multi:
        transfer = {"kv_connector": "MultiConnector", "kv_connector_extra_config": {"connectors": [
            transfer, {"kv_connector": "AscendStoreConnector"}]}}
    engine_config: dict[str, Any] = {"kv_transfer_config": transfer}
    found: dict[str, Any] = {"engine_type": "vllm", "engine_config": engine_config}
    if profile is not None:
        (engine_config if profile_in_engine_config else found)["dispatch_profile"] = profile
    return found


SECTIONS = [section(connector, multi, profile, inner)
            for connector, multi, profile, inner in itertools.product(CONNECTORS, (False, True), PROFILES, (False, True))
            if profile is not None or not inner]


def side_config(prefill: dict[str, Any], decode: dict[str, Any]) -> dict[str, Any]:
    return {"motor_engine_prefill_config": prefill, "motor_engine_decode_config": decode}


def test_each_sides_plan_is_the_one_motors_node_manager_advertises(motor_build, tmp_path) -> None:
    # Every 7th of the 41,616 pairs: 5,946, in one run of Motor's code.
    pairs = [[p, d] for p in range(len(SECTIONS)) for d in range(len(SECTIONS))][:: 7]
    [motor] = run_motor(DRIVER, {"sections": SECTIONS, "pairs": pairs}, motor_build, tmp_path)
    refused_by_motor = [i for i, result in enumerate(motor["sections"]) if "refused" in result]
    ours_refused = [i for i, found in enumerate(SECTIONS)
                    if any(f.path.endswith("dispatch_profile") and "refuses it at start" in f.message
                           for f in rules.check_dispatch_connector(side_config(found, SECTIONS[0])))]
    assert ours_refused == refused_by_motor and refused_by_motor  # 'hand-off' only, wherever it is written
    for index, (found, result) in enumerate(zip(SECTIONS, motor["sections"], strict=True)):
        if "refused" in result:
            continue
        advertised = [PLAN_OF_CAPABILITY[capability] for capability in result["capabilities"]]
        assert [rules.dispatch_plan(found)] == (advertised or [None]), (index, found)
    never_paired = [(p, d) for (p, d), paired in zip(pairs, motor["pairs"], strict=True) if not paired]
    assert len(never_paired) > 50
    for p, d in never_paired:
        config = side_config(SECTIONS[p], SECTIONS[d])
        kv = rules.kv_transfer_configs(config)
        assert rules.check_dispatch_connector(config) + rules.check_transfer_connectors_match(kv), (SECTIONS[p], SECTIONS[d])
