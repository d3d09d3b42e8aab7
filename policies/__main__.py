"""The motor-kvpool policy pack: `pulumi preview --policy-pack policies`. Builds the pack and nothing else
(the constructor serves the analyzer protocol and blocks); the policies are in catalog.py, and convert_once.py
spares converting each resource once per policy."""

from pulumi_policy import EnforcementLevel, PolicyPack

import convert_once
from catalog import POLICIES

convert_once.install()

PolicyPack(name="motor-kvpool", policies=POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
