"""The pack itself, built once wherever it runs: from this folder's __main__.py (an installed kvpool, `kvpool
policy-pack-dir`, or this folder shipped alone by `pulumi policy publish`) and from a clone's top-level policies/
(the design card's name, which imports this module as kvpool.policies.pack). Builds the pack and serves it: the
constructor serves the analyzer protocol and blocks."""

from pulumi_policy import EnforcementLevel, PolicyPack

from . import convert_once
from .catalog import POLICIES

NAME = "motor-kvpool"


def serve() -> None:
    convert_once.install()
    PolicyPack(name=NAME, policies=POLICIES, enforcement_level=EnforcementLevel.ADVISORY)
