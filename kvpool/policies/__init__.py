"""The policy pack (this folder: PulumiPolicy.yaml, __main__.py), its policies (catalog.POLICIES) and the rules they
check (rules/, which the settings call too). Nothing is imported here: the program imports rules without pulumi_policy."""

from pathlib import Path

PACK_DIR = Path(__file__).resolve().parent
"""The pack's folder, for `pulumi preview --policy-pack` (`kvpool policy-pack-dir` prints it)."""
