"""The wheel holds the kvpool package with its data and gives a `kvpool` command that previews a project from any
directory, with the runtime requirements and not the test tools; `make help` lists the targets and the first `make preview` says what it
installs and shows pip's progress."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.policy_fixtures import POLICY_COUNT
from tests.program_runs import PROJECT_DIR
from tests.service_configs import as_motor_files, mooncake_pool
from tests.test_examples import project_copy
from tests.wheel import VERSION, build_wheel

RUNTIME_REQUIREMENTS = ("requirements.txt", "kvpool/policies/requirements.txt", "kvpool/cli/requirements.txt")


def pins(*files: str) -> set[str]:
    lines = set()
    for name in files:
        text = (PROJECT_DIR / name).read_text()
        lines |= {line for line in text.splitlines() if line and not line.startswith(("#", "-r "))}
    return lines


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="module")
def installed(wheel: Path, tmp_path_factory) -> Path:
    """The wheel installed into a folder of its own (its dependencies are the venv's)."""
    site = tmp_path_factory.mktemp("install") / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--no-index",
         "--target", str(site), str(wheel)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return site


def kvpool_command(site: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(site / "bin" / "kvpool"), *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(site)},
                          capture_output=True, text=True, timeout=300)


def test_the_wheel_holds_the_package_its_data_and_nothing_else(wheel: Path) -> None:
    assert wheel.name == f"motor_kvpool-{VERSION}-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"kvpool", f"motor_kvpool-{VERSION}.dist-info"}
    assert {
        "kvpool/policies/PulumiPolicy.yaml", "kvpool/policies/__main__.py", "kvpool/policies/requirements.txt",
        "kvpool/settings/passthrough_schema.json", "kvpool/cli/requirements.txt", "kvpool/program/__init__.py",
        "kvpool/components/kv_store/component.py",
    } <= set(names)
    sources = {path.relative_to(PROJECT_DIR).as_posix() for path in (PROJECT_DIR / "kvpool").rglob("*.py")}
    assert sources <= set(names)


def test_the_package_requires_the_runtime_pins_and_no_test_tool(installed: Path) -> None:
    metadata = next(installed.glob(f"motor_kvpool-{VERSION}.dist-info")) / "METADATA"
    required = {line.removeprefix("Requires-Dist: ") for line in metadata.read_text().splitlines()
                if line.startswith("Requires-Dist: ")}
    assert required == pins(*RUNTIME_REQUIREMENTS)
    assert {"pulumi-policy==1.21.0", "pydantic==2.14.4", "kubernetes-validate==1.37.0"} <= required
    assert not {pin for pin in required if re.match(r"(pytest|hypothesis|ruff|transformers)==", pin)}
    assert pins("requirements-dev.txt").isdisjoint(required)  # the dev file adds test tools only


def test_the_versions_agree() -> None:
    """The package's version (pyproject.toml reads kvpool.__version__; the component package reports it) is the policy
    pack's (the engine prints it) and the CHANGELOG's newest entry."""
    assert f"version: {VERSION}\n" in (PROJECT_DIR / "kvpool" / "policies" / "PulumiPolicy.yaml").read_text()
    assert f'__version__ = "{VERSION}"\n' in (PROJECT_DIR / "kvpool" / "__init__.py").read_text()
    newest = re.search(r"^## (\S+)", (PROJECT_DIR / "CHANGELOG.md").read_text(), flags=re.MULTILINE)
    assert newest and newest.group(1) == VERSION


