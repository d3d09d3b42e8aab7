"""What Motor's coordinator reads about the model from the engine sections."""

from __future__ import annotations

from typing import Any, Mapping

from .sections import SIDES, Finding, engine_section


def check_max_model_len(user_config: Mapping[str, Any]) -> list[Finding]:
    """max_model_len on both sides (vLLM's `max-model-len` spelling too, as Motor normalizes keys): without it Motor's
    coordinator builds no model metadata for its gateway (motor/config/coordinator.py, AIGW: the prefill and decode
    max sequence lengths) and logs "Failed to build aigw model metadata" each time it loads its config."""
    findings = []
    for side in SIDES:
        engine_config = (user_config.get(engine_section(side)) or {}).get("engine_config") or {}
        if not any(key.replace("-", "_") == "max_model_len" for key in engine_config):
            findings.append(Finding(
                f"{engine_section(side)}.engine_config.max_model_len",
                "is unset: Motor's coordinator then builds no model metadata (its gateway's max sequence lengths) "
                "and logs \"Failed to build aigw model metadata\" each time it loads its config; set it to the "
                "context length the engines serve, e.g. max_model_len: 32768.",
            ))
    return findings
