"""`python -m kvpool diff`: the changes between two previews, as a pull request shows them."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kvpool import blast_radius, blast_radius_report
from kvpool.diff_cmd import MissingPreviewError, changes, manifests, report
from kvpool.preview import preview
from kvpool.stack_config import load_stack_config
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
    for package in ("components", "policies"):
        (project / package).symlink_to(PROJECT_DIR / package)
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
    assert report(found, unchanged)[-1] == f"Diff: 1 to create, 2 to update, 0 to delete, {unchanged} unchanged"


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


def test_cli_exit_code_and_missing_preview(previews):
    def kvpool(*args):
        return subprocess.run([sys.executable, "-m", "kvpool", "diff", *map(str, args)], cwd=PROJECT_DIR,
                              capture_output=True, text=True, timeout=60)

    same = kvpool(previews / "old", previews / "old", "--stack", "dev", "--exit-code")
    assert (same.returncode, same.stdout) == (
        0,
        f"Diff: 0 to create, 0 to update, 0 to delete, {preview_files(previews / 'old')} unchanged\n"
        "Blast radius: 0 workloads roll, 0 replaced; KV pool keeps its contents.\n",
    )
    assert kvpool(previews / "old", previews / "new", "--stack", "dev", "--exit-code").returncode == 1
    assert kvpool(previews / "old", previews / "new", "--stack", "dev").returncode == 0
    missing = kvpool(previews / "old", previews / "nowhere", "--stack", "dev")
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"error: {previews / 'nowhere'}/dev: no preview of stack 'dev'")
    with pytest.raises(MissingPreviewError):
        changes(previews / "old", previews / "nowhere", "dev")
