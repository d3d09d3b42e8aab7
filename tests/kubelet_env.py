"""The kubelet's `$(VAR)` expansion, the oracle the env tests compare with: env values (kubelet_pods.go
makeEnvironmentVariables), a container's command and args (ExpandContainerCommandAndArgs) and exec probe commands
(ExpandContainerCommandOnlyStatic); a lifecycle hook's exec command is run as written (lifecycle/handlers.go).
Ported line by line from third_party/forked/golang/expansion/expand.go, independent of kvpool/internal/motor_env.py."""

from __future__ import annotations

from typing import Any, Mapping


def kubelet_expand(text: str, mapping: Mapping[str, str]) -> str:
    """expansion.Expand with MappingFuncFor(mapping): a line-by-line port of the Go code."""
    out, checkpoint, cursor = [], 0, 0
    while cursor < len(text):
        if text[cursor] == "$" and cursor + 1 < len(text):
            out.append(text[checkpoint:cursor])
            rest = text[cursor + 1:]
            if rest[0] == "$":
                read, is_var, advance = "$", False, 1
            elif rest[0] == "(":
                closer = rest.find(")", 1)
                read, is_var, advance = (rest[1:closer], True, closer + 1) if closer != -1 else ("$(", False, 1)
            else:
                read, is_var, advance = "$" + rest[0], False, 1
            out.append(mapping.get(read, f"$({read})") if is_var else read)
            cursor += advance
            checkpoint = cursor + 1
        cursor += 1
    return "".join(out) + text[checkpoint:]


def static_env(container: Mapping[str, Any]) -> dict[str, str]:
    """v1EnvVarsToMap: each env entry's `value` as written (a valueFrom entry's is ""), the mapping an exec probe's
    command is expanded with."""
    return {entry["name"]: entry.get("value", "") for entry in container.get("env") or []}
