"""Each resource's properties converted once per analyzer call, not once per policy.

pulumi_policy converts a resource's properties from protobuf (json_format.MessageToDict, then
deserialize_properties) for every policy it runs on them: in `Analyze` once per resource policy, in `AnalyzeStack`
every resource once per stack policy (57 resources x 24 stack policies at 16P+16D, most of the pack's time). Within
one `Analyze` or `AnalyzeStack` call, `install()` makes the second and later conversions of the same message return
the first one's result. Each policy still gets its own properties: pulumi_policy wraps the result in a proxy that
copies every dict and list (proxy.py `_proxy_helper`) and never writes to it, so no policy sees another's.

Reaches into pulumi_policy's module `policy` (the names it calls), written for PULUMI_POLICY_VERSION, the version
policies/requirements.txt pins; tests/test_convert_once.py fails on another.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Callable

import pulumi_policy.policy
from google.protobuf import json_format
from pulumi_policy.deserialize import deserialize_properties

PULUMI_POLICY_VERSION = "1.21.0"
_CALLS = ("Analyze", "AnalyzeStack")
_this_call = threading.local()  # the gRPC server runs calls on a pool of threads: one memo per call's thread


class _JsonFormat:
    """json_format as pulumi_policy.policy calls it, MessageToDict remembered within a call."""

    def __getattr__(self, name: str) -> Any:
        return getattr(json_format, name)

    @staticmethod
    def MessageToDict(message: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (json_format's name)
        return _remembered(("MessageToDict", args, tuple(sorted(kwargs.items()))), message,
                           lambda: json_format.MessageToDict(message, *args, **kwargs))


def _deserialize_properties(props: dict[str, Any], proxy_secrets: bool = False) -> Any:
    return _remembered(("deserialize_properties", proxy_secrets), props,
                       lambda: deserialize_properties(props, proxy_secrets))


def _remembered(how: tuple[Any, ...], source: Any, convert: Callable[[], Any]) -> Any:
    """`convert()`, or what it returned for the same `source` object earlier in this call. The memo holds `source`
    itself, so its id cannot be reused by another object during the call."""
    memo = getattr(_this_call, "memo", None)
    if memo is None:
        return convert()
    key = (how, id(source))
    if key not in memo:
        memo[key] = (source, convert())
    return memo[key][1]


def _one_memo_per_call(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: Any, request: Any, context: Any) -> Any:
        _this_call.memo = {}
        try:
            return method(self, request, context)
        finally:
            _this_call.memo = None

    call.converts_once = True  # type: ignore[attr-defined]
    return call


def install() -> None:
    """Before the PolicyPack is built; installing twice changes nothing."""
    servicer = pulumi_policy.policy._PolicyAnalyzerServicer
    for name in _CALLS:
        method = getattr(servicer, name)
        if not getattr(method, "converts_once", False):
            setattr(servicer, name, _one_memo_per_call(method))
    pulumi_policy.policy.json_format = _JsonFormat()
    pulumi_policy.policy.deserialize_properties = _deserialize_properties
