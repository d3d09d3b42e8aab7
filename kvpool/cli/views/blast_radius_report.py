"""The blast radius as `python -m kvpool diff` prints it: the details, then one summary line.

What the text reports is computed by kvpool/cli/views/blast_radius.py.
"""

from __future__ import annotations

from kvpool.cli.views.blast_radius import BlastRadius, RolePlan

MAX_PATHS = 6  # per workload line; the rest is counted


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def pool_verdict(result: BlastRadius) -> str:
    if not result.has_pool:
        return "no KV pool"
    if result.pool_emptied:
        return f"KV pool is emptied ({', '.join(f'{r.workload.name} {r.how}' for r in result.pool_emptied)})"
    if result.pool_shares_lost:
        return f"KV pool loses the share of {', '.join(name for name, _ in result.pool_shares_lost)}"
    shorts = list(dict.fromkeys(r.short for r in result.pool_kept))
    return "KV pool keeps its contents" + (f" ({', '.join(shorts)})" if shorts else "")


def waves_text(plan: RolePlan) -> str:
    """`2 waves of 2`, `3 waves (2, 2, 1)`."""
    sizes = [len(wave) for wave in plan.waves]
    shape = f"of {sizes[0]}" if len(set(sizes)) == 1 else f"({', '.join(map(str, sizes))})"
    return f"{_plural(len(sizes), 'wave')} {shape}"


def plan_line(plan: RolePlan) -> str:
    """`prefill: 2 waves of 2 (vllm-p0, vllm-p1, then vllm-p2, vllm-p3); 2 of 4 keep serving`."""
    if plan.by_operator:
        return (f"{plan.side}: {', '.join(plan.waves[0])} rolls as the InferServiceSet operator decides "
                "(deploy_mode infer_service_set)")
    order = ", then ".join(", ".join(wave) for wave in plan.waves)
    stops = ": the role stops until a new instance is Ready" if plan.keep == 0 else ""
    return f"{plan.side}: {waves_text(plan)} ({order}); {plan.keep} of {plan.running} keep serving{stops}"


def summary(result: BlastRadius) -> str:
    """`Blast radius: 2 workloads roll (vllm-p0, vllm-p1: engine-config), 0 replaced; KV pool keeps its contents.`"""
    groups: dict[str, list[str]] = {}
    for roll in result.rolls:
        groups.setdefault(roll.why, []).append(roll.workload.name)
    rolls = f"{_plural(len(result.rolls), 'workload')} roll{'s' if len(result.rolls) == 1 else ''}"
    if groups:
        rolls += " (" + "; ".join(f"{', '.join(names)}: {why}" for why, names in groups.items()) + ")"
    parts = [rolls, f"{len(result.replaced)} replaced"
             + (f" ({', '.join(r.name for r in result.replaced)})" if result.replaced else "")]
    for word, found in (("created", result.created), ("deleted", result.deleted)):
        if found:
            parts.append(f"{_plural(len(found), 'workload')} {word} ({', '.join(w.name for w in found)})")
    roll_order = "".join(
        f"; {plan.side} rolls in {_plural(len(plan.waves), 'wave')} keeping {plan.keep} of {plan.running}"
        for plan in result.role_plans if not plan.by_operator
    )
    return f"Blast radius: {', '.join(parts)}{roll_order}; {pool_verdict(result)}."


def _paths_text(paths: list[str]) -> str:
    shown = paths[:MAX_PATHS]
    more = len(paths) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


def report(result: BlastRadius) -> list[str]:
    """The section `kvpool diff` prints: details when anything restarts or is replaced, then the summary line."""
    lines = []
    if result.rolls:
        lines.append("Workloads that roll (pod template changed):")
        for roll in result.rolls:
            reasons = [", ".join(roll.input_changes)] if roll.input_changes else []
            if roll.paths:
                reasons.append(_paths_text([path for path, _ in roll.paths]))
            lines.append(f"  {roll.workload.label}: {'; '.join(reasons)}")
    if result.replaced:
        lines.append("Objects replaced (deleted, then created; pulumi-kubernetes cannot update these fields):")
        for replacement in result.replaced:
            switch = f" (updated in place if the provider sets {replacement.switch})" if replacement.switch else ""
            lines.append(f"  {replacement.label}: {_paths_text(list(replacement.paths))}{switch}")
    if result.role_plans:
        lines.append("Engines roll in waves (rollout.<role>.max_unavailable_instances; a wave starts when the one "
                     "before is Ready):")
        lines += [f"  {plan_line(plan)}" for plan in result.role_plans]
    if result.created:
        lines.append(f"Workloads created: {', '.join(w.label for w in result.created)}")
    if result.deleted:
        lines.append(f"Workloads deleted: {', '.join(w.label for w in result.deleted)}")
    impact = []
    if result.dropped_requests:
        impact.append(f"drops in-flight requests on {', '.join(result.dropped_requests)}")
    if result.has_pool:
        for restart in result.pool_emptied:
            impact.append(f"the KV pool is emptied: {restart.workload.label} {restart.how}; {restart.why}")
        for restart in result.pool_kept:
            impact.append(f"the KV pool keeps its contents: {restart.workload.label} {restart.how}; {restart.why}")
        for name, why in result.pool_shares_lost:
            impact.append(f"the KV pool loses the share of {name}: {why}")
    if impact:
        lines.append("Impact:")
        lines += [f"  {line}" for line in impact]
    lines.append(summary(result))
    return lines
