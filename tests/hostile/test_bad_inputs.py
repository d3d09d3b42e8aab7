"""One-mistake inputs, one per class of issue 13 §1: each ends in exit 1 with the file or field named, never an
internal error (exit 2), a traceback or a hang. The files are written here, named after the failure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPOSITORY = Path(__file__).resolve().parents[2]
DEV = (REPOSITORY / "stacks" / "Pulumi.dev.yaml").read_text()
UCM = (REPOSITORY / "stacks" / "Pulumi.ucm.yaml").read_text()
TIMEOUT = 120
LINE = DEV.splitlines().index("config:") + 2
"""The line of a key `with_config_line` adds to DEV."""


def kvpool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kvpool", *map(str, args)],
        cwd=REPOSITORY, capture_output=True, text=True, timeout=TIMEOUT,
    )


def refused(result: subprocess.CompletedProcess[str], *named: str) -> None:
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    assert result.returncode == 1, result.stderr
    for text in named:
        assert text in result.stderr, f"{text!r} not in {result.stderr!r}"


def stack_settings(project: Path, name: str, content: str | bytes) -> subprocess.CompletedProcess[str]:
    path = project / "stacks" / f"Pulumi.{name}.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return kvpool("settings", "--stack", name, "--project-dir", project)


def with_config_line(line: str, base: str = DEV) -> str:
    return base.replace("config:\n", f"config:\n  {line}\n", 1)


def nested(depth: int, leaf: object = "x") -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


# --- stack files ---------------------------------------------------------------------------------------------


def test_stack_file_utf16(project: Path) -> None:
    refused(stack_settings(project, "utf16", DEV.encode("utf-16")), "Pulumi.utf16.yaml: is UTF-16 text")


def test_stack_file_latin1(project: Path) -> None:
    content = with_config_line("motor-kvpool:vllm_ascend_version: v1é").encode("latin-1")
    refused(stack_settings(project, "latin1", content), f"Pulumi.latin1.yaml:{LINE}: not UTF-8 text")


def test_stack_file_nested_500_deep(project: Path) -> None:
    line = f"motor-kvpool:motor_controller_config: {json.dumps(nested(500))}"
    refused(stack_settings(project, "deep", with_config_line(line)), f"Pulumi.deep.yaml:{LINE}: nested more than 64 levels")


def test_stack_file_billion_laughs(project: Path) -> None:
    levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for index, name in enumerate("bcdefghi"):
        previous = "abcdefghi"[index]
        levels.append(f"{name}: &{name} [{','.join([f'*{previous}'] * 9)}]")
    content = "\n".join(levels) + "\n" + DEV.replace("config:\n", "config:\n  motor-kvpool:motor_controller_config: {x: *i}\n")
    refused(stack_settings(project, "laughs", content), "Pulumi.laughs.yaml:", "aliases expand the document")


# One anchor of 100 KB named 2,000 times: a 112 KB value (under the 128 KiB an argument may have) that expands to
# 200 MB of text; few values, so only a bound in bytes stops it (a 300 KB anchor took 2.3 GiB before it was refused).
BIG_ANCHOR = "&big " + "x" * 100_000
BIG_ALIASES = "[" + ", ".join(["*big"] * 2000) + "]"


def test_stack_file_aliases_of_a_large_anchor(project: Path) -> None:
    content = DEV.replace("config:\n", f"big: {BIG_ANCHOR}\nconfig:\n  motor-kvpool:motor_controller_config: "
                                         f"{{x: {BIG_ALIASES}}}\n", 1)
    result = stack_settings(project, "wide", content)
    refused(result, "Pulumi.wide.yaml:", "aliases expand the document beyond 4 MiB of text; write the sections out")


@pytest.mark.parametrize("escape", ["\\ud800", "\\udfff", "\\udc80x"])
def test_stack_file_lone_surrogate_is_refused_naming_the_field(project: Path, escape: str) -> None:
    """A YAML escape of half a UTF-16 pair is no character: the preview could write no file holding it (exit 2)."""
    content = DEV.replace("served_model_name: qwen3-8B", f'served_model_name: "qwen{escape}"', 1)
    (project / "stacks" / "Pulumi.surrogate.yaml").write_text(content)
    result = kvpool("preview", "--stack", "surrogate", "--project-dir", project, "--out", project / "out")
    character = escape.encode().decode("unicode_escape")[0]
    refused(result, f"motor_engine_prefill_config.engine_config.served_model_name: holds the lone surrogate "
                    f"{character!a} (at offset 4); names, paths, labels and values take none: remove it")


def test_stack_file_duplicate_top_level_key(project: Path) -> None:
    content = with_config_line("motor-kvpool:create_namespace: true\n  motor-kvpool:create_namespace: false")
    refused(stack_settings(project, "dup", content),
            f"Pulumi.dup.yaml:{LINE + 1}: duplicate key 'motor-kvpool:create_namespace' (first at line {LINE})")


def test_stack_file_duplicate_nested_key(project: Path) -> None:
    content = DEV.replace("    p_pod_npu_num:", "    p_pod_npu_num: 4\n    p_pod_npu_num:", 1)
    line = content.splitlines().index("    p_pod_npu_num: 4") + 2
    refused(stack_settings(project, "dupnested", content),
            f"Pulumi.dupnested.yaml:{line}: duplicate key 'p_pod_npu_num' (first at line {line - 1})")


def test_stack_file_over_one_mebibyte(project: Path) -> None:
    content = DEV + "#" + "x" * (1024 * 1024) + "\n"
    refused(stack_settings(project, "huge", content), "Pulumi.huge.yaml: larger than 1024 KiB")


def test_stack_file_binary_tag(project: Path) -> None:
    content = with_config_line("motor-kvpool:motor_controller_config: {blob: !!binary aGVsbG8=}")
    refused(stack_settings(project, "binary", content), f"Pulumi.binary.yaml:{LINE}: config.motor-kvpool:"
            "motor_controller_config.blob: tag 'tag:yaml.org,2002:binary' is not supported; write the value without "
            'it (in quotes, "aGVsbG8=", if it is text)')


def test_stack_file_integer_too_long_to_convert(project: Path) -> None:
    """The CLI's YAML (yaml.v3) reads a number beyond 64 bits and float64 as text; so does the offline reader."""
    from kvpool.cli.engine.stack_config import load_stack_config

    (project / "stacks" / "Pulumi.longint.yaml").write_text(
        with_config_line(f"motor-kvpool:motor_controller_config: {{n: {'9' * 5000}}}"))
    config = load_stack_config(project, "longint")
    assert json.loads(config.values["motor-kvpool:motor_controller_config"]) == {"n": "9" * 5000}


