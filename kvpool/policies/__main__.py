"""The motor-kvpool policy pack: `pulumi preview --policy-pack "$(kvpool policy-pack-dir)"`. Runs pack.py's pack and
nothing else (its constructor serves the analyzer protocol and blocks); the policies are in catalog.py, and
convert_once.py spares converting each resource once per policy. A clone's top-level policies/ runs the same
pack.py, as kvpool.policies.pack.

The engine runs this folder as a directory of scripts, wherever it is: inside an installed kvpool, in this
repository, or alone as `pulumi policy publish` ships it. Its modules import one another relatively, so the folder is
first loaded as a package of its own name, which needs nothing of kvpool beyond this folder."""

import importlib.util
import sys
from pathlib import Path

PACKAGE = "motor_kvpool_policy_pack"
_HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location(PACKAGE, _HERE / "__init__.py", submodule_search_locations=[str(_HERE)])
sys.modules[PACKAGE] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules[PACKAGE])

importlib.import_module(f"{PACKAGE}.pack").serve()
