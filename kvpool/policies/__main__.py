"""The motor-kvpool policy pack: `pulumi preview --policy-pack "$(kvpool policy-pack-dir)"`. Builds the pack and
nothing else (the constructor serves the analyzer protocol and blocks); the policies are in catalog.py, and
convert_once.py spares converting each resource once per policy.

The engine runs this folder as a directory of scripts, wherever it is: inside an installed kvpool, in this
repository, or alone as `pulumi policy publish` ships it. Its modules import one another relatively, so the folder is
first loaded as a package of its own name, which needs nothing of kvpool beyond this folder."""

import importlib.util
import sys
from pathlib import Path

from pulumi_policy import EnforcementLevel, PolicyPack

PACKAGE = "motor_kvpool_policy_pack"
_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(PACKAGE, _HERE / "__init__.py", submodule_search_locations=[str(_HERE)])
sys.modules[PACKAGE] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules[PACKAGE])

convert_once = importlib.import_module(f"{PACKAGE}.convert_once")
POLICIES = importlib.import_module(f"{PACKAGE}.catalog").POLICIES

convert_once.install()

PolicyPack(name="motor-kvpool", policies=POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
