"""Seed 000's store_mode standalone, as the newer Motor runs it (issue 44 item 1, docs/standalone-store.md): its node
manager starts mooncake_store_service in every engine container, so the store needs no container, the ascend transport
(the seed's default) is right, and it needs a Motor whose node manager has the Mooncake store service."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.motor_classes import REGISTRY, store_services
from tests.program_runs import deployer_folder, render
from tests.service_configs import mooncake_pool, problems_of

FUTURE_LINE = '    # Future: "mooncake": ["motor.node_manager.core.services.mooncake"],\n'


def checkout_with_registry(root: Path, motor_checkout: Path, registry: str | None) -> Path:
    """A Motor checkout at `root` (program_runs.deployer_folder) whose motor/ holds Motor's config classes (linked)
    and the node manager registry `registry` (None: none at all); returns its deployer folder."""
    motor = root / "motor-source" / "motor"
    motor.mkdir(parents=True)
    (motor / "config").symlink_to(motor_checkout / "motor" / "config")
    if registry is not None:
        (motor.parent / REGISTRY).parent.mkdir(parents=True)
        (motor.parent / REGISTRY).write_text(registry, encoding="utf-8")
    return deployer_folder(root / "checkout", motor.parent)


def motor_registry(motor_checkout: Path, with_mooncake: bool) -> str:
    """Motor 8919e55's registry, or the same with the mooncake entry the newer Motor has in place of its
    "Future:" comment (its motor/node_manager/core/services/registry.py, _DEFAULT_MODULE_MAP)."""
    text = (motor_checkout / REGISTRY).read_text(encoding="utf-8")
    assert FUTURE_LINE in text
    if with_mooncake:
        text = text.replace(FUTURE_LINE, '    "mooncake": ["motor.node_manager.core.services.mooncake.lifecycle"],\n')
    return text


def standalone() -> dict:
    """Seed 000's Mooncake table with store_mode standalone and nothing else changed: protocol stays ascend."""
    service = mooncake_pool()
    service["kv_cache_store_config"]["store_mode"] = "standalone"
    assert "protocol" not in service["kv_cache_store_config"]
    return service


def test_the_node_manager_registry_names_the_store_services_motor_can_start(motor_checkout, tmp_path):
    assert store_services(motor_checkout) == frozenset({"memcache"})  # 8919e55: "Future: mooncake"
    registry = motor_registry(motor_checkout, with_mooncake=True)
    newer = checkout_with_registry(tmp_path / "newer", motor_checkout, registry)
    assert store_services(newer.parent.parent) == frozenset({"memcache", "mooncake"})
    assert store_services(tmp_path / "none") == frozenset()


def test_the_seeds_standalone_store_on_the_ascend_transport_previews_clean_with_a_motor_that_runs_it(
        motor_checkout, tmp_path):
    service = standalone()
    service["motor_deployer_dir"] = str(
        checkout_with_registry(tmp_path, motor_checkout, motor_registry(motor_checkout, with_mooncake=True)))
    settings = load_from_pulumi_config(service, "svc")
    store = settings.user_config()["kv_cache_store_config"]
    assert (store["store_mode"], store["protocol"]) == ("standalone", "ascend")
    service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"  # one Deployment per instance, to read here
    rendered = render(service)
    spec = rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["vllm"]
    client = json.loads(rendered.get("ConfigMap", "mindie-motor-kv-client")["data"]["mooncake.json"])
    assert (client["protocol"], client["global_segment_size"]) == ("ascend", 0)


@pytest.mark.parametrize("registry", ["8919e55", "none"])
def test_a_standalone_store_is_refused_where_the_deployed_motor_starts_none(registry, motor_checkout, tmp_path):
    service = standalone()
    text = motor_registry(motor_checkout, with_mooncake=False) if registry == "8919e55" else None
    service["motor_deployer_dir"] = str(checkout_with_registry(tmp_path, motor_checkout, text))
    found = "memcache" if registry == "8919e55" else "none"
    assert problems_of(service) == [
        f"kv_cache_store_config.store_mode: is 'standalone', but the node manager of Motor at {tmp_path}/checkout starts "
        f"no Mooncake store process (its motor/node_manager/core/services/registry.py registers store services for: "
        f"{found}), so the engines, whose mooncake.json contributes 0 bytes in this mode, would leave the pool empty; "
        "deploy a Motor whose node manager has the Mooncake store service "
        "(motor/node_manager/core/services/mooncake/lifecycle.py) and point motor_deployer_dir at its "
        "examples/deployer, or write store_mode: embedded."
    ]


def test_motor_8919e55_itself_is_refused_for_a_standalone_store(motor_checkout, tmp_path):
    """The conformance target: its deployer folder (read-only checkout: copied) with its own registry."""
    deployer = tmp_path / "motor" / "examples" / "deployer"
    shutil.copytree(motor_checkout / "examples" / "deployer", deployer)
    (tmp_path / "motor" / "motor").symlink_to(motor_checkout / "motor")
    service = standalone()
    service["motor_deployer_dir"] = str(deployer)
    with pytest.raises(SettingsError) as caught:
        load_from_pulumi_config(service, "svc")
    assert [problem.partition(",")[0] for problem in caught.value.problems] == [
        "kv_cache_store_config.store_mode: is 'standalone'"
    ]


def test_an_embedded_store_needs_no_store_service(motor_checkout, tmp_path):
    service = mooncake_pool()
    service["motor_deployer_dir"] = str(
        checkout_with_registry(tmp_path, motor_checkout, motor_registry(motor_checkout, with_mooncake=False)))
    load_from_pulumi_config(service, "svc")
