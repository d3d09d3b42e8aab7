"""The pull request workflow (.github/workflows/preview.yml) checked without GitHub: actionlint (with shellcheck on
every `run:` script) passes, and its two scripts run here as GitHub's runner runs them (`bash -eo pipefail`) on
a throw-away git history: the stacks a pull request changes, and the offline preview + diff comment of those."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import yaml

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


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True,
        text=True,
    ).stdout.strip()


def history(root: Path, change) -> tuple[Path, str]:
    """A git repository holding the project (base commit), then `change(repo)` committed on top."""
    repo = root / "repo"
    files = git(PROJECT_DIR, "ls-files").splitlines()
    for name in files:
        if (PROJECT_DIR / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(PROJECT_DIR / name, repo / name)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD")
    change(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "head")
    return repo, base


def run_changed_stacks(repo: Path, base: str) -> list[str]:
    output = repo.parent / "github-output"
    result = runner_bash(step_script("changed-stacks", "stacks"), repo, BASE=base, GITHUB_OUTPUT=str(output))
    assert result.returncode == 0, result.stderr
    key, value = output.read_text().strip().split("=", 1)
    assert key == "stacks"
    return json.loads(value)


def changed_stacks(tmp_path: Path, change) -> list[str]:
    return run_changed_stacks(*history(tmp_path, change))


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{path.name} no longer holds {old!r}"
    path.write_text(text.replace(old, new))


def test_actionlint_and_shellcheck_pass() -> None:
    if not ACTIONLINT.is_file():
        absent(f"actionlint not built; run `{BUILD_COMMAND}` (make test does)")
    result = subprocess.run([str(ACTIONLINT), str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert (result.returncode, result.stdout) == (0, ""), result.stdout + result.stderr


def test_a_changed_stack_file_previews_that_stack_only(tmp_path: Path) -> None:
    assert changed_stacks(tmp_path, lambda repo: edit(
        repo / "stacks" / "Pulumi.dev.yaml", "d_instances_num: 1", "d_instances_num: 2")) == ["dev"]


def test_a_program_change_previews_every_stack(tmp_path: Path) -> None:
    assert changed_stacks(tmp_path, lambda repo: edit(
        repo / "components" / "program.py", '"""The stack:', '"""The whole stack:')) == STACKS


def test_a_deleted_stack_file_is_not_previewed(tmp_path: Path) -> None:
    def change(repo: Path) -> None:
        edit(repo / "stacks" / "Pulumi.dev.yaml", "d_instances_num: 1", "d_instances_num: 2")
        (repo / "stacks" / "Pulumi.yuanrong.yaml").unlink()  # listed after dev: the script's last line

    assert changed_stacks(tmp_path, change) == ["dev"]


def test_offline_diff_comments_each_changed_stacks_diff_and_fails_on_one_that_does_not_preview(tmp_path: Path) -> None:
    def change(repo: Path) -> None:
        edit(repo / "stacks" / "Pulumi.dev.yaml", "d_instances_num: 1", "d_instances_num: 2")
        edit(repo / "stacks" / "Pulumi.yuanrong.yaml", "hardware_type: 800I_A2", "hardware_type: 800I_A9")

    repo, base = history(tmp_path, change)
    stacks = run_changed_stacks(repo, base)
    assert stacks == ["dev", "yuanrong"]
    (repo / "venv").symlink_to(PROJECT_DIR / "venv")
    result = runner_bash(step_script("offline-diff", "kvpool preview of base and head, kvpool diff"), repo,
                         BASE=base, GITHUB_WORKSPACE=str(repo), STACKS=json.dumps(stacks))
    assert result.returncode == 1, result.stdout + result.stderr  # yuanrong no longer previews
    comment = (repo / "diff.md").read_text()
    sections = dict(part.split("\n", 1) for part in comment.split("### ")[1:])
    assert sorted(sections) == stacks
    assert "Diff: 1 to create, 2 to update, 0 to delete" in sections["dev"], sections["dev"]
    assert "motor_deploy_config.hardware_type" in sections["yuanrong"], sections["yuanrong"]
