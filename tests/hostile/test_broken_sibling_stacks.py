"""Issue 45 §6: one broken sibling stack file blocks no other stack. A preview of dev (and an owner's diff) reads the
project's other stack files (for cluster clashes, for the owner's consumers); a sibling whose file is refused is said
in one line naming the file, and the preview goes on. The previewed stack's own file still fails as before."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Callable

import pytest

from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.offline import check_cluster_clashes, consumers_of
from kvpool.errors import KvpoolError
from tests.hostile.test_bad_inputs import DEV, TIMEOUT, refused

REPOSITORY = Path(__file__).resolve().parents[2]
CHECKED = "was not checked for what its cluster allocates once (NodePorts, namespaces): its stack file is refused"


def _invalid_yaml(path: Path) -> None:
    path.write_text("config:\n  motor-kvpool:x: [\n")


def _folder(path: Path) -> None:
    path.mkdir()


def _process_memory(path: Path) -> None:
    path.symlink_to("/proc/self/mem")


def _huge(path: Path) -> None:
    path.write_bytes(b"#" * (2 * 1024 * 1024))


def _invalid_value(path: Path) -> None:
    path.write_text(DEV.replace("p_pod_npu_num: 2", "p_pod_npu_num: many", 1))


BROKEN: dict[str, tuple[Callable[[Path], None], str]] = {
    "invalid YAML": (_invalid_yaml, "{file}:3:1: invalid YAML: expected the node content, but found '<stream end>'"),
    "a folder": (_folder, "{file}: is a folder, not a file"),
    "a link to /proc/self/mem": (_process_memory, "{file}: cannot read it: Input/output error"),
    "over 1 MiB": (_huge, "{file}: larger than 1024 KiB; this is not a configuration file"),
    "an invalid value": (_invalid_value, "stack 'broken': 1 problem, the first: motor_deploy_config.p_pod_npu_num: "
                         '"many" is not a whole number; write a whole number without quotes, e.g. 2'),
}


def with_stacks(project: Path, *names: str) -> Path:
    for name in names:
        shutil.copy(REPOSITORY / "stacks" / f"Pulumi.{name}.yaml", project / "stacks")
    return project


@pytest.mark.parametrize("kind", BROKEN)
def test_a_broken_sibling_is_said_in_one_line_and_the_clash_check_goes_on(project: Path, kind: str) -> None:
    with_stacks(project, "dev", "service-a")
    make, detail = BROKEN[kind]
    broken = project / "stacks" / "Pulumi.broken.yaml"
    make(broken)
    assert check_cluster_clashes(project, load_stack_config(project, "dev")) == [
        f"stack broken ({broken}) {CHECKED}: {detail.format(file=broken)}"
    ]


def test_a_broken_consumer_is_said_in_the_owners_diff_and_the_others_are_found(project: Path) -> None:
    with_stacks(project, "service-a", "service-b")
    broken = project / "stacks" / "Pulumi.broken.yaml"
    _invalid_yaml(broken)
    unread: list[str] = []
    owner, consumers = consumers_of(project, "service-a", unread)
    assert (owner, consumers) == ("organization/motor-kvpool/service-a", ["organization/motor-kvpool/service-b"])
    assert unread == [
        f"stack broken ({broken}) may read service-a's store, but its stack file is refused: "
        f"{broken}:3:1: invalid YAML: expected the node content, but found '<stream end>'"
    ]


def test_the_destroy_guard_still_stops_at_a_broken_sibling(project: Path) -> None:
    # a consumer may be in the file it cannot read: destroying the owner is not said safe
    with_stacks(project, "service-a")
    broken = project / "stacks" / "Pulumi.broken.yaml"
    _invalid_yaml(broken)
    with pytest.raises(KvpoolError) as caught:
        consumers_of(project, "service-a")
    assert str(caught.value) == f"{broken}:3:1: invalid YAML: expected the node content, but found '<stream end>'"


def preview(project: Path, stack: str, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kvpool", "preview", "--stack", stack, "--project-dir", project,
                           "--out", out, "--no-policy"], cwd=REPOSITORY, capture_output=True, text=True,
                          timeout=TIMEOUT, env={**os.environ, "PYTHONPATH": str(REPOSITORY)})


def test_dev_previews_beside_a_broken_sibling(project: Path, tmp_path: Path) -> None:
    with_stacks(project, "dev")
    broken = project / "stacks" / "Pulumi.broken.yaml"
    _invalid_yaml(broken)
    result = preview(project, "dev", tmp_path / "out")
    assert result.returncode == 0, result.stderr
    assert result.stderr == (f"note: stack broken ({broken}) {CHECKED}: {broken}:3:1: invalid YAML: expected the node "
                             "content, but found '<stream end>'\n")


def test_a_broken_own_stack_file_still_fails_the_preview(project: Path, tmp_path: Path) -> None:
    with_stacks(project, "service-a")
    _invalid_yaml(project / "stacks" / "Pulumi.dev.yaml")
    refused(preview(project, "dev", tmp_path / "out"),
            f"{project / 'stacks' / 'Pulumi.dev.yaml'}:3:1: invalid YAML: expected the node content")