def test_project_file_utf16(tmp_path: Path) -> None:
    (tmp_path / "stacks").mkdir()
    (tmp_path / "Pulumi.yaml").write_bytes((REPOSITORY / "Pulumi.yaml").read_text().encode("utf-16"))
    (tmp_path / "stacks" / "Pulumi.dev.yaml").write_text(DEV)
    refused(kvpool("settings", "--stack", "dev", "--project-dir", tmp_path), "Pulumi.yaml: is UTF-16 text")


@pytest.mark.parametrize("name", ["a" * 300, "a" * 101, "a/b", "../../x", "", "dev yaml"])
def test_stack_name_that_is_no_stack_name(project: Path, name: str) -> None:
    refused(kvpool("settings", "--stack", name, "--project-dir", project), "--stack", "not a stack name")


# --- fields of the wrong shape -------------------------------------------------------------------------------


def test_secret_env_a_list(project: Path) -> None:
    content = with_config_line("motor-kvpool:secret_env: [{secure: v1:abc}]")
    refused(stack_settings(project, "secretlist", content), "motor-kvpool:secret_env: must be a mapping")


def test_secret_env_value_a_list(project: Path) -> None:
    content = with_config_line("motor-kvpool:secret_env: {HF_TOKEN: [{secure: v1:abc}]}")
    refused(stack_settings(project, "secretnested", content), "motor-kvpool:secret_env.HF_TOKEN: must be one value")


