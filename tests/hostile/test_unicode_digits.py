"""Digits other than ASCII's (superscripts, Arabic-Indic, full-width, mathematical): str.isdigit() takes them, int()
refuses some and reads others, so a port or a size written with them crashed a check or passed as a number. Each is
refused naming the field, in a stack's settings and in an owner's outputs."""

from __future__ import annotations

import json

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from tests.program_runs import render, stack_values
from tests.service_configs import memcache_pool, problems_of
from tests.test_shared_store import A, B

# int() refuses the first and reads the others as 3000
DIGITS = ["²", "٣٠٠٠", "３０００", "𝟑𝟎𝟎𝟎"]


@pytest.mark.parametrize("digits", DIGITS)
def test_a_role_port_in_other_digits_is_no_port(digits: str) -> None:
    service = memcache_pool()
    service["motor_controller_config"] = {"api_config": {"controller_api_port": digits}}
    assert problems_of(service) == [
        f"motor_controller_config.api_config.controller_api_port: {digits!r} is not a port number (1-65535)."]


@pytest.mark.parametrize("digits", DIGITS)
def test_a_mooncake_size_in_other_digits_is_no_size(digits: str) -> None:
    service = memcache_pool()
    service["kv_cache_store_config"] = {"backend": "mooncake", "global_segment_size": digits}
    assert f"kv_cache_store_config.global_segment_size: {digits!r} is not a size such as 1GB, 512MB or a number of " \
           "bytes" in problems_of(service)


@pytest.mark.parametrize("digits", ["٥٠٠٨٩", "５００８９"])
def test_an_owner_port_in_other_digits_is_refused(digits: str) -> None:
    owner = render(stack_values("service-a"), stack="service-a").run.outputs
    forged = json.loads(json.dumps(owner).replace(":50089", f":{digits}"))
    with pytest.raises(ProgramError) as caught:
        render(stack_values("service-b"), stack="service-b", stack_references={A: forged})
    assert str(caught.value).splitlines() == [
        f"{B} cannot use the KV store of {A}:",
        f"  - {A}'s kv_store.client_files['mmc-local.conf'].ock.mmc.local_service.config_store_url: must be "
        "tcp://mindie-motor-kvs-master.service-a.svc.cluster.local:<port>",
    ]
