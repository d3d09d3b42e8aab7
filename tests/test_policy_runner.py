"""kvpool.cli.policy_host.runner: fixture policy packs run as the Pulumi CLI runs them, against the kv-demo program;
kvpool.cli.policy_host.pack_config's reconciliation; and `python -m kvpool preview` with a policy pack."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kvpool.cli.engine.mock_engine import ProgramRun, RecordedResource, run_program
from kvpool.cli.engine.property_values import (
    UNKNOWN_MASK,
    decode_properties,
    encode_properties,
)
from kvpool.cli.engine.stack_config import StackConfig, load_stack_config
from kvpool.cli.policy_host.pack_config import (
    PolicyConfig,
    PolicyConfigError,
    PolicyInfo,
    reconcile_policy_config,
)
from kvpool.cli.policy_host.pack_process import PolicyPackError
from kvpool.cli.policy_host.runner import (
    ANALYZE_WINDOW,
    PolicyReport,
    StartedPolicyPack,
    run_policy_pack,
)
from tests.policy_fixtures import POLICY_COUNT
from tests.wheel import VERSION

REPOSITORY = Path(__file__).resolve().parent.parent
PROGRAMS = REPOSITORY / "tests" / "fixtures" / "programs"
PACKS = REPOSITORY / "tests" / "fixtures" / "policy-packs"
DEMO_PACK = PACKS / "demo"

DEPLOYMENT = "kubernetes:apps/v1:Deployment decode-engine"
DEPLOYMENT_URN = "urn:pulumi:dev::kv-demo::fixture:index:EnginePool$kubernetes:apps/v1:Deployment::decode-engine"
PINNED = "The engine image is pinned by digest."
REPLICAS = "Deployments run enough replicas."
RUNS_UNPINNED = "runs registry.local/engine:1.4.2 (parent fixture:index:EnginePool decode)"
CONFIG_UNPINNED = "kv-demo:engine.image of stack dev is 'registry.local/engine:1.4.2'; pin it by digest"

DemoProgram = tuple[ProgramRun, StackConfig]


@pytest.fixture(scope="module")
def kv_demo() -> DemoProgram:
    config = load_stack_config(PROGRAMS / "kv-demo", "dev")
    return run_program(PROGRAMS / "kv-demo", config), config


@pytest.fixture(scope="module")
def default_report(kv_demo: DemoProgram) -> PolicyReport:
    return run_policy_pack(DEMO_PACK, *kv_demo)


def summary(report: PolicyReport) -> list[tuple[str, str, str, str]]:
    return [(v.policy_name, v.enforcement_level, v.resource_label, v.detail) for v in report.violations]


def child_pids() -> set[str]:
    """This process's children (Linux): a pack's process must be gone once run_policy_pack returns or raises."""
    pids = set()
    for path in Path("/proc/self/task").glob("*/children"):
        try:
            pids.update(path.read_text().split())
        except FileNotFoundError:  # the thread (a gRPC worker) ended between the listing and the read
            continue
    return pids


def test_the_report_lists_each_violation_with_level_resource_and_the_reported_message(
    default_report: PolicyReport,
) -> None:
    assert (default_report.pack_name, default_report.pack_version) == ("demo", "0.3.0")  # version: PulumiPolicy.yaml
    assert summary(default_report) == [
        ("image-pinned-by-digest", "mandatory", DEPLOYMENT, RUNS_UNPINNED),
        ("image-pinned-by-digest", "mandatory", "stack", CONFIG_UNPINNED),
        ("deployment-min-replicas", "advisory", DEPLOYMENT, "spec.replicas is 2, below minReplicas 3"),
    ]
    assert [(v.resource, v.description) for v in default_report.violations] == [
        (DEPLOYMENT_URN, PINNED),
        ("", PINNED),
        (DEPLOYMENT_URN, REPLICAS),
    ]
    assert default_report.mandatory == default_report.violations[:2]


def test_each_answer_is_about_its_own_resource_with_more_resources_than_calls_in_flight(kv_demo: DemoProgram) -> None:
    run, config = kv_demo
    deployments = [
        RecordedResource(
            type="kubernetes:apps/v1:Deployment",
            name=f"engine-{index:02d}",
            urn=f"urn:pulumi:dev::kv-demo::kubernetes:apps/v1:Deployment::engine-{index:02d}",
            parent_urn=None,
            custom=True,
            inputs={"spec": {"replicas": float(index % 3), "template": {"spec": {"containers": [{"image": "other"}]}}}},
        )
        for index in range(3 * ANALYZE_WINDOW)
    ]

    report = run_policy_pack(DEMO_PACK, dataclasses.replace(run, resources=deployments), config)

    replicas = [(v.resource_label, v.detail) for v in report.violations if v.policy_name == "deployment-min-replicas"]
    assert replicas == [
        (f"kubernetes:apps/v1:Deployment engine-{index:02d}", f"spec.replicas is {index % 3}, below minReplicas 3")
        for index in range(3 * ANALYZE_WINDOW)
    ]


def test_resources_analyzed_as_the_program_registers_them_give_the_report_of_the_finished_run(
    kv_demo: DemoProgram, default_report: PolicyReport
) -> None:
    _, config = kv_demo
    with StartedPolicyPack(DEMO_PACK, config) as pack:
        analysis = pack.analyze_as_registered()
        run = run_program(PROGRAMS / "kv-demo", config, on_registered=analysis.registered)
        report = analysis.finished(run).result(timeout=60)

    assert report == default_report


def test_a_run_that_never_finishes_ends_the_conversation_and_the_packs_process(kv_demo: DemoProgram) -> None:
    run, config = kv_demo
    before = child_pids()
    with StartedPolicyPack(DEMO_PACK, config) as pack:
        analysis = pack.analyze_as_registered()
        analysis.registered(run.resources[0])

    # Stopped while starting or while waiting for the rest of the run: either way an error, not a wait.
    assert isinstance(analysis.report.exception(timeout=0), PolicyPackError)
    assert child_pids() <= before


def test_the_report_describes_the_packs_policies(default_report: PolicyReport) -> None:
    assert default_report.policies == [
        PolicyInfo("annotate-secrets", "Secrets carry the demo annotation.", "disabled", "resource"),
        PolicyInfo(
            "deployment-min-replicas",
            REPLICAS,
            "advisory",
            "resource",
            {"minReplicas": {"type": "integer", "minimum": 1, "default": 3}},
        ),
        PolicyInfo("image-pinned-by-digest", PINNED, "mandatory", "stack"),
    ]


def test_the_stacks_config_reaches_the_pack(kv_demo: DemoProgram) -> None:
    run, config = kv_demo
    engine = json.dumps({"image": "registry.local/engine:2.0", "port": 8080})
    other_image = dataclasses.replace(config, values={**config.values, "kv-demo:engine": engine})

    report = run_policy_pack(DEMO_PACK, run, other_image)

    # The stack policy reads pulumi.Config() in the pack; the program's Deployment still runs 1.4.2.
    assert summary(report) == [
        (
            "image-pinned-by-digest",
            "mandatory",
            "stack",
            "kv-demo:engine.image of stack dev is 'registry.local/engine:2.0'; pin it by digest",
        ),
        ("deployment-min-replicas", "advisory", DEPLOYMENT, "spec.replicas is 2, below minReplicas 3"),
    ]


def test_a_policy_config_sets_levels_for_all_then_per_policy_and_a_threshold(kv_demo: DemoProgram) -> None:
    policy_config = {"all": "advisory", "deployment-min-replicas": {"enforcementLevel": "mandatory", "minReplicas": 4}}

    report = run_policy_pack(DEMO_PACK, *kv_demo, policy_config)

    assert summary(report) == [
        ("deployment-min-replicas", "mandatory", DEPLOYMENT, "spec.replicas is 2, below minReplicas 4"),
        ("image-pinned-by-digest", "advisory", DEPLOYMENT, RUNS_UNPINNED),
        ("image-pinned-by-digest", "advisory", "stack", CONFIG_UNPINNED),
    ]


def test_a_config_value_against_the_schema_is_an_error_naming_policy_and_property(kv_demo: DemoProgram) -> None:
    before = child_pids()

    with pytest.raises(PolicyConfigError) as raised:
        run_policy_pack(DEMO_PACK, *kv_demo, {"deployment-min-replicas": {"minReplicas": 0}})

    assert str(raised.value) == (
        "policy config of policy pack demo 0.3.0: 1 problem\n"
        "  - deployment-min-replicas: minReplicas: 0 is less than the minimum of 1"
    )
    assert child_pids() <= before


def test_properties_are_encoded_as_the_engine_sends_them() -> None:
    values = {"spec": {"replicas": 2.0, "env": [{"value": "t0ken"}, {"value": UNKNOWN_MASK}]}, "data": {"k": "v"}}
    secrets = (("spec", "env", 0, "value"), ("data",))
    unknowns = (("spec", "env", 1, "value"),)

    encoded = encode_properties(values, secrets, unknowns)

    assert encoded["spec"]["env"][0]["value"]["4dabf18193072939515e22adb298388d"] == "1b47061264138c4ac30d75fd1eb44270"
    assert encoded["spec"]["env"][1]["value"] == "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    decoded = decode_properties(encoded)
    assert (decoded.values, set(decoded.secret_paths), decoded.unknown_paths) == (values, set(secrets), unknowns)


def test_a_validator_that_raises_is_named_with_the_resource_it_failed_on(kv_demo: DemoProgram) -> None:
    before = child_pids()

    with pytest.raises(PolicyPackError) as raised:
        run_policy_pack(PACKS / "raises", *kv_demo)

    # The gRPC error carries str(exception) only ('spec' for a KeyError), as the CLI shows it; the version is the
    # pack's default.
    assert str(raised.value) == (
        "policy pack raises 0.0.1: Analyze of kubernetes:core/v1:ConfigMap engine-settings failed: UNKNOWN: "
        "Exception calling application: 'spec'"
    )
    assert child_pids() <= before


def test_a_pack_that_cannot_start_is_reported_with_its_stderr(kv_demo: DemoProgram) -> None:
    with pytest.raises(PolicyPackError) as raised:
        run_policy_pack(PACKS / "import-error", *kv_demo)

    message = str(raised.value)
    assert message.startswith(
        f"policy pack {PACKS / 'import-error'} exited with code 1 before serving\n"
        "the pack's stderr (last 40 lines at most):\n"
        "    error: Program failed with an unhandled exception:\n"
    )
    assert message.endswith("\n    ModuleNotFoundError: No module named 'kvpool_no_such_module'")


def test_a_pack_that_prints_before_its_port_breaks_the_handshake(kv_demo: DemoProgram) -> None:
    with pytest.raises(PolicyPackError) as raised:
        run_policy_pack(PACKS / "prints-first", *kv_demo)

    assert str(raised.value) == (
        f"policy pack {PACKS / 'prints-first'} printed 'loading policies' before its port "
        "(nothing may print to stdout before PolicyPack(...) starts)"
    )


def test_a_folder_without_pulumi_policy_yaml_is_not_a_pack(kv_demo: DemoProgram, tmp_path: Path) -> None:
    with pytest.raises(PolicyPackError) as raised:
        run_policy_pack(tmp_path, *kv_demo)

    assert str(raised.value) == f"no PulumiPolicy.yaml in {tmp_path}: not a policy pack"


# Reconciliation alone: the layers the CLI applies, without a pack process.
POLICIES = [
    PolicyInfo("limit", "Stays below the limit.", "advisory", "resource", {"max": {"type": "integer", "default": 3}}),
    PolicyInfo("tagged", "Has tags.", "mandatory", "stack", {"tags": {"type": "array"}}, ("tags",)),
]


def test_reconciliation_layers_schema_defaults_then_initial_config_then_the_users_file() -> None:
    initial = {"tagged": PolicyConfig("mandatory", {"tags": ["team"]}), "limit": PolicyConfig("advisory", {"max": 5})}
    user = {"all": "disabled", "limit": {"enforcementLevel": "remediate"}}

    assert reconcile_policy_config(POLICIES, initial, user) == {
        "limit": PolicyConfig("remediate", {"max": 5}),
        "tagged": PolicyConfig("disabled", {"tags": ["team"]}),
    }
    assert reconcile_policy_config(POLICIES, initial) == {
        "limit": PolicyConfig("advisory", {"max": 5}),
        "tagged": PolicyConfig("mandatory", {"tags": ["team"]}),
    }


def test_reconciliation_lists_every_problem_of_the_users_file() -> None:
    user = {
        "limt": {"max": 2},
        "all": {"enforcementLevel": "advisory", "max": 1},
        "limit": {"enforcementLevel": "strict"},
        "tagged": {"tags": "team", "owner": "me"},
    }

    with pytest.raises(PolicyConfigError) as raised:
        reconcile_policy_config(POLICIES, {}, user)

    assert raised.value.problems == [
        "limt: no such policy in this pack (policies: limit, tagged)",
        "all: takes only an enforcement level, found max",
        'limit: enforcementLevel "strict" is not one of advisory, mandatory, remediate, disabled',
        "tagged: owner: not a config property of this policy (properties: tags)",
        "tagged: tags: 'team' is not of type 'array'",
    ]


def test_a_required_property_left_unset_is_a_problem_of_its_policy() -> None:
    with pytest.raises(PolicyConfigError) as raised:
        reconcile_policy_config(POLICIES, {})

    assert str(raised.value) == "policy config: 1 problem\n  - tagged: 'tags' is a required property"


# The command line: `python -m kvpool preview` with a policy pack.
def kvpool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvpool", *map(str, args)], cwd=REPOSITORY, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def project_with_policies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """kv-demo with the demo pack as its policies/ folder, where the preview looks for a pack by default."""
    project = tmp_path_factory.mktemp("with-policies") / "kv-demo"
    shutil.copytree(PROGRAMS / "kv-demo", project)
    shutil.copytree(DEMO_PACK, project / "policies")
    return project


def test_preview_runs_the_projects_pack_and_a_mandatory_violation_exits_3(
    project_with_policies: Path, tmp_path: Path
) -> None:
    result = kvpool("preview", "--stack", "dev", "--project-dir", project_with_policies, "--out", tmp_path)

    # The plan on stdout (as `pulumi preview` shows it beside the violations), the violations on stderr.
    assert result.returncode == 3
    assert result.stdout.splitlines()[:3] == [
        "pulumi:pulumi:Stack  kv-demo-dev",
        "    fixture:index:EnginePool  decode",
        "        kubernetes:apps/v1:Deployment  decode-engine",
    ]
    assert result.stderr == (
        "error: policy pack demo 0.3.0: 2 mandatory violations, nothing written\n"
        f"[mandatory] image-pinned-by-digest  {DEPLOYMENT}\n"
        f"    {RUNS_UNPINNED}\n"
        "[mandatory] image-pinned-by-digest  stack\n"
        f"    {CONFIG_UNPINNED}\n"
        f"[advisory] deployment-min-replicas  {DEPLOYMENT}\n"
        "    spec.replicas is 2, below minReplicas 3\n"
        "Policies: demo 0.3.0: 2 mandatory, 1 advisory violations (3 policies)\n"
    )
    assert not (tmp_path / "dev").exists()


def test_no_policy_skips_the_projects_pack(project_with_policies: Path, tmp_path: Path) -> None:
    result = kvpool(
        "preview", "--stack", "dev", "--project-dir", project_with_policies, "--out", tmp_path, "--no-policy"
    )

    assert (result.returncode, result.stderr) == (0, "")
    assert "Policies" not in result.stdout


def test_preview_with_only_advisory_violations_exits_0_and_prints_them_after_the_summary(tmp_path: Path) -> None:
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text(json.dumps({"image-pinned-by-digest": {"enforcementLevel": "advisory"}}))

    result = kvpool(
        "preview", "--stack", "dev", "--project-dir", PROGRAMS / "kv-demo", "--out", tmp_path / "out",
        "--policy-pack", DEMO_PACK, "--policy-config", policy_config,
    )  # fmt: skip

    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.endswith(
        f"Wrote {tmp_path}/out/dev/manifests/ (6 files) and {tmp_path}/out/dev/outputs.json\n"
        "\n"
        f"[advisory] deployment-min-replicas  {DEPLOYMENT}\n"
        "    spec.replicas is 2, below minReplicas 3\n"
        f"[advisory] image-pinned-by-digest  {DEPLOYMENT}\n"
        f"    {RUNS_UNPINNED}\n"
        "[advisory] image-pinned-by-digest  stack\n"
        f"    {CONFIG_UNPINNED}\n"
        "Policies: demo 0.3.0: 0 mandatory, 3 advisory violations (3 policies)\n"
    )


def test_a_project_without_a_pack_of_its_own_gets_motor_kvpools(tmp_path: Path) -> None:
    result = kvpool("preview", "--stack", "dev", "--project-dir", PROGRAMS / "kv-demo", "--out", tmp_path / "out")

    assert result.returncode == 0, result.stderr
    assert (f"Policies: motor-kvpool {VERSION}: 0 mandatory, 0 advisory violations ({POLICY_COUNT} policies)"
            in result.stdout.splitlines())


def test_a_policy_config_with_no_policy_is_refused(tmp_path: Path) -> None:
    policy_config = tmp_path / "policy-config.json"
    policy_config.write_text("{}")

    result = kvpool(
        "preview", "--stack", "dev", "--project-dir", PROGRAMS / "kv-demo", "--out", tmp_path / "out",
        "--policy-config", policy_config, "--no-policy",
    )  # fmt: skip

    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr == "error: --policy-config configures a policy pack, but --no-policy turns the pack off\n"
