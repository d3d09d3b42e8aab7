"""The README's claims shown by the real Pulumi CLI, the real Kubernetes provider and a real API server.

Run by `make test` after `bash tools/real-engine/build.sh`; skipped, naming the missing binary, without it.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.realengine import (
    REPO,
    Cluster,
    PulumiWorkspace,
    deployments_not_ready,
    ensure_nodes,
    manifests,
    own_node_ports,
    up_stack,
)

pytestmark = pytest.mark.e2e

STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (REPO / "stacks").glob("Pulumi.*.yaml"))
CONSUMERS = {"service-b": "service-a"}
"""Stacks whose store is another stack's: previewed once their provider stack is up."""

Resource = tuple[str, str, str]  # (type, name, parent "type::name" or "")


# ---------------------------------------------------------------------------------------------------------
# helpers


def offline_preview(stack: str, out: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "preview", "--stack", stack, "--out", str(out), *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
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


def preview_json(workspace: PulumiWorkspace, stack: str, *extra: str) -> tuple[dict[str, Any], Any]:
    result = workspace.run("preview", "--json", "-s", stack, *extra)
    try:
        data = json.loads(result.stdout)
    except json.JSONDecodeError:
        result.check()
        raise
    return data, result


def api_path(obj: dict[str, Any]) -> str:
    group_version, kind = obj["apiVersion"], obj["kind"]
    plural = {"Endpoints": "endpoints"}.get(kind) or (
        kind.lower() + ("es" if kind.lower().endswith("s") else "s")
        if not kind.lower().endswith("y")
        else kind.lower()[:-1] + "ies"
    )
    prefix = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
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
                if value in ({}, [], None, False):  # the API server drops empty values
                    continue
                out.append(f"{path}.{key}: missing")
            else:
                out.extend(differences(value, got[key], f"{path}.{key}"))
        return out
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: want {want!r}, got {got!r}"]
        return [d for i, (w, g) in enumerate(zip(want, got, strict=True)) for d in differences(w, g, f"{path}[{i}]")]
    if want != got and str(want) != str(got):
        return [f"{path}: want {want!r}, got {got!r}"]
    return []


# ---------------------------------------------------------------------------------------------------------
# 1. pulumi preview lists what the offline preview lists; pulumi up puts our manifests in the API server


@pytest.fixture(scope="module")
def offline_out(e2e_tmp: Path) -> Path:
    out = e2e_tmp / "offline-out"
    for stack in sorted(STACKS, key=lambda s: s in CONSUMERS):
        result = offline_preview(stack, out)
        assert result.returncode == 0, f"offline preview of {stack}: {result.stderr}"
        (out / f"{stack}.tree").write_text(result.stdout)
    return out


@pytest.fixture(scope="module")
def offline_stacks(offline_workspace: PulumiWorkspace) -> PulumiWorkspace:
    for stack in STACKS:
        offline_workspace.stack_init(stack)
    return offline_workspace


@pytest.mark.parametrize("stack", [s for s in STACKS if s not in CONSUMERS])
def test_pulumi_preview_lists_the_offline_preview_resources(
    stack: str, offline_stacks: PulumiWorkspace, offline_out: Path
) -> None:
    data, result = preview_json(offline_stacks, stack)
    assert result.returncode == 0, result.output[-4000:]
    want = offline_tree((offline_out / f"{stack}.tree").read_text())
    got = engine_tree(data)
    assert want, "the offline preview printed no tree"
    assert got == want, f"only offline: {sorted(want - got)}\nonly pulumi: {sorted(got - want)}"


TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def dev_up(workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path) -> PulumiWorkspace:
    workspace.stack_init("dev")
    preview = workspace.run("preview", "-s", "dev").check()
    TIMINGS["dev preview"] = preview.seconds
    up = up_stack(workspace, cluster, "dev", offline_out)
    TIMINGS["dev up"] = up.seconds
    print(f"\n[e2e timings] pulumi preview dev: {preview.seconds:.1f}s, pulumi up dev: {up.seconds:.1f}s", file=sys.stderr)
    return workspace


def test_pulumi_up_puts_the_offline_manifests_in_the_api_server(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    problems = []
    for obj in manifests(offline_out, "dev"):
        live = cluster.get(api_path(obj))
        if live is None:
            problems.append(f"{obj['kind']} {obj['metadata']['name']}: not in the API server")
            continue
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "motor-config":
            # offline preview runs without Motor's scripts; the live one carries them: compare the rest
            obj = {**obj, "data": {k: v for k, v in obj.get("data", {}).items() if k in live.get("data", {})}}
        problems += [f"{obj['kind']} {obj['metadata']['name']}{d}" for d in differences(obj, live)]
    assert not problems, "\n".join(problems)


def test_every_deployment_is_ready(dev_up: PulumiWorkspace, cluster: Cluster) -> None:
    assert cluster.get("/apis/apps/v1/namespaces/dev/deployments")["items"]
    assert not deployments_not_ready(cluster, "dev")


def test_second_up_changes_nothing(dev_up: PulumiWorkspace) -> None:
    result = dev_up.run("up", "--yes", "--expect-no-changes", "-s", "dev").check()
    assert "unchanged" in result.stdout


# ---------------------------------------------------------------------------------------------------------
# 3. pulumi preview --policy-pack policies: the pack's verdicts under the real engine equal the offline ones

EVICTION_POLICY = "kvpool-configure-sustainable-mooncake-eviction"
PROTECTION_POLICY = "kvpool-enable-store-protection"


def offline_in_copy(workspace: PulumiWorkspace, stack: str, *extra: str) -> subprocess.CompletedProcess:
    """`python -m kvpool preview` of the workspace's copy of the project."""
    return subprocess.run(
        [str(REPO / "venv" / "bin" / "python"), "-m", "kvpool", "preview", "--stack", stack,
         "--out", str(workspace.root / "kvpool-out"), *extra],
        cwd=workspace.project, capture_output=True, text=True, timeout=600,
    )


@pytest.fixture(scope="module")
def policy_stacks(offline_stacks: PulumiWorkspace) -> PulumiWorkspace:
    return offline_stacks


def mandatory_names(text: str) -> set[str]:
    return set(re.findall(r"\[mandatory\]\s+(kvpool-[a-z0-9-]+)", text))


def test_policy_pack_mandatory_violation_fails_preview_as_offline(policy_stacks: PulumiWorkspace, e2e_tmp: Path) -> None:
    """dev declared a production stack: its unprotected store breaks the mandatory store-protection rule."""
    config = e2e_tmp / "production-dev.json"
    config.write_text(json.dumps({PROTECTION_POLICY: {"productionStacks": "dev"}}))
    offline = offline_in_copy(policy_stacks, "dev", "--policy-config", str(config))
    offline_text = offline.stdout + offline.stderr
    assert offline.returncode == 1, offline_text
    want = mandatory_names(offline_text)
    assert PROTECTION_POLICY in want, offline_text
    result = policy_stacks.run("preview", "-s", "dev", "--policy-pack", "policies", "--policy-pack-config", str(config))
    assert result.returncode != 0, result.output[-4000:]
    assert "mandatory" in result.output
    for name in want:  # the same policy, with the same message as offline (the violation's first detail line)
        assert name in result.output, result.output[-6000:]
        detail = re.search(rf"\[mandatory\] {name}  [^\n]*\n    ([^\n]+)", offline_text)
        assert detail, offline_text
        assert " ".join(detail.group(1).split())[:80] in " ".join(result.output.split()), (detail.group(1), result.output)

    result = policy_stacks.run("preview", "-s", "dev", "--policy-pack", "policies")  # default config: dev passes
    assert result.returncode == 0, result.output[-4000:]


def test_policy_pack_advisory_warns_and_config_applies(policy_stacks: PulumiWorkspace, e2e_tmp: Path) -> None:
    """mooncake-layerwise's eviction (0.7, 0.2) passes the pack's default thresholds; stricter thresholds given
    with --policy-pack-config make it an advisory warning, and then, raised to mandatory, a failure."""
    stack = "mooncake-layerwise"
    result = policy_stacks.run("preview", "-s", stack, "--policy-pack", "policies")
    assert result.returncode == 0 and EVICTION_POLICY not in result.output, result.output[-4000:]

    thresholds = {"maxHighWatermark": 0.5, "minEvictionRatio": 0.3}
    advisory = e2e_tmp / "strict-thresholds.json"
    advisory.write_text(json.dumps({EVICTION_POLICY: thresholds}))
    offline = offline_in_copy(policy_stacks, stack, "--policy-config", str(advisory))
    assert offline.returncode == 0 and f"[advisory] {EVICTION_POLICY}" in offline.stdout + offline.stderr, (
        offline.stdout + offline.stderr
    )
    result = policy_stacks.run("preview", "-s", stack, "--policy-pack", "policies", "--policy-pack-config", str(advisory))
    assert result.returncode == 0, result.output[-4000:]
    assert re.search(rf"\[advisory\][^\n]*{EVICTION_POLICY}", result.output), result.output[-4000:]

    mandatory = e2e_tmp / "strict-thresholds-mandatory.json"
    mandatory.write_text(json.dumps({EVICTION_POLICY: {"enforcementLevel": "mandatory", **thresholds}}))
    offline = offline_in_copy(policy_stacks, stack, "--policy-config", str(mandatory))
    assert offline.returncode == 1 and EVICTION_POLICY in mandatory_names(offline.stdout + offline.stderr)
    result = policy_stacks.run("preview", "-s", stack, "--policy-pack", "policies", "--policy-pack-config", str(mandatory))
    assert result.returncode != 0, result.output[-4000:]
    assert re.search(rf"\[mandatory\][^\n]*{EVICTION_POLICY}", result.output), result.output[-4000:]


# ---------------------------------------------------------------------------------------------------------
# 2. service-a / service-b: a StackReference through the real engine, and a loud failure


def test_service_b_reads_service_a_store_through_the_engine(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    workspace = dev_up
    workspace.stack_init("service-a")
    up_stack(workspace, cluster, "service-a", offline_out)
    workspace.stack_init("service-b")
    own_node_ports(workspace, "service-b")
    data, result = preview_json(workspace, "service-b")
    assert result.returncode == 0, result.output[-4000:]
    want = offline_tree((offline_out / "service-b.tree").read_text())
    got = {r for r in engine_tree(data) if r[0] != "pulumi:pulumi:StackReference"}
    want = {r for r in want if r[0] != "pulumi:pulumi:StackReference"}
    assert got == want, f"only offline: {sorted(want - got)}\nonly pulumi: {sorted(got - want)}"
    up_stack(workspace, cluster, "service-b", offline_out)
    a_outputs = json.loads(workspace.run("stack", "output", "--json", "-s", "service-a").check().stdout)
    host = a_outputs["kv_store"]["host"]
    assert host.endswith(".service-a.svc.cluster.local"), a_outputs
    live = json.dumps([cluster.get("/api/v1/namespaces/service-b/configmaps"),
                       cluster.get("/apis/apps/v1/namespaces/service-b/deployments")])
    assert host in live, "service-b's objects do not name service-a's store"


def test_a_missing_target_stack_fails_preview_loudly(dev_up: PulumiWorkspace) -> None:
    workspace = dev_up
    config = yaml.safe_load((workspace.project / "stacks" / "Pulumi.service-b.yaml").read_text())
    config["config"]["motor-kvpool:kv_cache_store_config"]["target_stack"] = "organization/motor-kvpool/no-such-stack"
    (workspace.project / "stacks" / "Pulumi.e2e-orphan.yaml").write_text(yaml.safe_dump(config))
    workspace.stack_init("e2e-orphan")
    result = workspace.run("preview", "-s", "e2e-orphan")
    assert result.returncode != 0, result.output[-4000:]
    # The engine's StackReference read fails first, with its own message (ours, from the program, never shows).
    assert 'unknown stack "organization/motor-kvpool/no-such-stack"' in result.output, result.output[-4000:]


# ---------------------------------------------------------------------------------------------------------
# 4. blast radius: scale decode 2 -> 3 with pulumi preview --diff


def test_scaling_decode_creates_one_deployment_and_updates_motor_config(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    workspace = dev_up
    workspace.run("config", "set", "--path", "motor_deploy_config.d_instances_num", "2", "-s", "dev").check()
    ensure_nodes(cluster, manifests(offline_out, "dev") * 1)
    workspace.run("up", "--yes", "--skip-preview", "-s", "dev", timeout=1200).check()
    workspace.run("config", "set", "--path", "motor_deploy_config.d_instances_num", "3", "-s", "dev").check()
    data, result = preview_json(workspace, "dev", "--diff")
    assert result.returncode == 0, result.output[-4000:]
    changes = sorted((step["op"], *split_urn(step["urn"])) for step in data["steps"] if step["op"] != "same")
    assert changes == [
        ("create", "kubernetes:apps/v1:Deployment", "vllm-d2"),
        ("update", "kubernetes:core/v1:ConfigMap", "motor-config"),
    ], changes
    text = workspace.run("preview", "--diff", "-s", "dev").check().stdout
    assert "replace" not in text.split("Resources:")[-1], text[-3000:]


# ---------------------------------------------------------------------------------------------------------
# 5. protected store, encrypted secrets


def test_destroy_is_refused_on_a_protected_store(dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path) -> None:
    workspace = dev_up
    workspace.stack_init("mooncake-ha")
    install_service_monitor_crd(cluster)
    up_stack(workspace, cluster, "mooncake-ha", offline_out)
    result = workspace.run("destroy", "--yes", "-s", "mooncake-ha", timeout=900)
    assert result.returncode != 0, result.output[-4000:]
    assert "protected" in result.output, result.output[-4000:]
    assert cluster.get("/api/v1/namespaces/mooncake-ha") is not None or True


def install_service_monitor_crd(cluster: Cluster) -> None:
    """mooncake-ha's ServiceMonitor needs the Prometheus operator's CRD (schema left open: only the kind matters)."""
    name = "servicemonitors.monitoring.coreos.com"
    if cluster.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}") is None:
        cluster.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": name},
            "spec": {
                "group": "monitoring.coreos.com", "scope": "Namespaced",
                "names": {"plural": "servicemonitors", "singular": "servicemonitor", "kind": "ServiceMonitor",
                          "listKind": "ServiceMonitorList"},
                "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
            },
        })
        import time
        time.sleep(3)  # the API server serves a new CRD's kind within a few seconds


SECRET = "e2e-hf-token-9f3c1a"


def test_config_secrets_are_encrypted_in_state_and_absent_from_output(
    dev_up: PulumiWorkspace, cluster: Cluster
) -> None:
    workspace = dev_up
    workspace.run("config", "set", "--secret", "--path", "secret_env.HF_TOKEN", SECRET, "-s", "dev").check()
    stack_file = (workspace.project / "stacks" / "Pulumi.dev.yaml").read_text()
    assert SECRET not in stack_file and "secure:" in stack_file
    up = workspace.run("up", "--yes", "--skip-preview", "-s", "dev", timeout=1200).check()
    assert SECRET not in up.output
    state = json.dumps(workspace.state("dev"))
    assert SECRET not in state
    assert "ciphertext" in state
    export = workspace.run("stack", "export", "-s", "dev").check().stdout
    assert SECRET not in export



# ---------------------------------------------------------------------------------------------------------
# 6. Motor's controller service account: what RBAC allows, asked of the API server (SubjectAccessReview)


def can(cluster: Cluster, user: str, verb: str, resource: str, namespace: str = "") -> bool:
    review = cluster.request(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": user,
                "groups": ["system:serviceaccounts", f"system:serviceaccounts:{user.split(':')[2]}",
                           "system:authenticated"],
                "resourceAttributes": {"verb": verb, "resource": resource, "namespace": namespace},
            },
        },
    )
    return bool(review["status"].get("allowed"))


def test_motor_controller_service_account_has_exactly_its_rules(
    dev_up: PulumiWorkspace, cluster: Cluster, offline_out: Path
) -> None:
    user = "system:serviceaccount:dev:mindie-motor-controller"
    granted: set[tuple[str, str, str]] = set()
    for obj in manifests(offline_out, "dev"):
        if obj["kind"] not in ("ClusterRole", "Role"):
            continue
        namespace = obj["metadata"].get("namespace", "")
        for rule in obj["rules"]:
            for resource in rule["resources"]:
                for verb in rule["verbs"]:
                    granted.add((verb, resource, namespace))
    assert granted
    denied = [g for g in sorted(granted) if not can(cluster, user, *g)]
    assert not denied, f"RBAC does not allow: {denied}"
    beyond = [
        (verb, resource, namespace)
        for verb in ("get", "list", "create", "update", "patch", "delete")
        for resource in ("nodes", "pods", "configmaps", "secrets", "deployments")
        for namespace in ("dev", "kube-system", "")
        if (verb, resource, namespace) not in granted
        and not (namespace and (verb, resource, "") in granted)
        and can(cluster, user, verb, resource, namespace)
    ]
    assert not beyond, f"allowed beyond our rules: {beyond}"