def test_secret_env_name_not_an_env_name(project: Path) -> None:
    content = with_config_line("motor-kvpool:secret_env: {1TOKEN: {secure: v1:abc}}")
    refused(stack_settings(project, "secretname", content), "motor-kvpool:secret_env.1TOKEN: not an environment")


def test_ucm_connector_config_a_string(project: Path) -> None:
    content = UCM.replace("                ucm_connector_config:\n", "                ucm_connector_config: posix\n"
                          "                ucm_connector_config_was:\n", 1)
    refused(stack_settings(project, "ucmstring", content),
            "connectors[1].kv_connector_extra_config: ucm_connectors[0].ucm_connector_config: must be a mapping")


def test_ucm_connectors_a_number(project: Path) -> None:
    start = UCM.index("              ucm_connectors:")
    end = UCM.index("              enable_event_sync")
    content = UCM[:start] + "              ucm_connectors: 3\n" + UCM[end:]
    refused(stack_settings(project, "ucmnumber", content), "ucm_connectors: must be a list of stores")


def test_kv_transfer_config_a_string(project: Path) -> None:
    start = DEV.index("      kv_transfer_config:")
    end = DEV.index("\n  motor-kvpool:", start)
    content = DEV[:start] + "      kv_transfer_config: MooncakeConnectorV1" + DEV[end:]
    refused(stack_settings(project, "kvstring", content), "engine_config.kv_transfer_config")


def test_key_with_a_control_character_is_shown_escaped(project: Path) -> None:
    content = DEV.replace("  motor-kvpool:motor_deploy_config:\n", '  motor-kvpool:motor_deploy_config:\n    "p_pod\\r": 2\n', 1)
    refused(stack_settings(project, "ctrl", content),
            "motor_deploy_config['p_pod\\r']: the key holds the control character '\\r'; remove it")


# --- kvpool import -------------------------------------------------------------------------------------------


@pytest.fixture
def motor_files(tmp_path: Path) -> tuple[Path, Path]:
    from tests.service_configs import as_motor_files, plain_pd

    user, env = as_motor_files(plain_pd())
    (tmp_path / "user_config.json").write_text(json.dumps(user))
    (tmp_path / "env.json").write_text(json.dumps(env))
    return tmp_path / "user_config.json", tmp_path / "env.json"


def run_import(user: Path, env: Path, stacks_dir: Path, *extra: str, stack: str = "imported"):
    return kvpool("import", "--user-config", user, "--env-config", env, "--stack", stack, "--stacks-dir", stacks_dir,
                  *extra)


