"""What the e2e tests read: the offline preview's tree and manifests, the engine's `--json` preview, `kvpool diff`,
and the API server's objects compared with ours."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

from kvpool.policies.rules import K8S_QUANTITY, k8s_quantity_bytes
from tests.e2e.realengine import REPO, Cluster, PulumiWorkspace

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "stacks").glob("Pulumi.*.yaml"))
CONSUMERS = {"service-b": "service-a"}
"""Stacks whose store is another stack's: previewed once their provider stack is up."""

Resource = tuple[str, str, str]  # (type, name, parent "type::name" or "")



def offline_preview(stack: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "preview", "--stack", stack, "--out", str(out), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def offline_in_copy(workspace: PulumiWorkspace, stack: str, *extra: str) -> subprocess.CompletedProcess:
    """`python -m kvpool preview` of the workspace's copy of the project."""
    return offline_in_copy_to(workspace, stack, workspace.root / "kvpool-out", *extra)


def offline_in_copy_to(workspace: PulumiWorkspace, stack: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "preview", "--stack", stack, "--out", str(out), *extra],
        cwd=workspace.project, capture_output=True, text=True, timeout=600,
    )


def offline_tree(stdout: str) -> set[Resource]:
    """The resources of `python -m kvpool preview`'s printed tree: type, name and parent (by indentation)."""
    resources: set[Resource] = set()
    stack: list[tuple[int, str]] = []
    for line in stdout.splitlines():
        if not line.strip():
            if resources:
                break
            continue
        match = re.match(r"^( *)(\S+)  (\S.*)$", line)
        if not match:
            if resources:
                break
            continue
        depth = len(match.group(1))
        type_, name = match.group(2), match.group(3).strip()
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1] if stack else ""
        resources.add((type_, name, parent))
        stack.append((depth, f"{type_}::{name}"))
    return resources


def split_urn(urn: str) -> tuple[str, str]:
    # urn:pulumi:<stack>::<project>::<parent types $-joined>$<type>::<name>
    qualified_type, name = urn.split("::", 3)[2:4]
    return qualified_type.split("$")[-1], name


def kube_name(step: dict[str, Any]) -> str:
    """The Kubernetes name of a step's object: its metadata.name (the URN's name is `<component>-<name>` for a
    component's child), else the URN's name (a resource without metadata)."""
    for state in (step.get("newState"), step.get("oldState")):
        for key in ("inputs", "outputs"):
            name = ((state or {}).get(key) or {}).get("metadata", {}).get("name")
            if isinstance(name, str) and name:
                return name
    return split_urn(step["urn"])[1]


def engine_tree(preview_json: dict[str, Any]) -> set[Resource]:
    resources: set[Resource] = set()
    for step in preview_json.get("steps", []):
        state = step.get("newState") or step.get("oldState") or {}
        type_, name = split_urn(step["urn"])
        if type_.startswith("pulumi:providers:"):
            continue
        parent = state.get("parent", "")
        resources.add((type_, name, "::".join(split_urn(parent)) if parent else ""))
    return resources


def tree_mismatch(offline_stdout: str, preview: dict[str, Any], ignore_type: str = "") -> str:
    """How the offline preview's printed tree and the engine's preview differ ("" when they list the same
    resources), leaving out resources of `ignore_type`."""
    want = {r for r in offline_tree(offline_stdout) if r[0] != ignore_type}
    got = {r for r in engine_tree(preview) if r[0] != ignore_type}
    if not want:
        return "the offline preview printed no tree"
    return "" if got == want else f"only offline: {sorted(want - got)}\nonly pulumi: {sorted(got - want)}"


def preview_json(
    workspace: PulumiWorkspace, stack: str, *extra: str, extra_env: dict[str, str] | None = None
) -> tuple[dict[str, Any], Any]:
    result = workspace.run("preview", "--json", "-s", stack, *extra, extra_env=extra_env)
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        result.check()
        raise
    return data, result


def engine_changes(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    """(op, kind, name) of every Kubernetes object the engine would change; a replacement counts once."""
    ops = {"create-replacement": "replace", "delete-replaced": "replace", "replace": "replace"}
    found = set()
    for step in data["steps"]:
        type_, name = split_urn(step["urn"])[0], kube_name(step)
        # A read (a consumer's owner store Endpoints) changes no object of the cluster.
        if step["op"] in ("same", "read") or not type_.startswith("kubernetes:"):
            continue
        found.add((ops.get(step["op"], step["op"]), type_.rsplit(":", 1)[-1], name))
    return found


def kvpool_diff_changes(old: Path, new: Path, stack: str) -> tuple[set[tuple[str, str, str]], str]:
    """What `python -m kvpool diff` says of the same change, as (op, kind, name), and its whole text."""
    result = subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "diff", str(old), str(new), "--stack", stack],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    objects = {f"manifests/{p.name}": yaml.safe_load(p.read_text())
               for root in (old, new) for p in (root / stack / "manifests").glob("*.yaml")}
    ops = {"+": "create", "~": "update", "-": "delete"}
    found = set()
    for line in result.stdout.splitlines():
        match = re.match(r"^([+~-]) (manifests/\S+) \(to ", line)
        if match:
            obj = objects[match.group(2)]
            found.add((ops[match.group(1)], obj["kind"], obj["metadata"]["name"]))
    replaced, section = set(), ""
    for line in result.stdout.split("\nDiff: ", 1)[1].splitlines():  # the blast-radius report after the file diffs
        section = section if line.startswith("  ") else line
        match = re.match(r"^  (\w+) [^/\s]+/([^:\s]+): ", line)
        if match and section.startswith("Objects replaced"):
            replaced.add((match.group(1), match.group(2)))
    found = {("replace", kind, name) if (kind, name) in replaced else (op, kind, name) for op, kind, name in found}
    return found, result.stdout



