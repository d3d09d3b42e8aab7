"""The floor's policy pack: one resource policy that checks nothing (pulumi_policy refuses a pack without a
policy), so that `--policy-pack` on the floor costs what the Python policy protocol costs and nothing else: the
pack's process and its imports, the engine's Remediate and Analyze round trips per resource, one AnalyzeStack."""

from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy


def _check_nothing(args, report_violation) -> None:  # noqa: ARG001 (the validator's signature)
    return None


PolicyPack(
    name="floor-empty",
    policies=[ResourceValidationPolicy(name="checks-nothing", description="Checks nothing.", validate=_check_nothing)],
    enforcement_level=EnforcementLevel.ADVISORY,
)
