"""`python -m kvpool preview` as a user runs it (subprocess), and the preview() function it wraps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kvpool.cli.preview import preview
from tests.policy_fixtures import POLICY_COUNT
from tests.wheel import VERSION

REPOSITORY = Path(__file__).resolve().parent.parent
PROGRAMS = REPOSITORY / "tests" / "fixtures" / "programs"
DemoRuns = tuple[subprocess.CompletedProcess[str], Path, Path]


def kvpool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvpool", *map(str, args)],
        cwd=REPOSITORY,
        capture_output=True,
        text=True,
        timeout=60,
    )


def preview_fixture(name: str, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return kvpool("preview", "--stack", "dev", "--project-dir", PROGRAMS / name, "--out", out, *extra)


def files_below(directory: Path) -> dict[str, bytes]:
    files = sorted(path for path in directory.rglob("*") if path.is_file())
    return {str(path.relative_to(directory)): path.read_bytes() for path in files}


@pytest.fixture(scope="module")
def demo_twice(tmp_path_factory: pytest.TempPathFactory) -> DemoRuns:
    """Two previews of the same fixture into two folders: the first run's process, and both folders."""
    first, second = tmp_path_factory.mktemp("first"), tmp_path_factory.mktemp("second")
    result = preview_fixture("kv-demo", first)
    assert preview_fixture("kv-demo", second).returncode == 0
    return result, first, second


def test_preview_prints_the_resource_tree_and_a_summary(demo_twice: DemoRuns) -> None:
    result, out, _ = demo_twice

    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout == (
        "pulumi:pulumi:Stack  kv-demo-dev\n"
        "    fixture:index:EnginePool  decode\n"
        "        kubernetes:apps/v1:Deployment  decode-engine\n"
        "        kubernetes:core/v1:Service  decode-engine\n"
        "    kubernetes:core/v1:ConfigMap  engine-settings\n"
        "    kubernetes:core/v1:Namespace  demo\n"
        "    kubernetes:core/v1:Secret  engine-token\n"
        "    kubernetes:mindcluster.huawei.com/v1:InferServiceSet  decode-set\n"
        "\n"
        "Resources: 8\n"
        "      1  fixture:index:EnginePool\n"
        "      1  kubernetes:apps/v1:Deployment\n"
        "      1  kubernetes:core/v1:ConfigMap\n"
        "      1  kubernetes:core/v1:Namespace\n"
        "      1  kubernetes:core/v1:Secret\n"
        "      1  kubernetes:core/v1:Service\n"
        "      1  kubernetes:mindcluster.huawei.com/v1:InferServiceSet\n"
        "      1  pulumi:pulumi:Stack\n"
        "Manifests: 5 validated against Kubernetes 1.30 (strict), 1 not schema-checked\n"
        "    InferServiceSet demo/decode-set (mindcluster.huawei.com/v1): no schema bundled for this kind\n"
        'Outputs: 6 (1 secret, written as "[secret]")\n'
        "Program log:\n"
        "    info: engine image registry.local/engine:1.4.2\n"
        f"Wrote {out}/dev/manifests/ (6 files) and {out}/dev/outputs.json\n"
        "\n"
        f"Policies: motor-kvpool {VERSION}: 0 mandatory, 0 advisory violations ({POLICY_COUNT} policies)\n"  # no pack of its own
    )


def test_outputs_json_is_sorted_with_ints_and_masked_secrets(demo_twice: DemoRuns) -> None:
    _, out, _ = demo_twice

    assert (out / "dev" / "outputs.json").read_text() == (
        "{\n"
        '  "engine": {\n'
        '    "port": 8080,\n'
        '    "service": "decode-engine"\n'
        "  },\n"
        '  "mode": "default",\n'
        '  "namespace": "demo",\n'
        '  "runtime": {\n'
        '    "in_project_dir": true,\n'
        '    "organization": "organization",\n'
        '    "project": "kv-demo",\n'
        '    "stack": "dev"\n'
        "  },\n"
        '  "settings_immutable": "[unknown]",\n'
        '  "token": "[secret]"\n'
        "}\n"
    )


def test_two_runs_write_byte_identical_files(demo_twice: DemoRuns) -> None:
    _, first_out, second_out = demo_twice

    first, second = files_below(first_out), files_below(second_out)
    assert len(first) == 7
    assert first == second


def test_invalid_manifests_exit_1_listing_every_problem_and_write_nothing(tmp_path: Path) -> None:
    result = preview_fixture("bad-manifest-field", tmp_path)

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        "error: manifests: 2 problems (strict schema and API-server checks)\n"
        "  - Deployment demo/engine: $.spec.template.spec.containers[0]: Additional properties are not allowed "
        "('imagePullPolcy' was unexpected) (Kubernetes 1.30)\n"
        "  - Service demo/engine: $.spec.ports[0].port: 'eighty' is not of type 'integer' (Kubernetes 1.30)\n"
    )
    assert not (tmp_path / "dev").exists()


