"""pulumi preview --policy-pack kvpool/policies (and the clone's top-level policies/, the same pack): the pack's verdicts
under the real engine equal the offline ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.realengine import PulumiWorkspace
from tests.e2e.views import mandatory_names, offline_in_copy

pytestmark = pytest.mark.e2e

EVICTION_POLICY = "kvpool-configure-sustainable-mooncake-eviction"
PROTECTION_POLICY = "kvpool-enable-store-protection"


def test_policy_pack_mandatory_violation_fails_preview_as_offline(offline_stacks: PulumiWorkspace, e2e_tmp: Path) -> None:
    """dev declared a production stack: its unprotected store breaks the mandatory store-protection rule."""
    config = e2e_tmp / "production-dev.json"
    config.write_text(json.dumps({PROTECTION_POLICY: {"productionStacks": "dev"}}))
    offline = offline_in_copy(offline_stacks, "dev", "--policy-config", str(config))
    offline_text = offline.stdout + offline.stderr
    assert offline.returncode == 3, offline_text  # a mandatory policy violation
    want = mandatory_names(offline_text)
    assert PROTECTION_POLICY in want, offline_text
    # The package's folder, and the clone's top-level policies/ (the design card's name), which runs the same pack.
    for pack in ("kvpool/policies", "policies"):
        result = offline_stacks.run("preview", "-s", "dev", "--policy-pack", pack, "--policy-pack-config", str(config))
        assert result.returncode != 0, result.output[-4000:]
        assert "mandatory" in result.output
        for name in want:  # the same policy, with the same message as offline (the violation's first detail line)
            assert name in result.output, (pack, result.output[-6000:])
            detail = re.search(rf"\[mandatory\] {name}  [^\n]*\n    ([^\n]+)", offline_text)
            assert detail, offline_text
            assert " ".join(detail.group(1).split())[:80] in " ".join(result.output.split()), (detail.group(1), result.output)

        result = offline_stacks.run("preview", "-s", "dev", "--policy-pack", pack)  # default config: dev passes
        assert result.returncode == 0, (pack, result.output[-4000:])


def test_policy_pack_advisory_warns_and_config_applies(offline_stacks: PulumiWorkspace, e2e_tmp: Path) -> None:
    """mooncake-layerwise's eviction (0.6, 0.4) passes the pack's default thresholds; stricter thresholds given
    with --policy-pack-config make it an advisory warning, and then, raised to mandatory, a failure."""
    stack = "mooncake-layerwise"
    result = offline_stacks.run("preview", "-s", stack, "--policy-pack", "kvpool/policies")
    assert result.returncode == 0 and EVICTION_POLICY not in result.output, result.output[-4000:]

    thresholds = {"maxHighWatermark": 0.5, "minEvictionRatio": 0.3}
    advisory = e2e_tmp / "strict-thresholds.json"
    advisory.write_text(json.dumps({EVICTION_POLICY: thresholds}))
    offline = offline_in_copy(offline_stacks, stack, "--policy-config", str(advisory))
    assert offline.returncode == 0 and f"[advisory] {EVICTION_POLICY}" in offline.stdout + offline.stderr, (
        offline.stdout + offline.stderr
    )
    result = offline_stacks.run("preview", "-s", stack, "--policy-pack", "kvpool/policies", "--policy-pack-config", str(advisory))
    assert result.returncode == 0, result.output[-4000:]
    assert re.search(rf"\[advisory\][^\n]*{EVICTION_POLICY}", result.output), result.output[-4000:]

    mandatory = e2e_tmp / "strict-thresholds-mandatory.json"
    mandatory.write_text(json.dumps({EVICTION_POLICY: {"enforcementLevel": "mandatory", **thresholds}}))
    offline = offline_in_copy(offline_stacks, stack, "--policy-config", str(mandatory))
    assert offline.returncode == 3 and EVICTION_POLICY in mandatory_names(offline.stdout + offline.stderr)
    result = offline_stacks.run("preview", "-s", stack, "--policy-pack", "kvpool/policies", "--policy-pack-config", str(mandatory))
    assert result.returncode != 0, result.output[-4000:]
    assert re.search(rf"\[mandatory\][^\n]*{EVICTION_POLICY}", result.output), result.output[-4000:]
