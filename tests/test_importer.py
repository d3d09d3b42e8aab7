"""kvpool import: conversions of older deploy.py files, each with its note, and refusals with their reason."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from kvpool.cli.engine.stack_schema import MODELINE, SCHEMA_NAME, schema_text
from kvpool.cli.views.importer import (
    ConversionError,
    convert,
    import_pair,
    stack_file_text,
)
from kvpool.errors import SettingsError
from kvpool.internal.input_files import InputFileError
from kvpool.settings.loader import load_from_motor_files, load_from_pulumi_config
from tests.outside import MOTOR_CHECKOUT, absent
from tests.program_runs import PROJECT_DIR
from tests.service_configs import (
    IMAGE,
    as_motor_files,
    memcache_pool,
    mooncake_pool,
    plain_pd,
)
from tests.test_examples import project_copy


def write_pair(folder: Path, service: dict) -> tuple[Path, Path]:
    user_config, env = as_motor_files(service)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user_config.json").write_text(json.dumps(user_config, ensure_ascii=False))
    (folder / "env.json").write_text(json.dumps(env))
    return folder / "user_config.json", folder / "env.json"


# Every pair of these tests leaves the NodePorts to deploy.py's templates, as Motor's examples do.
NODE_PORT_NOTE = (
    "motor_deploy_config: coordinator_infer_node_port, coordinator_obs_node_port, controller_observability_node_port "
    "absent: deploy.py's templates served NodePorts 31015, 31017, 31027; this stack's Services are ClusterIP (a "
    "cluster allocates a NodePort once). For clients outside the cluster: --set "
    "motor_deploy_config.coordinator_infer_node_port=31015 --set motor_deploy_config.coordinator_obs_node_port=31017 "
    "--set motor_deploy_config.controller_observability_node_port=31027"
)


def stack_values(path: Path) -> dict:
    config = yaml.safe_load(path.read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in config.items()}


def test_imported_stack_loads_to_the_same_model_as_the_files(tmp_path):
    user_path, env_path = write_pair(tmp_path / "src", mooncake_pool())
    target, _ = import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert target == tmp_path / "stacks" / "Pulumi.svc.yaml"
    from_stack = load_from_pulumi_config(stack_values(target), "svc")
    from_files = load_from_motor_files(*as_motor_files(mooncake_pool()), "svc")
    assert from_stack == from_files


def test_deploy_mode_is_written_explicitly():
    conversion = convert(*as_motor_files(plain_pd()))
    assert conversion.user_config["motor_deploy_config"]["deploy_mode"] == "infer_service_set"
    assert conversion.notes == [
        "motor_deploy_config.deploy_mode was absent: written as infer_service_set, deploy.py's default",
        NODE_PORT_NOTE,
    ]


def test_target_job_id_becomes_target_stack_with_the_assumption_said():
    service = memcache_pool()
    service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    service["kv_cache_store_config"]["target_job_id"] = "service-a"
    conversion = convert(*as_motor_files(service))
    assert conversion.user_config["kv_cache_store_config"] == {
        "backend": "memcache",
        "target_stack": "organization/motor-kvpool/service-a",
    }
    assert conversion.notes == [
        NODE_PORT_NOTE,
        "kv_cache_store_config.target_job_id 'service-a' became target_stack 'organization/motor-kvpool/service-a', "
        "assuming the service that owns the store is the stack named after its job_id; edit it if that stack has "
        "another name or lives in another organization"
    ]


def test_target_job_id_equal_to_own_job_id_is_dropped():
    service = memcache_pool()
    service["motor_deploy_config"].update(deploy_mode="multi_deployment", job_id="svc")
    service["kv_cache_store_config"]["target_job_id"] = "svc"
    conversion = convert(*as_motor_files(service))
    assert "target_job_id" not in conversion.user_config["kv_cache_store_config"]
    assert "target_stack" not in conversion.user_config["kv_cache_store_config"]
    assert conversion.notes == [
        NODE_PORT_NOTE, "kv_cache_store_config.target_job_id 'svc' is this service itself: dropped (deploy.py ignores it)"
    ]


def test_legacy_pool_config_becomes_a_mooncake_store():
    service = mooncake_pool()
    service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    store = service.pop("kv_cache_store_config")
    del store["backend"]
    store["metadata_server"] = "P2PHANDSHAKE"
    service["kv_cache_pool_config"] = store
    user_config, env = as_motor_files(service)
    env["motor_kv_cache_pool_env"] = {}
    conversion = convert(user_config, env)
    assert conversion.user_config["kv_cache_store_config"]["backend"] == "mooncake"
    assert "kv_cache_pool_config" not in conversion.user_config
    assert conversion.env["motor_kv_cache_store_env"] == {}
    assert conversion.notes == [
        NODE_PORT_NOTE,
        "kv_cache_pool_config renamed to kv_cache_store_config (its current name)",
        "kv_cache_store_config.backend set to mooncake: kv_cache_pool_config comes from the Mooncake-only generation "
        "of deploy.py, and its keys are Mooncake's",
        "env motor_kv_cache_pool_env renamed to motor_kv_cache_store_env (its current name)",
    ]


def test_empty_sections_of_roles_not_deployed_are_dropped_and_said():
    user_config, env = as_motor_files(plain_pd())
    user_config["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    env["motor_mf_store_env"] = {}
    conversion = convert(user_config, env)
    assert "motor_mf_store_env" not in conversion.env
    assert conversion.notes == [
        NODE_PORT_NOTE, "env motor_mf_store_env dropped: it was empty and motor-kvpool deploys no reader for it"
    ]


def test_non_empty_sections_of_roles_not_deployed_are_refused(tmp_path):
    service = plain_pd()
    service["env"] = {"motor_mf_store_env": {"PORT": "1"}}
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError) as caught:
        import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert caught.value.problems == [
        "env.motor_mf_store_env: motor-kvpool deploys no mf_store (sglang), so this section has no reader; remove it"
    ]


def test_kv_conductor_sections_are_kept(tmp_path):
    """KV-cache affinity: user_config.json's kv_conductor_config and env.json's motor_kv_conductor_env survive import."""
    from tests.program_runs import stack_values

    service = stack_values("kv-affinity")
    service["env"] = {"motor_kv_conductor_env": {"RUST_LOG": "info"}}
    user_path, env_path = write_pair(tmp_path, service)
    target, conversion = import_pair(user_path, env_path, "kv-affinity", tmp_path / "stacks")
    assert conversion.env["motor_kv_conductor_env"] == {"RUST_LOG": "info"}
    config = yaml.safe_load(target.read_text())["config"]
    assert config["motor-kvpool:kv_conductor_config"] == service["kv_conductor_config"]
    assert config["motor-kvpool:env"]["motor_kv_conductor_env"] == {"RUST_LOG": "info"}


def test_refused_imports_write_nothing(tmp_path):
    service = plain_pd()
    service["env"] = {"motor_mf_store_env": {"PORT": "1"}}
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError):
        import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert not (tmp_path / "stacks").exists()


def test_overrides_fill_placeholders_and_say_so():
    service = plain_pd()
    service["motor_deploy_config"]["image_name"] = "<请按实际情况填写镜像名称>"
    conversion = convert(*as_motor_files(service), {"motor_deploy_config.image_name": "registry.local/motor:1"})
    assert conversion.user_config["motor_deploy_config"]["image_name"] == "registry.local/motor:1"
    assert conversion.notes[-1] == (
        "motor_deploy_config.image_name set to 'registry.local/motor:1' (--set; the file had '<请按实际情况填写镜像名称>')"
    )


def test_placeholder_refusal_says_how_to_fill_it(tmp_path):
    service = plain_pd()
    service["motor_deploy_config"]["image_name"] = ""
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError) as caught:
        import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert caught.value.problems[-1] == "fill them while importing: --set motor_deploy_config.image_name=VALUE"


def test_existing_stack_file_is_not_overwritten_without_force(tmp_path):
    user_path, env_path = write_pair(tmp_path, plain_pd())
    import_pair(user_path, env_path, "svc", tmp_path)
    with pytest.raises(ConversionError, match=r"Pulumi.svc.yaml exists; pass --force to overwrite it"):
        import_pair(user_path, env_path, "svc", tmp_path)
    import_pair(user_path, env_path, "svc", tmp_path, force=True)


def test_unsupported_version_is_refused():
    user_config, env = as_motor_files(plain_pd())
    user_config["version"] = "v1.0"
    with pytest.raises(ConversionError, match=r"^version: 'v1.0' is not supported; motor-kvpool reads user_config v2.0$"):
        convert(user_config, env)


def test_stack_file_keeps_quoted_strings_and_writes_notes_as_comments():
    conversion = convert(*as_motor_files(memcache_pool()))
    text = stack_file_text(conversion, "a/user_config.json + a/env.json")
    assert text.splitlines()[:3] == [
        "# yaml-language-server: $schema=stack-file.schema.json",
        "# Imported from a/user_config.json + a/env.json by `python -m kvpool import`.",
        "# - motor_deploy_config.deploy_mode was absent: written as infer_service_set, deploy.py's default",
    ]
    assert "kv_port: '30001'" in text


def test_a_file_imported_beside_the_schema_names_it_first_and_is_valid_under_it(tmp_path):
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / SCHEMA_NAME).write_text(schema_text())
    user_path, env_path = write_pair(tmp_path / "src", memcache_pool())
    target, conversion = import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    text = target.read_text()
    assert text.splitlines()[0] == MODELINE == "# yaml-language-server: $schema=stack-file.schema.json"
    assert (target.parent / MODELINE.rpartition("=")[2]).is_file()
    assert not [note for note in conversion.notes if "modeline" in note]
    schema = json.loads(schema_text())
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(yaml.safe_load(text))) == []


def test_a_file_imported_where_no_schema_is_gets_no_modeline_and_a_note_saying_how(tmp_path):
    user_path, env_path = write_pair(tmp_path / "src", memcache_pool())
    target, conversion = import_pair(user_path, env_path, "svc", tmp_path / "elsewhere")
    note = (f"no schema modeline: {tmp_path / 'elsewhere'} holds no stack-file.schema.json; for editors to check the "
            "file, write it with `kvpool stack-schema` and make `# yaml-language-server: $schema=stack-file.schema.json` "
            "its first line")
    assert conversion.notes[0] == note
    assert target.read_text().splitlines()[:3] == [
        f"# Imported from {user_path} + {env_path} by `python -m kvpool import`.",
        f"# - {note}",
        "# - motor_deploy_config.deploy_mode was absent: written as infer_service_set, deploy.py's default",
    ]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--set", "x=[oops"], "error: --set 'x=[oops': VALUE is read as YAML: "),
        (["--set", "novalue"], "error: --set 'novalue': write PATH=VALUE"),
    ],
)
def test_cli_usage_errors_exit_1_with_the_reason(tmp_path, arguments, message):
    import subprocess
    import sys

    user_path, env_path = write_pair(tmp_path, plain_pd())
    done = subprocess.run(
        [sys.executable, "-m", "kvpool", "import", "--user-config", str(user_path), "--env-config", str(env_path),
         "--stack", "svc", "--stacks-dir", str(tmp_path / "stacks"), *arguments],
        capture_output=True, text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 1
    assert done.stderr.startswith(message)
    assert "Traceback" not in done.stderr


def test_import_asks_for_the_vllm_ascend_version_where_seed_001s_patch_depends_on_it():
    service = mooncake_pool()
    for side in ("prefill", "decode"):
        connectors = service[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"]
        connectors["kv_connector_extra_config"]["connectors"][0]["kv_connector"] = "MooncakeLayerwiseConnector"
    service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    asked = (
        "vllm_ascend_version: is not set, and prefill and decode transfer layer by layer with a KV pool: vllm-ascend "
        "before v0.17.0rc2 needs Motor's vllm_multi_connector.patch for that (seed 001: otherwise inference is "
        "wrong); set vllm_ascend_version to the image's vllm-ascend (e.g. v0.17.0rc2) so the preview can tell. "
        "Import with --set vllm_ascend_version=VERSION, or add it to the stack file."
    )
    assert convert(*as_motor_files(service)).notes[-1] == asked
    assert asked not in convert(*as_motor_files(service), overrides={"vllm_ascend_version": "v0.17.0rc2"}).notes


def test_hybrid_connector_declares_hybrid_attention():
    service = plain_pd()
    for side, role in (("prefill", "kv_producer"), ("decode", "kv_consumer")):
        service[f"motor_engine_{side}_config"]["engine_config"]["kv_transfer_config"] = {
            "kv_connector": "MooncakeHybridConnector", "kv_role": role, "kv_port": "30001",
        }
    service["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    conversion = convert(*as_motor_files(service))
    assert [conversion.user_config[f"motor_engine_{side}_config"]["hybrid_attention"] for side in ("prefill", "decode")] == [True, True]
    assert conversion.notes == [
        NODE_PORT_NOTE,
        "hybrid_attention: true declared for both engines: they transfer with MooncakeHybridConnector, Motor's "
        "connector for hybrid-attention models (seed FAQ 7)"
    ]
    settings = load_from_motor_files(conversion.user_config, conversion.env, "svc")
    assert "hybrid_attention" not in settings.user_config()["motor_engine_prefill_config"]  # not Motor's key


def test_a_legacy_pool_without_eviction_is_refused_naming_both_ratios_and_the_values_to_write(tmp_path):
    """Every deploy.py generation refuses a Mooncake pool without eviction ratios (lib/generator/kv_cache_store.py:
    53-62), so import writes none of its own: it names both fields and the --set that fills them."""
    service = mooncake_pool()
    store = service.pop("kv_cache_store_config")
    del store["backend"], store["eviction_high_watermark_ratio"], store["eviction_ratio"]
    store["metadata_server"] = "P2PHANDSHAKE"
    service["kv_cache_pool_config"] = store
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError) as caught:
        import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert caught.value.problems == [
        "kv_cache_store_config.eviction_high_watermark_ratio: is required for backend 'mooncake' (the pool usage at "
        "which mooncake_master starts evicting); set a value in (0, 1], e.g. 0.6 (the seed suggests 0.9, which let "
        "only 40-54% of a fast writer's puts through on the real master: bench/results/eviction.md).",
        "kv_cache_store_config.eviction_ratio: is required for backend 'mooncake' (the fraction of the pool freed per "
        "eviction); set a value in [0, 1], e.g. 0.4 (the seed suggests 0.1).",
        "fix them while importing: --set kv_cache_store_config.eviction_high_watermark_ratio=0.6 "
        "--set kv_cache_store_config.eviction_ratio=0.4",
    ]
    assert not (tmp_path / "stacks" / "Pulumi.svc.yaml").exists()


def test_a_current_store_without_eviction_is_still_refused(tmp_path):
    """deploy.py refuses a kv_cache_store_config Mooncake pool without ratios (lib/generator/kv_cache_store.py:53-62)."""
    service = mooncake_pool()
    del service["kv_cache_store_config"]["eviction_ratio"]
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError) as caught:
        import_pair(user_path, env_path, "svc", tmp_path / "stacks")
    assert caught.value.problems == [
        "kv_cache_store_config.eviction_ratio: is required for backend 'mooncake' (the fraction of the pool freed per "
        "eviction); set a value in [0, 1], e.g. 0.4 (the seed suggests 0.1).",
        "fix them while importing: --set kv_cache_store_config.eviction_ratio=0.4",
    ]


def test_older_scheduler_deploy_mode_is_dropped_with_a_note():
    service = plain_pd()
    service["motor_coordinator_config"] = {"scheduler_config": {"deploy_mode": "cpcd_separate"}}
    conversion = convert(*as_motor_files(service))
    assert conversion.user_config["motor_coordinator_config"] == {"scheduler_config": {}}
    assert conversion.notes[-1] == (
        "motor_coordinator_config.scheduler_config.deploy_mode (cpcd_separate) dropped: Motor's SchedulerConfig no "
        "longer has it (Motor ignores it); prefill and decode are deployed apart as motor_deploy_config.deploy_mode says"
    )


DEPLOYER = str(MOTOR_CHECKOUT / "examples" / "deployer")


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("create_namespace", "false", False),
        ("vllm_ascend_version", "v0.17.0rc2", "v0.17.0rc2"),
        # a Motor checkout's deployer folder: the settings check the Motor sections against its config classes
        ("motor_deployer_dir", DEPLOYER, DEPLOYER),
        ("cluster_domain", "example.internal", "example.internal"),
    ],
)
def test_set_of_a_switch_is_written_to_the_stack(tmp_path, key, value, expected):
    """--set create_namespace=false said "set to False" and wrote nothing (issue 22 item 1)."""
    from kvpool.cli.commands.cli import main

    if value == DEPLOYER and not (MOTOR_CHECKOUT / "motor").is_dir():
        absent(f"no Motor checkout at {MOTOR_CHECKOUT} (set MOTOR_CHECKOUT)")

    user_path, env_path = write_pair(tmp_path, plain_pd())
    stacks = tmp_path / "stacks"
    assert main(["import", "--user-config", str(user_path), "--env-config", str(env_path), "--stack", "svc",
                 "--stacks-dir", str(stacks), "--set", f"{key}={value}"]) == 0
    assert stack_values(stacks / "Pulumi.svc.yaml")[key] == expected
    assert getattr(load_from_pulumi_config(stack_values(stacks / "Pulumi.svc.yaml"), "svc"), key) == expected


def test_set_of_env_writes_env_json():
    conversion = convert(*as_motor_files(plain_pd()), {"env.motor_common_env.HCCL_BUFFSIZE": "512"})
    assert conversion.env["motor_common_env"]["HCCL_BUFFSIZE"] == "512"
    assert "env" not in conversion.user_config
    assert conversion.notes[-1] == "env.motor_common_env.HCCL_BUFFSIZE set to '512' (--set; the file had none)"


UCM_CONNECTOR = (
    "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]."
    "kv_connector_extra_config.ucm_connectors[0].ucm_connector_config"
)


def ucm_service() -> dict:
    service = plain_pd()
    ucm = {"ucm_connector_name": "UcmNfsStore", "ucm_connector_config": {"posix_capacity_gb": 1024}}
    service["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"] = {
        "kv_connector": "MultiConnector",
        "kv_connector_extra_config": {"connectors": [
            {"kv_connector": "MooncakeConnectorV1"},
            {"kv_connector": "UCMConnector", "kv_connector_extra_config": {"ucm_connectors": [ucm]}},
        ]},
    }
    return service


def test_set_takes_the_paths_errors_print():
    conversion = convert(*as_motor_files(ucm_service()), {f"{UCM_CONNECTOR}.posix_capacity_gb": 460})
    connectors = conversion.user_config["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"][
        "kv_connector_extra_config"]["connectors"]
    ucm = connectors[1]["kv_connector_extra_config"]["ucm_connectors"][0]
    assert ucm["ucm_connector_config"] == {"posix_capacity_gb": 460}
    assert conversion.notes[-1] == f"{UCM_CONNECTOR}.posix_capacity_gb set to 460 (--set; the file had 1024)"


def test_set_takes_a_quoted_key():
    conversion = convert(*as_motor_files(plain_pd()), {"motor_controller_config['a.b']": 1})
    assert conversion.user_config["motor_controller_config"]["a.b"] == 1


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[2].x",
            "--set motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[2].x: "
            "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors has 2 "
            "items; [2] is not one of its items",
        ),
        (
            "motor_deploy_config[0]",
            "--set motor_deploy_config[0]: motor_deploy_config is not a list; [0] is not one of its items",
        ),
        (
            "motor_deploy_config.image_name.x",
            f"--set motor_deploy_config.image_name.x: motor_deploy_config.image_name is not a section (it holds {IMAGE!r})",
        ),
        (
            "motor_deploy_config.storage[0].size",
            "--set motor_deploy_config.storage[0].size: motor_deploy_config.storage is absent, so it has no item [0]",
        ),
        ("a[0]b", "--set a[0]b: cannot read the path at 'b'; write keys.like[0].this"),
        ("env", "--set env: name a field inside env, e.g. env.motor_common_env.NAME"),
    ],
)
def test_set_refuses_a_path_it_cannot_reach(path, message):
    with pytest.raises(ConversionError) as caught:
        convert(*as_motor_files(ucm_service()), {path: 1})
    assert str(caught.value) == message


def run_import(tmp_path: Path, stacks_dir: Path, stack: str, cwd: Path):
    import subprocess

    service = plain_pd()
    service["motor_deploy_config"]["job_id"] = "imported-svc"
    user_path, env_path = write_pair(tmp_path / "src", service)
    done = subprocess.run(
        [sys.executable, "-m", "kvpool", "import", "--user-config", str(user_path), "--env-config", str(env_path),
         "--stack", stack, "--stacks-dir", str(stacks_dir)],
        capture_output=True, text=True, timeout=60, cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(PROJECT_DIR)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1]


def typed_python(cwd: Path) -> str:
    """How the hint names this interpreter: relative to the folder the command ran in when inside it."""
    absolute = Path(os.path.abspath(sys.executable))
    return str(absolute.relative_to(cwd)) if absolute.is_relative_to(cwd) else str(absolute)


def test_hint_after_import_into_another_project_previews_that_stack(tmp_path):
    """The hint used to be `python -m kvpool preview --stack NAME`, which previews this repository's stack NAME."""
    import shlex
    import subprocess

    project = project_copy(tmp_path)
    hint = run_import(tmp_path, project / "stacks", "dev", PROJECT_DIR)
    assert hint == f"next: {typed_python(PROJECT_DIR)} -m kvpool preview --stack dev --project-dir {project}"
    command = shlex.split(hint.removeprefix("next: ")) + ["--out", str(tmp_path / "out"), "--no-policy"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=PROJECT_DIR)
    assert done.returncode == 0, done.stderr
    outputs = json.loads((tmp_path / "out" / "dev" / "outputs.json").read_text())
    assert outputs["namespace"] == "imported-svc"  # the imported service, not this repository's dev