def test_kvpool_previews_a_project_from_another_directory(installed: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = kvpool_command(installed, "preview", "--stack", "dev", "--project-dir", str(PROJECT_DIR), "--out", "out",
                          cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert f"Policies: motor-kvpool {VERSION}: 0 mandatory, 0 advisory violations ({POLICY_COUNT} policies)" in done.stdout
    assert (elsewhere / "out" / "dev" / "manifests" / "namespace-_cluster-dev.yaml").is_file()
    lost = kvpool_command(installed, "settings", "--stack", "dev", cwd=elsewhere)
    assert (lost.returncode, lost.stderr) == (
        1, f"error: no Pulumi.yaml in {elsewhere.resolve()}: not a Pulumi project; run kvpool in the project's folder "
           "or name it with --project-dir DIR\n"
    )


def test_kvpool_names_the_policy_pack_it_installed(installed: Path, tmp_path: Path) -> None:
    done = kvpool_command(installed, "policy-pack-dir", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"{(installed / 'kvpool' / 'policies').resolve()}\n"


def test_kvpool_help_outside_a_project_says_what_it_is_and_how_to_name_one(installed: Path, tmp_path: Path) -> None:
    done = kvpool_command(installed, "--help", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[:5] == [
        "usage: kvpool [--project-dir DIR] COMMAND [options]",
        "",
        "The offline tooling of a motor-kvpool project (no Pulumi CLI needed): it runs",
        "the project's program and policy pack, in the project's folder or on the one",
        "--project-dir DIR names. `kvpool COMMAND --help` shows a command's options.",
    ]
    bare = kvpool_command(installed, cwd=tmp_path)
    assert bare.returncode == 1
    assert bare.stderr.startswith("error: the following arguments are required: COMMAND\nusage: kvpool [--project-dir DIR]")


def test_the_project_dir_may_come_before_the_command(installed: Path, tmp_path: Path) -> None:
    done = kvpool_command(installed, "--project-dir", str(PROJECT_DIR), "settings", "--stack", "dev", "--section",
                          "motor_deploy_config", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    assert json.loads(done.stdout)["hardware_type"] == "800I_A2"


def test_import_writes_into_the_project_dir_from_anywhere(installed: Path, tmp_path: Path) -> None:
    project = project_copy(tmp_path)
    source = tmp_path / "motor"
    source.mkdir()
    user_config, env = as_motor_files(mooncake_pool())
    (source / "user_config.json").write_text(json.dumps(user_config))
    (source / "env.json").write_text(json.dumps(env))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = kvpool_command(installed, "import", "--project-dir", str(project), "--config-dir", str(source),
                          "--stack", "svc", cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == f"wrote {project / 'stacks' / 'Pulumi.svc.yaml'}"
    assert done.stdout.splitlines()[-1].endswith(f"kvpool preview --stack svc --project-dir {project}")
    assert list(elsewhere.iterdir()) == []


def make(*args: str) -> str:
    done = subprocess.run(["make", "--no-print-directory", *args], cwd=PROJECT_DIR, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_make_help_lists_the_targets() -> None:
    assert make("help").splitlines() == [
        "make help     list these targets",
        "make preview  offline preview of STACK (default dev): prints the plan, writes out/<stack>/",
        "make test     the whole test suite (needs root, Go and the one-time engine build; see README)",
    ]


def test_the_first_make_preview_says_what_it_installs_and_shows_progress(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    assert make("-n", "preview", f"VENV={venv}").splitlines() == [
        f'echo "Creating {venv} and installing requirements.txt kvpool/policies/requirements.txt kvpool/cli/requirements.txt '
        '(once; about a minute)"',
        f"python3 -m venv {venv}",
        f"{venv}/bin/python -m pip install --disable-pip-version-check --progress-bar on -c constraints.txt "
        "-r requirements.txt -r kvpool/policies/requirements.txt -r kvpool/cli/requirements.txt",
        f"touch {venv}/.installed-runtime",
        f"{venv}/bin/python -m kvpool preview --stack dev --out out",
    ]


def canonical(pin: str) -> str:
    """A pin with its name as pip compares names (PEP 503): `Pillow==13.0.0` is `pillow==13.0.0`."""
    name, _, version = pin.partition("==")
    return f"{re.sub(r'[-_.]+', '-', name).lower()}=={version}"


def test_constraints_pin_every_requirement_at_its_own_version() -> None:
    """constraints.txt is a full `pip freeze`: each requirement file's pin is in it as written (a drift would make pip
    refuse the install), and it pins every package it names."""
    constraints = {canonical(pin) for pin in pins("constraints.txt")}
    assert {canonical(pin) for pin in pins(*RUNTIME_REQUIREMENTS, "requirements-dev.txt")} - constraints == set()
    assert [line for line in constraints if not re.fullmatch(r"[A-Za-z0-9_.-]+==[A-Za-z0-9_.+!-]+", line)] == []