def test_user_config_utf16(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    user.write_bytes(user.read_text().encode("utf-16"))
    refused(run_import(user, env, tmp_path / "stacks"), "user_config.json: is UTF-16 text")


def test_env_json_latin1(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    env.write_bytes(b'{"version": "2.0.0", "motor_common_env": {"X": "\xe9"}}')
    refused(run_import(user, env, tmp_path / "stacks"), "env.json:1: not UTF-8 text")


def test_user_config_nested_500_deep(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    data = json.loads(user.read_text())
    data["motor_controller_config"] = nested(500)
    user.write_text(json.dumps(data))
    refused(run_import(user, env, tmp_path / "stacks"), "user_config.json: nested more than 64 levels")


def test_user_config_nan(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    user.write_text(user.read_text().replace('"p_pod_npu_num": 2', '"p_pod_npu_num": NaN'))
    refused(run_import(user, env, tmp_path / "stacks"), "user_config.json: not valid JSON: NaN")


def test_user_config_kv_transfer_config_a_string(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    data = json.loads(user.read_text())
    data["motor_engine_prefill_config"]["engine_config"]["kv_transfer_config"] = "MooncakeConnectorV1"
    user.write_text(json.dumps(data))
    refused(run_import(user, env, tmp_path / "stacks"), "motor_engine_prefill_config.engine_config.kv_transfer_config")


def test_import_stack_name_leaving_the_stacks_dir(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    stacks = tmp_path / "a" / "b" / "stacks"
    refused(run_import(user, env, stacks, stack="../../x"), "--stack '../../x': not a stack name")
    assert not list(tmp_path.rglob("Pulumi.*.yaml"))


def test_import_stacks_dir_below_a_file(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    (tmp_path / "plain-file").write_text("")
    refused(run_import(user, env, tmp_path / "plain-file" / "stacks"), "--stacks-dir", "cannot write Pulumi.imported.yaml")


def test_import_set_billion_laughs(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    value = "[" + ",".join(["&a [1,1,1,1,1,1,1,1,1,1]"] + ["&a [" + ",".join(["*a"] * 10) + "]"] * 7) + "]"
    result = run_import(user, env, tmp_path / "stacks", "--set", f"motor_controller_config.x={value}")
    refused(result, "--set 'motor_controller_config.x=[", "VALUE is read as YAML: 1:", "aliases expand")


def test_import_set_aliases_of_a_large_anchor(motor_files: tuple[Path, Path], tmp_path: Path) -> None:
    user, env = motor_files
    value = f"[{BIG_ANCHOR}, {BIG_ALIASES}]"
    result = run_import(user, env, tmp_path / "stacks", "--set", f"motor_controller_config.x={value}")
    refused(result, "VALUE is read as YAML: 1:", "aliases expand the document beyond 4 MiB of text")


# --- preview and diff ----------------------------------------------------------------------------------------


def test_policy_config_utf16(tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_bytes('{"all": "advisory"}'.encode("utf-16"))
    result = kvpool("preview", "--stack", "dev", "--out", tmp_path / "out", "--policy-config", config)
    refused(result, f"--policy-config {config}: is UTF-16 text")


def test_policy_config_nested_500_deep(tmp_path: Path) -> None:
    config = tmp_path / "policy-config.json"
    config.write_text(json.dumps({"all": nested(500)}))
    result = kvpool("preview", "--stack", "dev", "--out", tmp_path / "out", "--policy-config", config)
    refused(result, f"--policy-config {config}: nested more than 64 levels")


def test_stack_outputs_latin1(tmp_path: Path) -> None:
    outputs = tmp_path / "outputs.json"
    outputs.write_bytes(b'{"organization/other/store": {"name": "\xe9"}}')
    result = kvpool("preview", "--stack", "dev", "--out", tmp_path / "out", "--stack-outputs", outputs)
    refused(result, f"--stack-outputs {outputs}:1: not UTF-8 text")


def test_out_below_a_file(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("")
    result = kvpool("preview", "--stack", "dev", "--no-policy", "--out", tmp_path / "plain-file" / "out")
    refused(result, f"--out {tmp_path / 'plain-file' / 'out'}: cannot write")


def test_config_over_the_environment_limit_of_the_policy_pack(project: Path, tmp_path: Path) -> None:
    # A long value of a field Motor's ControllerConfig has (EtcdConfig.etcd_host), so that only its size is wrong.
    line = f"motor-kvpool:motor_controller_config: {{etcd_config: {{etcd_host: {'x' * 140_000}}}}}"
    (project / "stacks" / "Pulumi.big.yaml").write_text(with_config_line(line))
    result = kvpool("preview", "--stack", "big", "--project-dir", project, "--out", tmp_path / "out")
    refused(result, "stack 'big': its configuration is", "PULUMI_CONFIG", "motor-kvpool:motor_controller_config (")


def test_diff_of_a_manifest_not_utf8(tmp_path: Path) -> None:
    for side in ("old", "new"):
        (tmp_path / side / "dev" / "manifests").mkdir(parents=True)
    bad = tmp_path / "new" / "dev" / "manifests" / "v1-ConfigMap-x.yaml"
    bad.write_bytes(b"data: \xff\n")
    refused(kvpool("diff", tmp_path / "old", tmp_path / "new", "--stack", "dev"), f"{bad}:1: not UTF-8 text")


def test_diff_stack_name_that_is_a_path(tmp_path: Path) -> None:
    refused(kvpool("diff", tmp_path, tmp_path, "--stack", "../dev"), "--stack '../dev': not a stack name")
