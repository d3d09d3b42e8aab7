"""The design card's policies/ at the top of a clone (`pulumi preview --policy-pack policies`): a thin pack whose entry
point runs kvpool/policies/'s pack (the same POLICIES objects, kvpool.policies.catalog's, not a copy), with the same
manifest; and this repository's own `kvpool preview`, which now finds it as the project's policies/ pack, runs that
one pack once, with the same verdicts as the package's folder. tests/e2e/test_policy_pack_engine.py runs it under
the real CLI."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
import yaml

from kvpool.cli.preview import default_policy_pack, preview
from kvpool.policies import PACK_DIR
from tests.policy_fixtures import POLICY_COUNT
from tests.program_runs import PROJECT_DIR

TOP_LEVEL_PACK = PROJECT_DIR / "policies"

# Run as the CLI's shim runs a pack (in its folder, "." as the program), with the PolicyPack recorded, not served.
ENTRY_POINT = """\
import json, runpy, sys
import pulumi_policy
built = []
pulumi_policy.PolicyPack = lambda **kwargs: built.append(kwargs)
runpy.run_path(".", run_name="__main__")
import kvpool.policies.catalog as catalog
print(json.dumps({
    "built": len(built),
    "name": built[0]["name"],
    "same_objects": built[0]["policies"] is catalog.POLICIES,
    "catalog": catalog.__file__,
    "copies": sorted(name for name in sys.modules if name.startswith("motor_kvpool_policy_pack")),
}))
"""


def test_the_folder_is_a_pack_with_the_packages_manifest() -> None:
    assert sorted(path.name for path in TOP_LEVEL_PACK.iterdir() if path.name != "__pycache__") == [
        "PulumiPolicy.yaml", "__main__.py"]
    top, package = (yaml.safe_load((folder / "PulumiPolicy.yaml").read_text()) for folder in (TOP_LEVEL_PACK, PACK_DIR))
    assert top == package


def test_its_entry_point_runs_the_packages_policies_themselves_from_the_clone() -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", ENTRY_POINT], cwd=TOP_LEVEL_PACK, env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "built": 1,
        "name": "motor-kvpool",
        "same_objects": True,  # one module identity: kvpool.policies.catalog's POLICIES
        "catalog": str(PROJECT_DIR / "kvpool" / "policies" / "catalog.py"),  # the clone's, not an installed kvpool
        "copies": [],  # not the package folder loaded again under its standalone name
    }


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict:
    out = tmp_path_factory.mktemp("previews")
    return {
        name: preview(PROJECT_DIR, "dev", out / name, policy_pack=pack).policy_report
        for name, pack in (("default", default_policy_pack(PROJECT_DIR)), ("package", PACK_DIR))
    }


def test_this_projects_preview_runs_the_one_pack_once_as_the_packages_folder(reports: dict) -> None:
    assert default_policy_pack(PROJECT_DIR) == PROJECT_DIR / "policies"  # the project's own, the card's name
    default, package = reports["default"], reports["package"]
    assert default == package  # pack name and version, policies, every violation
    assert len(default.policies) == len({policy.name for policy in default.policies}) == POLICY_COUNT


def test_the_readmes_first_screen_maps_each_name_of_the_card_to_where_it_lives() -> None:
    readme = (PROJECT_DIR / "README.md").read_text(encoding="utf-8")
    first_screen = readme.split("\n## ", 1)[0]  # the title and what precedes the first section
    assert "| The card | Here |" in first_screen
    rows = re.findall(r"^\| `([^`]+)` \| `([^`]+)`", first_screen, flags=re.M)
    assert [card for card, _ in rows] == ["Pulumi.yaml", "__main__.py", "components/", "policies/", "stacks/", "tests/"]
    for card, here in rows:
        assert (PROJECT_DIR / here).exists(), (card, here)
        assert here.rstrip("/").endswith(card.rstrip("/")), (card, here)
