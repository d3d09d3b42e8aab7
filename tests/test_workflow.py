"""The pull request workflow (.github/workflows/preview.yml) checked without GitHub: actionlint (with shellcheck on
every `run:` script) passes, and its two scripts run here as GitHub's runner runs them (`bash -eo pipefail`) on
a throw-away git history: the stacks a pull request changes, and the offline preview + diff comment of those;
the real-preview job skips without a Pulumi backend and installs what the policy pack imports."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from importlib.metadata import distribution, packages_distributions
from pathlib import Path

import pytest
import yaml

from tests.git_history import edit, history
from tests.outside import absent
from tests.program_runs import PROJECT_DIR

WORKFLOW = PROJECT_DIR / ".github" / "workflows" / "preview.yml"
BUILD_COMMAND = "bash tools/workflow-lint/build.sh"
ACTIONLINT = (
    Path(os.environ.get("MOTOR_KVPOOL_CACHE", Path.home() / ".cache" / "motor-kvpool")) / "actionlint-1.7.12" / "bin"
    / "actionlint"
)
STACKS = sorted(p.name[len("Pulumi.") : -len(".yaml")] for p in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))


def step_script(job: str, step_id_or_name: str) -> str:
    steps = yaml.safe_load(WORKFLOW.read_text())["jobs"][job]["steps"]
    return next(s["run"] for s in steps if step_id_or_name in (s.get("id"), s.get("name")))


def runner_bash(script: str, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    """As GitHub runs a `run:` step with `shell: bash`."""
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, timeout=900,
    )


def github_outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text().splitlines())


def run_changed_stacks(repo: Path, base: str) -> dict[str, list[str]]:
    output = repo.parent / "github-output"
    result = runner_bash(step_script("changed-stacks", "stacks"), repo, BASE=base, GITHUB_OUTPUT=str(output))
    assert result.returncode == 0, result.stderr
    outputs = github_outputs(output)
    assert sorted(outputs) == ["deleted", "stacks"]
    return {key: json.loads(value) for key, value in outputs.items()}


def changed_stacks(tmp_path: Path, change) -> dict[str, list[str]]:
    return run_changed_stacks(*history(tmp_path, change))


def test_actionlint_and_shellcheck_pass() -> None:
    if not ACTIONLINT.is_file():
        absent(f"actionlint not built; run `{BUILD_COMMAND}` (make test does)")
    result = subprocess.run([str(ACTIONLINT), str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_a_changed_stack_file_previews_that_stack_only(tmp_path: Path) -> None:
    assert changed_stacks(tmp_path, lambda repo: edit(
        repo / "stacks" / "Pulumi.dev.yaml", "d_instances_num: 1", "d_instances_num: 2")) == {
            "stacks": ["dev"], "deleted": []}


def test_a_program_change_previews_every_stack(tmp_path: Path) -> None:
    assert changed_stacks(tmp_path, lambda repo: edit(
        repo / "kvpool" / "program" / "__init__.py", '"""The stack:', '"""The whole stack:')) == {
            "stacks": STACKS, "deleted": []}


def test_a_deleted_stack_file_is_listed_apart(tmp_path: Path) -> None:
    """Nothing is left to `pulumi preview`; the offline diff shows its objects to delete."""
    def change(repo: Path) -> None:
        edit(repo / "stacks" / "Pulumi.dev.yaml", "d_instances_num: 1", "d_instances_num: 2")
        (repo / "stacks" / "Pulumi.yuanrong.yaml").unlink()  # listed after dev: the script's last line

    assert changed_stacks(tmp_path, change) == {"stacks": ["dev"], "deleted": ["yuanrong"]}


def test_offline_diff_comments_each_stacks_diff_against_the_base_and_fails_on_one_that_does_not_preview(
    tmp_path: Path,
) -> None:
    def change(repo: Path) -> None:
        stack_file = repo / "stacks" / "Pulumi.dev.yaml"
        edit(stack_file, "d_instances_num: 1", "d_instances_num: 2")
        (repo / "stacks" / "Pulumi.my-service.yaml").write_text(stack_file.read_text())
        edit(repo / "stacks" / "Pulumi.yuanrong.yaml", "hardware_type: 800I_A2", "hardware_type: 800I_A9")
        (repo / "stacks" / "Pulumi.mooncake-ha.yaml").unlink()

    repo, base = history(tmp_path, change)
    stacks = run_changed_stacks(repo, base)
    assert stacks == {"stacks": ["dev", "my-service", "yuanrong"], "deleted": ["mooncake-ha"]}
    (repo / "venv").symlink_to(PROJECT_DIR / "venv")
    result = runner_bash(step_script("offline-diff", "kvpool diff of each stack against the base commit"), repo,
                         BASE=base, STACKS=json.dumps(stacks["stacks"]), DELETED=json.dumps(stacks["deleted"]))
    assert result.returncode == 1, result.stdout + result.stderr  # yuanrong no longer previews
    comment = (repo / "diff.md").read_text()
    sections = dict(part.split("\n", 1) for part in comment.split("### ")[1:])
    assert sorted(sections) == ["dev", "mooncake-ha", "my-service", "yuanrong"]
    dev = sections["dev"].splitlines()
    assert dev[0] == "```diff" and dev[-1] == "```"
    assert '+        "d_instances_num": 2,' in dev  # at the line start: GitHub colours it
    assert "Diff: 1 to create, 2 to update, 0 to delete" in sections["dev"], sections["dev"]
    assert re.search(r"^Diff: (\d+) to create, 0 to update, 0 to delete, 0 unchanged$", sections["my-service"], re.M)
    assert re.search(r"^Diff: 0 to create, 0 to update, (\d+) to delete, 0 unchanged$", sections["mooncake-ha"], re.M)
    assert "motor_deploy_config.hardware_type" in sections["yuanrong"], sections["yuanrong"]


def pulumi_preview_steps() -> list[dict]:
    return yaml.safe_load(WORKFLOW.read_text())["jobs"]["pulumi-preview"]["steps"]


@pytest.mark.parametrize(("env", "configured"), [
    ({}, "false"),
    ({"PULUMI_ACCESS_TOKEN": "pul-x"}, "true"),
    ({"PULUMI_BACKEND_URL": "s3://bucket"}, "true"),
])
def test_pulumi_preview_runs_only_with_a_backend_and_says_so_otherwise(tmp_path: Path, env, configured) -> None:
    output = tmp_path / "github-output"
    unset = {key: "" for key in ("PULUMI_ACCESS_TOKEN", "PULUMI_BACKEND_URL")}
    result = runner_bash(step_script("pulumi-preview", "backend"), tmp_path, **{**unset, **env},
                         GITHUB_OUTPUT=str(output))
    assert result.returncode == 0, result.stderr
    assert github_outputs(output) == {"configured": configured}
    notices = [line for line in result.stdout.splitlines() if line.startswith("::notice")]
    assert len(notices) == (configured == "false")
    if notices:
        assert notices[0].startswith("::notice title=pulumi-preview skipped::no Pulumi backend configured: set the "
                                     "secret PULUMI_ACCESS_TOKEN")
    steps = pulumi_preview_steps()
    assert steps[0].get("id") == "backend"
    assert all("steps.backend.outputs.configured == 'true'" in step.get("if", "") for step in steps[1:])


def requirement_names(file: Path) -> set[str]:
    """The distributions a requirements file pins, following its `-r` includes."""
    names = set()
    for line in file.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            names |= requirement_names(file.parent / line[3:].strip())
        elif line:
            names.add(re.split(r"[=<>~! ;\[]", line, maxsplit=1)[0].lower().replace("_", "-"))
    return names


def distributions_of(module: str) -> list[str]:
    """The distributions that provide `module`: for a namespace package shared by several (google.*), the ones that
    hold its folder."""
    candidates = packages_distributions()[module.split(".")[0]]
    if len(candidates) == 1:
        return candidates
    folder = module.replace(".", "/") + "/"
    return [name for name in candidates if any(str(file).startswith(folder) for file in distribution(name).files or [])]


def test_the_real_preview_installs_every_distribution_the_policy_pack_imports() -> None:
    """`pulumi preview --policy-pack policies` runs the pack in venv (kvpool/policies/PulumiPolicy.yaml)."""
    script = step_script("pulumi-preview", "virtualenv `venv` (Pulumi.yaml names it; the policy pack runs in it too)")
    installed = set().union(*(requirement_names(PROJECT_DIR / name) for name in re.findall(r"-r (\S+)", script)))
    imported = set()
    for source in (PROJECT_DIR / "kvpool" / "policies").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module)
    # the pack's own modules: it loads its folder as a package (motor_kvpool_policy_pack) and is kvpool.policies
    own = {"kvpool", "motor_kvpool_policy_pack", "__future__"} | {path.stem for path in (PROJECT_DIR / "kvpool" / "policies").iterdir()}
    third_party = sorted(module for module in imported
                         if module.split(".")[0] not in set(sys.stdlib_module_names) | own)
    needed = {dist.lower().replace("_", "-") for module in third_party for dist in distributions_of(module)}
    assert "pulumi-policy" in needed
    assert needed <= installed, sorted(needed - installed)
