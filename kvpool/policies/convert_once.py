"""Each resource's properties converted once per analyzer call, not once per policy, and wrapped as they are read.

pulumi_policy converts a resource's properties from protobuf (json_format.MessageToDict, then
deserialize_properties) for every policy it runs on them, and wraps every dict and list of them in its
unknown-checking proxies up front: in `Analyze` once per resource policy, in `AnalyzeStack` every resource once per
stack policy (57 resources x 24 stack policies at 16P+16D, most of the pack's time), though a policy reads a few
fields of most resources. Within one `Analyze` or `AnalyzeStack` call, `install()` makes the second and later
conversions of the same message return the first one's result, and wraps each dict or list when a policy first
reads it (_DictOnRead, _ListOnRead: pulumi_policy's proxies' behaviour, unknown values raising UnknownValueError
with the same path). Each policy still gets its own properties: a wrapper copies its dict or list before handing
anything out, so what one policy writes no other policy sees, and the converted result is never written to.
Outside those calls (Remediate, whose results pulumi_policy serializes through its own proxy types) nothing changes.

Reaches into pulumi_policy's module `policy` (the names it calls), written for PULUMI_POLICY_VERSION, the version
kvpool/policies/requirements.txt pins; tests/test_convert_once.py fails on another.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterator

import pulumi_policy.policy
from google.protobuf import json_format
from pulumi_policy import proxy
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

PULUMI_POLICY_VERSION = "1.21.0"
_CALLS = ("Analyze", "AnalyzeStack")
_UNKNOWN_SENTINELS = frozenset((
    proxy.UNKNOWN_BOOLEAN_VALUE, proxy.UNKNOWN_NUMBER_VALUE, proxy.UNKNOWN_STRING_VALUE, proxy.UNKNOWN_ARRAY_VALUE,
    proxy.UNKNOWN_ASSET_VALUE, proxy.UNKNOWN_ARCHIVE_VALUE, proxy.UNKNOWN_OBJECT_VALUE,
))
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


def _unknown_checking_proxy(props: dict[str, Any]) -> Any:
    if getattr(_this_call, "memo", None) is None:
        return unknown_checking_proxy(props)
    return _DictOnRead(props, [])


def _on_read(value: Any, path: list[str]) -> Any:
    if isinstance(value, dict):
        return _DictOnRead(value, path)
    if isinstance(value, list):
        return _ListOnRead(value, path)
    return value


def _checked(value: Any, path: list[str]) -> Any:
    """The value, or UnknownValueError naming its path when a preview cannot know it (the sentinels' strings)."""
    if isinstance(value, str) and value in _UNKNOWN_SENTINELS:
        raise UnknownValueError(value, path)
    return value


class _DictOnRead(Mapping):
    """pulumi_policy's _DictProxy over a copy of `source`, each dict or list value wrapped when first read."""

    def __init__(self, source: dict[str, Any], path: list[str]) -> None:
        self._target = dict(source)
        self._path = path

    def _wrapped(self, key: Any) -> Any:
        value = self._target[key]
        if isinstance(value, (dict, list)):
            value = self._target[key] = _on_read(value, [*self._path, str(key)])
        return value

    def __getitem__(self, key: Any) -> Any:
        if key == "__target":
            for name in self._target:
                self._wrapped(name)
            return self._target
        return _checked(self._wrapped(key), [*self._path, str(key)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._target[key] = value

    def __len__(self) -> int:
        return len(self._target)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._target)


class _ListOnRead(Sequence):
    """pulumi_policy's _ListProxy over a copy of `source`, each dict or list item wrapped when first read."""

    def __init__(self, source: list[Any], path: list[str]) -> None:
        self._target = list(source)
        self._path = path

    def _wrapped(self, index: int) -> Any:
        value = self._target[index]
        if isinstance(value, (dict, list)):
            value = self._target[index] = _on_read(value, [*self._path, str(index % len(self._target))])
        return value

    def __getitem__(self, key: Any) -> Any:
        if key == "__target":
            for index in range(len(self._target)):
                self._wrapped(index)
            return self._target
        if isinstance(key, slice):  # as the proxy's list slice: the items, unchecked
            return [self._wrapped(index) for index in range(*key.indices(len(self._target)))]
        return _checked(self._wrapped(key), [*self._path, str(key)])

    def __len__(self) -> int:
        return len(self._target)


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
    pulumi_policy.policy.unknown_checking_proxy = _unknown_checking_proxy
