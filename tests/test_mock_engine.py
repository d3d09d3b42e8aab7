"""kvpool.cli.engine.mock_engine: fixture programs run under the SDK's mocks; what the engine would receive is recorded."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from kvpool.cli.engine.mock_engine import (
    MockEngineError,
    ProgramError,
    ProgramRun,
    StackReferenceError,
    run_program,
)
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.internal import sdk_internals

PROGRAMS = Path(__file__).parent / "fixtures" / "programs"
STACK_URN = "urn:pulumi:dev::kv-demo::pulumi:pulumi:Stack::kv-demo-dev"
POOL_URN = "urn:pulumi:dev::kv-demo::pulumi:pulumi:Stack$fixture:index:EnginePool::decode"
KV_STORE = "organization/kv-store/dev"


def run_fixture(name: str, **options) -> ProgramRun:
    return run_program(PROGRAMS / name, load_stack_config(PROGRAMS / name, "dev"), **options)


@pytest.fixture(scope="module")
def demo() -> ProgramRun:
    return run_fixture("kv-demo")


def test_records_every_resource_with_its_urn_sorted(demo: ProgramRun) -> None:
    assert [(r.type, r.name) for r in demo.resources] == [
        ("kubernetes:apps/v1:Deployment", "decode-engine"),
        ("kubernetes:core/v1:Service", "decode-engine"),
        ("fixture:index:EnginePool", "decode"),
        ("kubernetes:core/v1:ConfigMap", "engine-settings"),
        ("kubernetes:core/v1:Namespace", "demo"),
        ("kubernetes:core/v1:Secret", "engine-token"),
        ("kubernetes:mindcluster.huawei.com/v1:InferServiceSet", "decode-set"),
        ("pulumi:pulumi:Stack", "kv-demo-dev"),
    ]


def test_children_record_their_parent_urn(demo: ProgramRun) -> None:
    deployment = demo.resource("kubernetes:apps/v1:Deployment", "decode-engine")
    pool = demo.resource("fixture:index:EnginePool", "decode")

    assert deployment.urn == (
        "urn:pulumi:dev::kv-demo::fixture:index:EnginePool$kubernetes:apps/v1:Deployment::decode-engine"
    )
    assert deployment.parent_urn == POOL_URN
    assert (pool.urn, pool.parent_urn, pool.custom, pool.inputs) == (POOL_URN, STACK_URN, False, {})
    assert demo.resource("pulumi:pulumi:Stack", "kv-demo-dev").parent_urn is None


def test_inputs_arrive_kubernetes_shaped_with_numbers_as_floats(demo: ProgramRun) -> None:
    deployment = demo.resource("kubernetes:apps/v1:Deployment", "decode-engine")

    assert deployment.custom is True
    assert deployment.inputs["apiVersion"] == "apps/v1"
    assert deployment.inputs["spec"]["replicas"] == 2.0
    assert isinstance(deployment.inputs["spec"]["replicas"], float)
    assert deployment.inputs["spec"]["template"]["spec"]["containers"] == [
        {"image": "registry.local/engine:1.4.2", "name": "engine"}
    ]


def test_options_and_dependencies_are_recorded(demo: ProgramRun) -> None:
    config_map = demo.resource("kubernetes:core/v1:ConfigMap", "engine-settings")
    service = demo.resource("kubernetes:core/v1:Service", "decode-engine")

    assert config_map.protect is True
    assert config_map.dependencies == (
        "urn:pulumi:dev::kv-demo::pulumi:pulumi:Stack$kubernetes:core/v1:Namespace::demo",
    )
    assert service.protect is False
    assert service.dependencies == (
        "urn:pulumi:dev::kv-demo::fixture:index:EnginePool$kubernetes:apps/v1:Deployment::decode-engine",
    )


def test_secrets_are_unwrapped_and_their_exact_paths_remembered(demo: ProgramRun) -> None:
    secret = demo.resource("kubernetes:core/v1:Secret", "engine-token")

    assert secret.inputs["stringData"] == {"salt": "s3cr3t-salt", "token": "[secret]"}
    assert secret.secret_paths == (("stringData",),)


def test_exports_are_resolved_with_secret_and_unknown_paths(demo: ProgramRun) -> None:
    assert demo.outputs == {
        "engine": {"port": 8080.0, "service": "decode-engine"},
        "mode": "default",
        "namespace": "demo",
        "runtime": {"in_project_dir": True, "organization": "organization", "project": "kv-demo", "stack": "dev"},
        "settings_immutable": "[unknown]",
        "token": "[secret]",
    }
    assert demo.secret_output_paths == (("token",),)
    assert demo.unknown_output_paths == (("settings_immutable",),)


def test_outside_a_preview_a_value_the_provider_did_not_return_is_none_and_not_exported() -> None:
    run = run_fixture("kv-demo", preview=False)

    assert "settings_immutable" not in run.outputs
    assert run.unknown_output_paths == ()


def test_program_log_messages_are_returned_not_printed(demo: ProgramRun, capsys: pytest.CaptureFixture[str]) -> None:
    assert demo.log_messages == ["info: engine image registry.local/engine:1.4.2"]
    run_fixture("kv-demo")
    assert capsys.readouterr() == ("", "")


def test_run_error_becomes_program_error_with_the_message_only() -> None:
    with pytest.raises(ProgramError) as raised:
        run_fixture("raises-run-error")

    assert str(raised.value) == "motor_deploy_config.p_instances_num: must be at least 1, got 0"
    assert raised.value.__cause__ is None and raised.value.__suppress_context__


def test_an_error_inside_apply_surfaces_as_program_error() -> None:
    with pytest.raises(ProgramError) as raised:
        run_fixture("raises-in-apply")

    assert str(raised.value) == (
        "stack 'dev': 1 problem\n  - namespace 'kube-system' is reserved; choose another motor_deploy_config.job_id"
    )


def test_a_program_bug_propagates_unchanged() -> None:
    with pytest.raises(TypeError, match=r'can only concatenate str \(not "int"\) to str'):
        run_fixture("raises-type-error")


def test_a_failed_run_does_not_poison_the_next_one(demo: ProgramRun) -> None:
    with pytest.raises(ProgramError):
        run_fixture("raises-in-apply")
    after_failure = run_fixture("kv-demo")

    assert after_failure == demo
    assert sdk_internals.leftover_state() == (None, {}, 0)


def test_stack_reference_outputs_come_from_the_given_stacks() -> None:
    stack_references = {KV_STORE: {"kv_store": {"host": "kv.demo.svc", "port": 6379}, "password": "pw"}}
    run = run_fixture("stack-reference", stack_references=stack_references)
    reference = run.resource("pulumi:pulumi:StackReference", KV_STORE)

    # A read is recorded with its state, as AnalyzeStack shows it: the referenced stack's outputs.
    assert (reference.custom, reference.resource_id, reference.inputs) == (
        True, KV_STORE, {"name": KV_STORE, "outputs": {"kv_store": {"host": "kv.demo.svc", "port": 6379.0}, "password": "pw"}}
    )
    assert run.resource("kubernetes:core/v1:ConfigMap", "kv-endpoint").inputs["data"] == {
        "KVS_MASTER_SERVICE": "kv.demo.svc:6379"
    }
    assert run.outputs == {"kv_password": "pw", "kv_store_host": "kv.demo.svc"}


def test_a_stack_reference_to_an_unknown_stack_names_it() -> None:
    with pytest.raises(StackReferenceError) as raised:
        run_fixture("stack-reference", stack_references={"organization/other/dev": {}})

    assert str(raised.value) == (
        "the program references stack 'organization/kv-store/dev', but this preview has no outputs for it "
        "(known stacks: organization/other/dev)"
    )


def test_duplicate_urns_are_rejected_like_the_engine_does() -> None:
    with pytest.raises(MockEngineError) as raised:
        run_fixture("duplicate-urn")

    assert str(raised.value) == (
        "Duplicate resource URN 'urn:pulumi:dev::duplicate-urn::pulumi:pulumi:Stack$kubernetes:core/v1:ConfigMap"
        "::settings'; try giving it a unique name"
    )


def test_provider_function_calls_are_refused_clearly() -> None:
    with pytest.raises(MockEngineError) as raised:
        run_fixture("calls-provider-function")

    assert str(raised.value) == (
        "the program calls the provider function 'kubernetes:yaml:decode', which the offline preview cannot answer"
    )


def test_cwd_sys_path_and_environment_are_restored_and_program_modules_forgotten(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PULUMI_CONFIG", '{"kv-demo:mode": "leaked-from-the-shell"}')
    cwd, path = os.getcwd(), list(sys.path)

    run = run_fixture("kv-demo")

    assert run.outputs["mode"] == "default"
    assert (os.getcwd(), sys.path) == (cwd, path)
    assert os.environ["PULUMI_CONFIG"] == '{"kv-demo:mode": "leaked-from-the-shell"}'
    assert "engine_pool" not in sys.modules
    assert "pulumi_kubernetes.apps.v1" in sys.modules


def test_this_packages_modules_outlive_a_run_of_the_repositorys_own_program() -> None:
    """The repository's project folder holds kvpool/ itself: a run must not leave the tooling a second copy of a
    module (and of its classes) that the run imported first."""
    from tests.policy_fixtures import program

    program("dev")
    first = sys.modules["kvpool.program"], sys.modules["kvpool.components.kv_store.endpoint"]
    program("dev")
    assert (sys.modules["kvpool.program"], sys.modules["kvpool.components.kv_store.endpoint"]) == first


def test_the_program_runs_in_its_directory_as_project_stack_and_organization(demo: ProgramRun) -> None:
    assert demo.outputs["runtime"] == {
        "in_project_dir": True,
        "organization": "organization",
        "project": "kv-demo",
        "stack": "dev",
    }
    assert (demo.project, demo.stack, demo.stack_urn) == ("kv-demo", "dev", STACK_URN)


def test_modules_of_a_virtualenv_inside_the_project_folder_are_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    # The repository keeps its venv in the project folder; its packages must not be re-imported per run.
    monkeypatch.setattr(sys, "prefix", str(PROGRAMS / "kv-demo"))
    try:
        run_fixture("kv-demo")
        assert "engine_pool" in sys.modules
    finally:
        sys.modules.pop("engine_pool", None)


def test_runs_leave_no_warning_log_noise_open_loop_or_socket(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_fixture("kv-demo")
        with pytest.raises(ProgramError):
            run_fixture("raises-in-apply")
        with pytest.raises(StackReferenceError):
            run_fixture("stack-reference")
        gc.collect()  # what a failed run left for the garbage collector must not warn either

    assert [f"{w.category.__name__}: {w.message}" for w in caught] == []
    assert caplog.records == []
    assert capfd.readouterr() == ("", "")


def test_the_callers_ctrl_c_handler_survives_a_program_that_installs_its_own() -> None:
    """The project's __main__ handles the engine's SIGINT for its own process; run in ours, it must not keep it."""
    import signal

    from tests.program_runs import render_stack

    def callers_handler(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, callers_handler)
    try:
        render_stack("dev")
        assert signal.getsignal(signal.SIGINT) is callers_handler
    finally:
        signal.signal(signal.SIGINT, previous)


def test_the_engine_imports_none_of_the_programs_settings_or_components() -> None:
    """bench/floor.py runs a bare program through this engine as the floor: importing our settings models (pydantic)
    with it would charge the floor for our work."""
    script = "import sys, kvpool.cli.engine.mock_engine; print(sorted(m for m in sys.modules if m.split('.')[0] == 'pydantic' or (m.startswith('kvpool.') and not m.startswith('kvpool.cli'))))"
    imported = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).parent.parent, capture_output=True,
                              text=True, check=True).stdout
    assert imported.strip() == str(sorted([
        "kvpool.errors", "kvpool.internal", "kvpool.internal.input_files", "kvpool.internal.local_backend",
        "kvpool.settings", "kvpool.settings.namespace",
        "kvpool.internal.sdk_internals",
    ]))


@pytest.mark.parametrize(("main", "program", "runs_in"), [
    ("src/", "src/__main__.py", "src"),
    ("src", "src/__main__.py", "src"),
    ("app.py", "app.py", "."),
    ("src/app.py", "src/app.py", "src"),
    ("", "__main__.py", "."),
])
def test_the_program_pulumi_yamls_main_names_runs_in_its_folder_as_the_cli_runs_it(
        tmp_path: Path, main: str, program: str, runs_in: str) -> None:
    """Issue 45 §5: `pulumi up` runs `main` (pulumi's engine getPwdMain: a folder's __main__.py in that folder, a
    file in its own folder); the preview ran ./__main__.py whatever `main` said."""
    (tmp_path / "Pulumi.yaml").write_text(f"name: mains\nruntime: python\nmain: '{main}'\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "src").mkdir()
    for name in ("__main__.py", "app.py", "src/__main__.py", "src/app.py"):
        (tmp_path / name).write_text(f"import os\nimport pulumi\npulumi.export('ran', [{name!r}, os.getcwd()])\n")
    run = run_program(tmp_path, load_stack_config(tmp_path, "dev"))
    assert run.outputs["ran"] == [program, str((tmp_path / runs_in).resolve())]


def test_a_main_folder_without_its_program_is_refused_naming_it(tmp_path: Path) -> None:
    (tmp_path / "Pulumi.yaml").write_text("name: mains\nruntime: python\nmain: src/\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config: {}\n")
    (tmp_path / "__main__.py").write_text("import pulumi\n")
    (tmp_path / "src").mkdir()
    with pytest.raises(ProgramError) as raised:
        run_program(tmp_path, load_stack_config(tmp_path, "dev"))
    assert str(raised.value) == f"no __main__.py in {(tmp_path / 'src').resolve()}: the program to run"
