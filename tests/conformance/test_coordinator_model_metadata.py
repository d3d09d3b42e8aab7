"""The preview warns about max_model_len (kvpool/policies/rules/model_metadata.py) exactly when Motor's coordinator, loading
the user_config.json we render, logs that it could not build its model metadata: on every example stack, and on each
with max_model_len left out of one side or written in vLLM's dashed spelling."""

from __future__ import annotations

import copy
import json
from typing import Any

from kvpool.policies import rules
from tests.conformance.engine_server import run_motor
from tests.conformance.test_motor_boot import STACKS, user_config_of

FAILED = "Failed to build aigw model metadata"
DRIVER = r'''
import io, json, logging, sys
specs_path, results_path = sys.argv[1:3]
from motor.config.coordinator import CoordinatorConfig
captured = io.StringIO()
handler = logging.StreamHandler(captured)
logging.getLogger().addHandler(handler)
for logger in logging.Logger.manager.loggerDict.values():
    if isinstance(logger, logging.Logger):
        logger.addHandler(handler)
results = []
for path in json.load(open(specs_path, encoding="utf-8")):
    captured.seek(0)
    captured.truncate()
    config = CoordinatorConfig.from_json(path)
    results.append({"log": captured.getvalue(), "aigw": config.aigw_model})
json.dump(results, open(results_path, "w", encoding="utf-8"), default=str)
'''


def variants(user_config: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The file as rendered, without max_model_len on prefill, and with decode's in vLLM's dashed spelling."""
    found = {"as rendered": user_config}
    prefill = copy.deepcopy(user_config)
    prefill["motor_engine_prefill_config"]["engine_config"].pop("max_model_len", None)
    found["no prefill max_model_len"] = prefill
    dashed = copy.deepcopy(user_config)
    engine_config = dashed["motor_engine_decode_config"]["engine_config"]
    engine_config["max-model-len"] = engine_config.pop("max_model_len", 2048)
    found["decode max-model-len"] = dashed
    return found


def test_the_max_model_len_warning_is_motors_coordinator_failing(rendered, motor_build, tmp_path) -> None:
    cases = [(stack, name, config) for stack in STACKS for name, config in variants(user_config_of(rendered[stack])).items()]
    paths = []
    for number, (_, _, config) in enumerate(cases):
        path = tmp_path / f"user_config-{number}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        paths.append(str(path))
    results = run_motor(DRIVER, paths, motor_build, tmp_path)
    motor = {(stack, name): FAILED in result["log"] for (stack, name, _), result in zip(cases, results, strict=True)}
    ours = {(stack, name): bool(rules.check_max_model_len(config)) for stack, name, config in cases}
    assert ours == motor
    # Motor's coordinator did load each file: the metadata's sequence lengths are there when it built them.
    built = [result["aigw"] for (_, name, _), result in zip(cases, results, strict=True) if name == "as rendered"]
    assert all(metadata and metadata.get("p_max_seqlen") == 2048 for metadata in built), built
    assert sorted(key for key, failed in motor.items() if failed) == [(stack, "no prefill max_model_len") for stack in sorted(STACKS)]
