"""`python -m kvpool diff`: the changes between two previews, as a pull request shows them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.preview import preview
from kvpool.cli.views import blast_radius, blast_radius_report
from kvpool.cli.views.diff import (
    MissingPreviewError,
    absent_side,
    changes,
    manifests,
    report,
)
from tests.git_history import edit, git, project_repository
from tests.program_runs import PROJECT_DIR


@pytest.fixture(scope="module")
def previews(tmp_path_factory):
    """The dev stack as committed (old) and with one more decode instance (new)."""
    root = tmp_path_factory.mktemp("previews")
    preview(PROJECT_DIR, "dev", root / "old")
    project = root / "project"
    (project / "stacks").mkdir(parents=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        (project / name).write_text((PROJECT_DIR / name).read_text())
    (project / "kvpool").symlink_to(PROJECT_DIR / "kvpool")
    text = (PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text()
    (project / "stacks" / "Pulumi.dev.yaml").write_text(text.replace("d_instances_num: 1", "d_instances_num: 2"))
    preview(project, "dev", root / "new")
    return root


def preview_files(root) -> int:
    """How many files a preview of dev holds (its manifests and outputs.json): the program's objects change often."""
    return len(list((root / "dev" / "manifests").glob("*.yaml"))) + 1


def test_one_more_decode_instance(previews):
    found, unchanged = changes(previews / "old", previews / "new", "dev")
    assert [(change.sign, change.name) for change in found] == [
        ("~", "manifests/configmap-dev-motor-config.yaml"),
        ("+", "manifests/deployment-dev-vllm-d1.yaml"),
        ("~", "outputs.json"),
    ]
    assert unchanged == preview_files(previews / "old") - 2
    motor_config = found[0].diff
    assert motor_config[:2] == [f"--- {previews / 'old'}/dev/manifests/configmap-dev-motor-config.yaml",
                                f"+++ {previews / 'new'}/dev/manifests/configmap-dev-motor-config.yaml"]
    assert [line for line in motor_config if line.startswith(("-  ", "+  "))] == [
        '-        "d_instances_num": 1,', '+        "d_instances_num": 2,'
    ]
    lines = report(found, unchanged)
    assert lines[-1] == f"Diff: 1 to create, 2 to update, 0 to delete, {unchanged} unchanged"
    # unindented: GitHub colours a ```diff block's lines by their first character
    assert lines[:3] == ["~ manifests/configmap-dev-motor-config.yaml (to update)", *motor_config[:2]]
    assert '-        "d_instances_num": 1,' in lines


def test_one_more_decode_instance_rolls_nothing_and_replaces_nothing(previews):
    """Motor's controller hot-reloads motor-config: one more instance restarts no pod (issue 14), and the project
    sets kubernetes:enableConfigMapMutable, so the provider updates motor-config in place."""
    mutable = blast_radius.mutable_kinds(load_stack_config(PROJECT_DIR, "dev").values)
    assert mutable == {"ConfigMap"}
    old, new = manifests(previews / "old", "dev"), manifests(previews / "new", "dev")
    assert blast_radius_report.report(blast_radius.blast_radius(old, new, mutable)) == [
        "Workloads created: Deployment dev/vllm-d1",
        "Blast radius: 0 workloads roll, 0 replaced, 1 workload created (vllm-d1); KV pool keeps its contents.",
    ]
    # without the switch the provider would delete and re-create it
    assert blast_radius_report.report(blast_radius.blast_radius(old, new))[:2] == [
        "Objects replaced (deleted, then created; pulumi-kubernetes cannot update these fields):",
        "  ConfigMap dev/motor-config: data[user_config.json] (updated in place if the provider sets "
        "enableConfigMapMutable)",
    ]


def test_reversed_it_deletes(previews):
    found, _ = changes(previews / "new", previews / "old", "dev")
    assert ("-", "manifests/deployment-dev-vllm-d1.yaml") in [(change.sign, change.name) for change in found]


