"""The motor-kvpool policy pack, run as the Pulumi CLI runs it (its own process, the analyzer gRPC protocol), for
what only that shows: the pack and its policies as the CLI lists them, the example stacks passing every policy,
a mandatory violation reported as such and stopping a preview, and `--policy-pack-config` thresholds and levels
applied. Each policy on its own, with one change per test, is tested in-process (tests/test_policies_in_process.py);
the words of each message in tests/test_rules*.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from kvpool.cli.engine.mock_engine import ProgramRun
from kvpool.cli.engine.stack_config import StackConfig
from kvpool.cli.policy_host.runner import run_policy_pack
from kvpool.cli.preview import PolicyViolationError, preview
from tests.policy_fixtures import PACK, POLICY_COUNT, edit_user_config, kv, program
from tests.program_runs import PROJECT_DIR
from tests.wheel import VERSION, build_wheel, install_requirements

EVICTION = "kvpool-configure-sustainable-mooncake-eviction"


def violations(run: ProgramRun, config: StackConfig, policy_config: dict | None = None) -> list[tuple[str, str, str]]:
    """(policy, level, resource label) of every violation the pack reported."""
    report = run_policy_pack(PACK, run, config, policy_config)
    return [(v.policy_name, v.enforcement_level, v.resource_label) for v in report.violations]


def test_pack_lists_every_policy_with_its_level():
    run, config = program("dev")
    report = run_policy_pack(PACK, run, config)
    assert (report.pack_name, report.pack_version) == ("motor-kvpool", VERSION)
    assert len(report.policies) == POLICY_COUNT
    assert sorted(p.name for p in report.policies if p.enforcement_level == "advisory") == [
        "kvpool-configure-block-lifetime", "kvpool-configure-layerwise-pool-patch",
        "kvpool-configure-memcache-long-context-shm", "kvpool-configure-sustainable-mooncake-eviction",
    ]


@pytest.mark.parametrize(
    "stack", ["dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "service-set", "service-a", "ucm", "kv-affinity"]
)
def test_example_stacks_pass_every_policy(stack):
    assert violations(*program(stack)) == []


def test_a_mandatory_violation_is_reported_mandatory_on_its_resource():
    run, config = program("dev")
    changed = edit_user_config(run, lambda uc: kv(uc, "prefill").update(kv_role="kv_consumer"))
    report = run_policy_pack(PACK, changed, config)
    assert [(v.policy_name, v.enforcement_level, v.resource_label) for v in report.mandatory] == [
        ("kvpool-configure-kv-role-by-side", "mandatory", "kubernetes:core/v1:ConfigMap control-plane-motor-config")
    ]


def test_sustainable_eviction_is_advisory_and_its_thresholds_are_configuration():
    run, config = program("mooncake-layerwise")
    seeds_values = edit_user_config(
        run, lambda uc: uc["kv_cache_store_config"].update(eviction_high_watermark_ratio=0.9, eviction_ratio=0.1)
    )
    assert [(name, level) for name, level, _ in violations(seeds_values, config)] == [(EVICTION, "advisory")]
    relaxed = {EVICTION: {"maxHighWatermark": 0.95, "minEvictionRatio": 0.05}}
    assert violations(seeds_values, config, relaxed) == []
    strict = {EVICTION: {"enforcementLevel": "mandatory"}}
    assert [level for _, level, _ in violations(seeds_values, config, strict)] == ["mandatory"]


def test_a_mandatory_violation_stops_the_preview_and_writes_nothing(tmp_path: Path):
    """The shipped example (0.6/0.4) under a stricter threshold made mandatory: `kvpool preview` stops on it."""
    strict = {EVICTION: {"enforcementLevel": "mandatory", "maxHighWatermark": 0.5}}
    with pytest.raises(PolicyViolationError) as stopped:
        preview(PROJECT_DIR, "mooncake-layerwise", tmp_path, policy_pack=PACK, policy_config=strict)
    assert [(v.policy_name, v.enforcement_level) for v in stopped.value.report.mandatory] == [(EVICTION, "mandatory")]
    assert list(tmp_path.iterdir()) == []


TEAM_PACK = '''\
from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

from kvpool.policies import convert_once
from kvpool.policies.catalog import POLICIES


def images_from_our_registry(args, report_violation):
    if args.resource_type == "kubernetes:apps/v1:Deployment":
        for container in args.props["spec"]["template"]["spec"]["containers"]:
            if not container["image"].startswith("registry.local/"):
                report_violation(f"{container['name']}: {container['image']} is not from registry.local")


convert_once.install()
PolicyPack(
    name="team-pack",
    policies=[*POLICIES, ResourceValidationPolicy(name="team-images-from-our-registry",
                                                  description="Images come from our registry.",
                                                  validate=images_from_our_registry)],
    enforcement_level=EnforcementLevel.MANDATORY,
)
'''


def test_a_teams_own_pack_runs_motor_kvpools_policies_beside_its_own(tmp_path: Path):
    """A pulumi_policy pack of a team's own, in its own virtualenv with the wheel installed from its
    requirements.txt, lists motor-kvpool's POLICIES with its own policy and reports both."""
    pack = tmp_path / "team-pack"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("version: 1.0.0\nruntime: python\n")
    (pack / "requirements.txt").write_text(f"motor-kvpool=={VERSION}\n")
    (pack / "__main__.py").write_text(TEAM_PACK)
    venv = install_requirements(pack, build_wheel(tmp_path / "wheel").parent)
    run, config = program("dev")
    changed = edit_user_config(run, lambda uc: kv(uc, "prefill").update(kv_role="kv_consumer"))
    report = run_policy_pack(pack, changed, config, python=str(venv / "bin" / "python"))
    assert (report.pack_name, report.pack_version) == ("team-pack", "1.0.0")
    assert len(report.policies) == POLICY_COUNT + 1  # the team's own beside ours
    assert sorted((v.policy_name, v.enforcement_level, v.resource_label) for v in report.mandatory) == [
        ("kvpool-configure-kv-role-by-side", "mandatory", "kubernetes:core/v1:ConfigMap control-plane-motor-config"),
        *[("team-images-from-our-registry", "mandatory", f"kubernetes:apps/v1:Deployment {name}") for name in
          ("control-plane-mindie-motor-controller", "control-plane-mindie-motor-coordinator", "decode-vllm-d0",
           "kv-store-mindie-motor-kv-store", "prefill-vllm-p0")],
    ]