def test_hint_after_import_outside_any_project_says_where_to_copy(tmp_path):
    hint = run_import(tmp_path, tmp_path / "elsewhere", "svc", PROJECT_DIR)
    assert hint == (
        f"next: {tmp_path / 'elsewhere'} is no project's stack folder, so preview cannot read it there; copy "
        f"Pulumi.svc.yaml into stacks/ and run {typed_python(PROJECT_DIR)} -m kvpool preview --stack svc"
    )


@pytest.mark.parametrize("which", ["user_config.json", "env.json"])
def test_a_key_given_twice_is_refused_naming_it_and_both_lines(tmp_path, which):
    user_path, env_path = write_pair(tmp_path, mooncake_pool())
    path = tmp_path / which
    # json.dumps(indent=1) puts every key on its own line; the key is repeated as the last one of the top level
    lines = json.dumps(json.loads(path.read_text()), indent=1).splitlines()
    first = next(number for number, line in enumerate(lines, 1) if line.startswith(' "version"'))
    lines[-2] += ","
    lines.insert(len(lines) - 1, ' "version": "again"')
    path.write_text("\n".join(lines))
    with pytest.raises(InputFileError) as caught:
        import_pair(user_path, env_path, "dup", tmp_path)
    assert str(caught.value) == (
        f"{path}:{len(lines) - 1}: duplicate key 'version' (first at line {first}); json.load (deploy.py's reader) "
        "would keep the last one silently, keep one"
    )
    assert not (tmp_path / "Pulumi.dup.yaml").exists()


def test_a_bidirectional_control_in_served_model_name_is_refused_on_import(tmp_path):
    service = mooncake_pool()
    service["motor_engine_prefill_config"]["engine_config"]["served_model_name"] = "qwen\u202e3"
    user_path, env_path = write_pair(tmp_path, service)
    with pytest.raises(SettingsError) as caught:
        import_pair(user_path, env_path, "bidi", tmp_path)
    assert caught.value.problems == [
        "motor_engine_prefill_config.engine_config.served_model_name: holds the bidirectional control '\\u202e' (at "
        "offset 4); names, paths, labels and values take none: remove it"
    ]
    assert not (tmp_path / "Pulumi.bidi.yaml").exists()
