"""Issue 45 §2 and §3: a link committed where the command writes is refused, naming it, and what it points to is left
as it was (the preview used to write into a linked `manifests` folder and delete the YAML files there); a path the
system refuses (a file where a folder goes, /proc, a name too long) is refused input (exit 1), not an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kvpool.cli.commands.cli import main
from tests.program_runs import PROJECT_DIR
from tests.service_configs import memcache_pool
from tests.test_importer import write_pair

LINK_REFUSAL = "is a symbolic link (to {target!r}); kvpool writes no file through a link it did not make: remove the " \
               "link, or name the real folder"


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """A folder outside the project that a link points into, holding a file nothing may touch."""
    folder = tmp_path / "victim"
    folder.mkdir()
    (folder / "kept.yaml").write_text("kept: true\n")
    return folder


def refused(capsys, argv: list[str]) -> str:
    assert main(argv) == 1
    return capsys.readouterr().err


def untouched(victim: Path) -> None:
    assert sorted(path.name for path in victim.iterdir()) == ["kept.yaml"]
    assert (victim / "kept.yaml").read_text() == "kept: true\n"


def test_a_linked_manifests_folder_is_refused_and_its_target_kept(tmp_path, victim, capsys):
    out = tmp_path / "out"
    (out / "dev").mkdir(parents=True)
    (out / "dev" / "manifests").symlink_to(victim)
    err = refused(capsys, ["preview", "--project-dir", str(PROJECT_DIR), "--stack", "dev", "--out", str(out)])
    assert err == f"error: {out / 'dev' / 'manifests'} {LINK_REFUSAL.format(target=str(victim))}\n"
    untouched(victim)


def test_a_linked_outputs_json_is_refused(tmp_path, victim, capsys):
    out = tmp_path / "out"
    (out / "dev").mkdir(parents=True)
    (out / "dev" / "outputs.json").symlink_to(victim / "kept.yaml")
    err = refused(capsys, ["preview", "--project-dir", str(PROJECT_DIR), "--stack", "dev", "--out", str(out)])
    assert err == f"error: {out / 'dev' / 'outputs.json'} {LINK_REFUSAL.format(target=str(victim / 'kept.yaml'))}\n"
    untouched(victim)


def test_a_linked_schema_file_is_refused(tmp_path, victim, capsys):
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(PROJECT_DIR / "Pulumi.yaml", project)
    schema = project / "stacks" / "stack-file.schema.json"
    schema.symlink_to(victim / "kept.yaml")
    err = refused(capsys, ["stack-schema", "--project-dir", str(project)])
    assert err == f"error: {schema} {LINK_REFUSAL.format(target=str(victim / 'kept.yaml'))}\n"
    untouched(victim)


def test_a_linked_component_package_entry_point_is_refused(tmp_path, victim, capsys):
    package = tmp_path / "package"
    package.mkdir()
    (package / "__main__.py").symlink_to(victim / "kept.yaml")
    err = refused(capsys, ["component-package", str(package)])
    assert err == f"error: {package / '__main__.py'} {LINK_REFUSAL.format(target=str(victim / 'kept.yaml'))}\n"
    untouched(victim)


def test_import_force_does_not_overwrite_through_a_linked_stack_file(tmp_path, victim, capsys):
    user_config, env = write_pair(tmp_path / "motor", memcache_pool())
    stacks = tmp_path / "stacks"
    stacks.mkdir()
    (stacks / "Pulumi.svc.yaml").symlink_to(victim / "kept.yaml")
    err = refused(capsys, ["import", "--user-config", str(user_config), "--env-config", str(env), "--stack", "svc",
                           "--stacks-dir", str(stacks), "--force"])
    assert err == f"error: {stacks / 'Pulumi.svc.yaml'} {LINK_REFUSAL.format(target=str(victim / 'kept.yaml'))}\n"
    untouched(victim)


def test_a_component_package_dir_that_is_a_file_is_named(tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    err = refused(capsys, ["component-package", str(tmp_path / "afile")])
    assert err == f"error: DIR {tmp_path / 'afile'} is a file; name a folder (created when missing)\n"


def test_paths_the_system_refuses_are_refused_input_with_the_systems_reason(capsys):
    assert refused(capsys, ["component-package", "/proc/self/kvpool-package"]) == (
        "error: /proc/self/kvpool-package: No such file or directory\n")
    long_name = "a" * 5000
    first_read = f"{long_name}/policies/PulumiPolicy.yaml"  # the first file the preview looks for in the project
    assert refused(capsys, ["--project-dir", long_name, "preview", "--stack", "dev"]) == (
        f"error: {'a' * 200}... ({len(first_read)} characters): File name too long\n")
