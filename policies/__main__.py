"""The motor-kvpool policy pack: `pulumi preview --policy-pack policies`. Builds the pack and nothing else
(the constructor serves the analyzer protocol and blocks); the policies are in catalog.py."""

from pulumi_policy import EnforcementLevel, PolicyPack

from catalog import POLICIES

PolicyPack(name="motor-kvpool", policies=POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