def changes_both_ways(workspace: PulumiWorkspace, stack: str, base: Path, out: Path) -> tuple[set, set, str]:
    """The workspace's pending change to `stack` as `pulumi preview --diff` sees it and as `kvpool diff` does from
    the offline preview in `base` to a new one in `out`: (engine's changes, kvpool's changes, kvpool diff's text)."""
    data, result = preview_json(workspace, stack, "--diff")
    assert result.returncode == 0, result.output[-4000:]
    assert offline_in_copy_to(workspace, stack, out).returncode == 0
    offline, text = kvpool_diff_changes(base, out, stack)
    return engine_changes(data), offline, text

def mandatory_names(text: str) -> set[str]:
    return set(re.findall(r"\[mandatory\]\s+(kvpool-[a-z0-9-]+)", text))


def consumer_stack(workspace: PulumiWorkspace, stack: str, target_stack: str | None = None) -> None:
    """service-b's stack file copied as `stack` (so its namespace, the stack's name, differs from service-b's)."""
    config = yaml.safe_load((workspace.project / "stacks" / "Pulumi.service-b.yaml").read_text())
    if target_stack:
        config["config"]["motor-kvpool:kv_cache_store_config"]["target_stack"] = target_stack
    (workspace.project / "stacks" / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump(config))
    workspace.stack_init(stack)


def _plural(kind: str) -> str:
    return {"Endpoints": "endpoints"}.get(kind) or (
        kind.lower() + ("es" if kind.lower().endswith("s") else "s")
        if not kind.lower().endswith("y")
        else kind.lower()[:-1] + "ies"
    )


def _prefix(group_version: str) -> str:
    return f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"


def collection_path(group_version: str, kind: str) -> str:
    """The API server's list of a kind across all namespaces (or of a cluster-scoped kind)."""
    return f"{_prefix(group_version)}/{_plural(kind)}"


def api_path(obj: dict[str, Any]) -> str:
    prefix, plural = _prefix(obj["apiVersion"]), _plural(obj["kind"])
    namespace = obj["metadata"].get("namespace")
    return f"{prefix}/namespaces/{namespace}/{plural}/{obj['metadata']['name']}" if namespace else (
        f"{prefix}/{plural}/{obj['metadata']['name']}"
    )


def differences(want: Any, got: Any, path: str = "") -> list[str]:
    """Where `got` (the API server's object) lacks or changes what `want` (our manifest) says."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: want a mapping, got {got!r}"]
        out = []
        for key, value in want.items():
            if key not in got:
                if value in ({}, [], None, False, ""):  # the API server omits empty values (omitempty fields)
                    continue
                out.append(f"{path}.{key}: missing")
            else:
                out.extend(differences(value, got[key], f"{path}.{key}"))
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: want {want!r}, got {got!r}"]
        return [d for i, (w, g) in enumerate(zip(want, got, strict=True)) for d in differences(w, g, f"{path}[{i}]")]
    if want != got and str(want) != str(got) and not same_quantity(path, want, got):
        return [f"{path}: want {want!r}, got {got!r}"]
    return []


def same_quantity(path: str, want: Any, got: Any) -> bool:
    """A memory quantity the API server stores in its canonical form (32768Mi as 32Gi): the same amount."""
    if not (path.endswith(".sizeLimit") or ".resources." in path) or not (isinstance(want, str) and isinstance(got, str)):
        return False
    if not (K8S_QUANTITY.fullmatch(want) and K8S_QUANTITY.fullmatch(got)):
        return False
    return k8s_quantity_bytes(want) == k8s_quantity_bytes(got)


def live_differences(cluster: Cluster, objects: list[dict[str, Any]]) -> list[str]:
    """Where the API server's objects lack or change what ours say (what the server adds is not a difference)."""
    problems = []
    for obj in objects:
        live = cluster.get(api_path(obj))
        if live is None:
            problems.append(f"{obj['kind']} {obj['metadata']['name']}: not in the API server")
            continue
        problems += [f"{obj['kind']} {obj['metadata']['name']}{d}" for d in differences(obj, live)]
    return problems