def kvpool(*args, cwd=PROJECT_DIR):
    return subprocess.run([sys.executable, "-m", "kvpool", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_cli_exit_code_and_missing_preview(previews, tmp_path):
    same = kvpool("diff", previews / "old", previews / "old", "--stack", "dev", "--exit-code")
    assert (same.returncode, same.stdout) == (
        0,
        f"Diff: 0 to create, 0 to update, 0 to delete, {preview_files(previews / 'old')} unchanged\n"
        "Blast radius: 0 workloads roll, 0 replaced; KV pool keeps its contents.\n",
    )
    assert kvpool("diff", previews / "old", previews / "new", "--stack", "dev", "--exit-code").returncode == 4
    assert kvpool("diff", previews / "old", previews / "new", "--stack", "dev").returncode == 0
    missing = kvpool("diff", previews / "old", previews / "nowhere", "--stack", "dev")
    assert (missing.returncode, missing.stderr) == (
        1, f"error: {previews / 'nowhere'}: no such folder (the --out of a python -m kvpool preview)\n"
    )
    with pytest.raises(MissingPreviewError, match=f"neither {tmp_path} nor {tmp_path} holds a preview of stack 'dev'"):
        changes(tmp_path, tmp_path, "dev")
    neither = kvpool("diff", "--stack", "dev")
    assert (neither.returncode, neither.stderr) == (
        1, "error: give either two preview folders (OLD NEW) or --base REF, not both\n"
    )


def test_a_new_stack_is_every_object_to_create(previews, tmp_path):
    """A pull request that adds a stack: the base's preview folder has none of it (issue 22)."""
    objects = preview_files(previews / "old") - 1
    found, unchanged = changes(tmp_path, previews / "old", "dev")
    assert {change.sign for change in found} == {"+"} and unchanged == 0
    assert absent_side(tmp_path, previews / "old", "dev") == f"Stack dev is new: {tmp_path} holds no preview of it."
    shown = kvpool("diff", tmp_path, previews / "old", "--stack", "dev")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0] == f"Stack dev is new: {tmp_path} holds no preview of it."
    assert f"Diff: {objects + 1} to create, 0 to update, 0 to delete, 0 unchanged" in lines


def test_a_deleted_stack_is_every_object_to_delete(previews, tmp_path):
    objects = preview_files(previews / "old") - 1
    assert absent_side(previews / "old", tmp_path, "dev") == f"Stack dev is deleted: {tmp_path} holds no preview of it."
    shown = kvpool("diff", previews / "old", tmp_path, "--stack", "dev")
    assert shown.returncode == 0, shown.stderr
    assert f"Diff: 0 to create, 0 to update, {objects + 1} to delete, 0 unchanged" in shown.stdout.splitlines()


def test_base_previews_the_commit_in_a_worktree_and_leaves_the_stash_and_the_tree_alone(tmp_path):
    """`kvpool diff --base HEAD` compares the committed stack with the working tree, whatever the stash holds, and
    a new stack is all to create (the git-stash recipe failed on a clean tree and popped older stashes)."""
    repo = project_repository(tmp_path)
    stack_file = repo / "stacks" / "Pulumi.dev.yaml"
    edit(stack_file, "d_instances_num: 1", "d_instances_num: 3")
    git(repo, "stash", "-q")  # an older stash the old recipe would have popped
    edit(stack_file, "d_instances_num: 1", "d_instances_num: 2")
    (repo / "stacks" / "Pulumi.my-service.yaml").write_text(stack_file.read_text())

    changed = kvpool("diff", "--base", "HEAD", "--stack", "dev", "--exit-code", cwd=repo)
    assert changed.returncode == 4, changed.stderr  # has changes
    lines = changed.stdout.splitlines()
    assert "+        \"d_instances_num\": 2," in lines
    assert "--- HEAD/dev/manifests/configmap-dev-motor-config.yaml" in lines
    assert [line for line in lines if line.startswith("Diff:")] == [
        f"Diff: 1 to create, 2 to update, 0 to delete, {len(list((repo / 'out' / 'dev' / 'manifests').glob('*.yaml'))) - 2} unchanged"
    ]
    assert git(repo, "stash", "list").count("\n") == 0 and git(repo, "stash", "list")  # still one stash
    assert git(repo, "diff", "--name-only") == "stacks/Pulumi.dev.yaml"  # the working tree keeps its change
    assert git(repo, "ls-files", "--others", "--exclude-standard") == "stacks/Pulumi.my-service.yaml"
    assert git(repo, "worktree", "list").count("\n") == 0  # the temporary worktree is gone

    new = kvpool("diff", "--base", "HEAD", "--stack", "my-service", cwd=repo)
    assert new.returncode == 0, new.stderr
    lines = new.stdout.splitlines()
    assert lines[0].startswith("Stack my-service is new: ")
    objects = len(list((repo / "out" / "my-service" / "manifests").glob("*.yaml")))
    assert f"Diff: {objects + 1} to create, 0 to update, 0 to delete, 0 unchanged" in lines

    unknown = kvpool("diff", "--base", "no-such-ref", "--stack", "dev", cwd=repo)
    assert (unknown.returncode, unknown.stderr) == (
        1, f"error: --base 'no-such-ref': not a commit of the repository holding {repo.resolve()}\n"
    )