def test_a_program_error_exits_1_with_its_message_and_no_traceback(tmp_path: Path) -> None:
    result = preview_fixture("raises-run-error", tmp_path)

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: motor_deploy_config.p_instances_num: must be at least 1, got 0\n"


def test_an_unknown_stack_exits_1_naming_the_stacks_that_exist(tmp_path: Path) -> None:
    result = kvpool("preview", "--stack", "prod", "--project-dir", PROGRAMS / "kv-demo", "--out", tmp_path)

    stacks = PROGRAMS / "kv-demo" / "stacks"
    assert result.returncode == 1
    assert result.stderr == (
        f"error: no stack file {stacks / 'Pulumi.prod.yaml'} for stack 'prod' (stacks in {stacks}: dev)\n"
    )


def test_an_internal_error_exits_2_with_a_one_line_message_and_a_hint(tmp_path: Path) -> None:
    result = preview_fixture("raises-type-error", tmp_path)

    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        'internal error: TypeError: can only concatenate str (not "int") to str\n'
        "run with --debug for the traceback\n"
    )


def test_debug_shows_the_traceback_of_an_internal_error(tmp_path: Path) -> None:
    result = preview_fixture("raises-type-error", tmp_path, "--debug")

    assert result.returncode == 2
    assert result.stderr.startswith("Traceback (most recent call last):\n")
    assert 'raises-type-error/__main__.py", line 6, in <module>' in result.stderr
    assert result.stderr.endswith('internal error: TypeError: can only concatenate str (not "int") to str\n')


def test_a_usage_error_exits_1() -> None:
    result = kvpool("preview")

    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: the following arguments are required: --stack\nusage: python -m kvpool preview [-h] --stack STACK"
    )


def test_preview_function_returns_what_it_wrote(tmp_path: Path) -> None:
    result = preview(PROGRAMS / "kv-demo", "dev", tmp_path, "1.31")

    assert result.validation.kubernetes_version == "1.31"
    assert result.outputs_file == tmp_path / "dev" / "outputs.json"
    assert sorted(path.name for path in result.manifest_files)[0] == "configmap-demo-engine-settings.yaml"
    assert all(path.parent == tmp_path / "dev" / "manifests" for path in result.manifest_files)
    assert result.policy_report is None  # kv-demo has no kvpool/policies/ folder and none was named


def test_a_command_parses_without_importing_the_other_commands() -> None:
    probe = (
        "import sys; from kvpool.cli.commands import cli; "
        "args = cli.build_parser(['--debug', 'preview', '--stack', 'dev']).parse_args(['--debug', 'preview', '--stack', 'dev']); "
        "print(args.stack, args.debug, sorted(m for m in sys.modules if m.startswith('kvpool.cli.commands.')))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=REPOSITORY, capture_output=True, text=True, timeout=60)

    # The command's module and what every command shares (its exit codes, its options), no other command's.
    assert result.stdout == ("dev True ['kvpool.cli.commands.cli', 'kvpool.cli.commands.exit_codes', "
                             "'kvpool.cli.commands.options', 'kvpool.cli.commands.preview_cmd']\n"), result.stderr


def test_an_unknown_command_lists_every_command() -> None:
    result = kvpool("previe", "--stack", "dev")

    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: argument COMMAND: invalid choice: 'previe' (choose from 'preview', 'diff', 'import', 'settings', 'fleet', 'size', "
        "'policy-pack-dir', 'stack-schema', 'component-package')"
    )


def test_a_project_file_for_another_runtime_exits_1_naming_the_field_and_the_fix(tmp_path: Path) -> None:
    """Issue 45 §5: `runtime: nodejs` previewed this Python program clean; `pulumi up` would run another one."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "Pulumi.yaml").write_text("name: kv-demo\nruntime: nodejs\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    (project / "__main__.py").write_text("import pulumi\n")
    result = kvpool("preview", "--stack", "dev", "--project-dir", project, "--out", tmp_path / "out")

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == (
        f"error: {project / 'Pulumi.yaml'}: runtime: is 'nodejs', but this project is a Python program: the Pulumi "
        "CLI would run it with the language host of 'nodejs' (pulumi-language-nodejs), not this program; write "
        "`runtime: python`\n"
    )
    assert not (tmp_path / "out").exists()


def test_preview_runs_the_program_pulumi_yamls_main_names(tmp_path: Path) -> None:
    """Issue 45 §5: with `main: src/` the preview ran ./__main__.py, while `pulumi up` runs src/__main__.py."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text("name: kv-demo\nruntime: python\nmain: src/\n")
    (project / "Pulumi.dev.yaml").write_text("config: {}\n")
    (project / "__main__.py").write_text("raise SystemExit('the project folder program ran')\n")
    (project / "src" / "__main__.py").write_text("import os\nimport pulumi\npulumi.export('cwd', os.getcwd())\n")
    result = kvpool("preview", "--stack", "dev", "--project-dir", project, "--out", tmp_path / "out", "--no-policy")

    assert result.returncode == 0, result.stderr
    assert '"cwd": ' + f'"{(project / "src").resolve()}"' in (tmp_path / "out" / "dev" / "outputs.json").read_text()
