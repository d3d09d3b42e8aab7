"""kvpool.cli.engine.stack_config: Pulumi.yaml + Pulumi.<stack>.yaml merged into the strings a program reads."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from kvpool.cli.engine.stack_config import (
    StackConfig,
    StackConfigError,
    load_stack_config,
    stack_config_dir,
)
from kvpool.errors import KvpoolError


def write_project(directory: Path, project_yaml: str, stacks: dict[str, str]) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "Pulumi.yaml").write_text(textwrap.dedent(project_yaml))
    for name, text in stacks.items():
        (directory / f"Pulumi.{name}.yaml").write_text(textwrap.dedent(text))
    return directory


PROJECT = """\
    name: demo
    runtime: python
    config:
      namespace:
        type: string
      replicas:
        type: integer
        default: 1
      create_namespace:
        type: boolean
        default: true
      engine:
        description: an object, declared without a type
      shorthand: fallback-text
      kubernetes:context: kind-local
"""


def test_merges_stack_values_over_declared_defaults_as_the_cli_hands_them_over(tmp_path: Path) -> None:
    stack = """\
        config:
          demo:namespace: ucm
          demo:replicas: 3
          demo:engine:
            image: registry.local/engine:1.4.2
            port: 8080
            ratio: 0.5
            whole: 2.0
            flags: [true, null]
          demo:undeclared: 1.50
          kubernetes:namespace: ucm
    """
    config = load_stack_config(write_project(tmp_path, PROJECT, {"dev": stack}), "dev")

    assert config == StackConfig(
        project="demo",
        stack="dev",
        values={
            "demo:create_namespace": "true",
            "demo:engine": (
                # keys sorted, as the CLI's Go JSON encoder writes them
                '{"flags":[true,null],"image":"registry.local/engine:1.4.2","port":8080,"ratio":0.5,"whole":2}'
            ),
            "demo:namespace": "ucm",
            "demo:replicas": "3",
            "demo:shorthand": "fallback-text",
            "demo:undeclared": "1.5",  # a number, written by Go's JSON encoder (config.object MarshalString)
            "kubernetes:context": "kind-local",
            "kubernetes:namespace": "ucm",
        },
        secret_keys=[],
        project_dir=tmp_path,
    )


def test_top_level_scalars_reach_the_program_as_the_cli_hands_them_over(tmp_path: Path) -> None:
    """The CLI reads a top-level value as any YAML value too (sdk/go/common/resource/config/object.go): `yes`
    stays text, `0o17` is the number 15, an empty value is empty text."""
    stack = """\
        config:
          demo:namespace: ucm
          demo:engine: {}
          demo:when: "2024-01-01"
          demo:octal: 0o17
          demo:yes_word: yes
          demo:empty:
    """
    values = load_stack_config(write_project(tmp_path, PROJECT, {"dev": stack}), "dev").values

    assert (values["demo:when"], values["demo:octal"], values["demo:yes_word"], values["demo:empty"]) == (
        "2024-01-01",
        "15",
        "yes",
        "",
    )


def test_secure_values_become_a_placeholder_and_mark_the_key_secret(tmp_path: Path) -> None:
    stack = """\
        config:
          demo:namespace: ucm
          demo:engine:
            image: engine:1
            password:
              secure: v1:c2VjcmV0
          demo:token:
            secure: v1:dG9rZW4=
    """
    config = load_stack_config(write_project(tmp_path, PROJECT, {"dev": stack}), "dev")

    assert config.values["demo:token"] == "[secret]"
    assert config.values["demo:engine"] == '{"image":"engine:1","password":"[secret]"}'
    assert config.secret_keys == ["demo:engine", "demo:token"]


def test_stack_files_are_read_from_stack_config_dir(tmp_path: Path) -> None:
    write_project(tmp_path, "name: demo\nruntime: python\nstackConfigDir: stacks\n", {})
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text("config:\n  demo:namespace: prod-ns\n")

    assert load_stack_config(tmp_path, "prod").values == {"demo:namespace": "prod-ns"}


def test_an_absolute_stack_config_dir_lies_under_the_project_as_the_cli_joins_it(tmp_path: Path) -> None:
    """Pulumi's DetectProjectStackPath joins stackConfigDir under the project folder (filepath.Join): `/stacks` is
    <project>/stacks, not the root's (issue 45 §5)."""
    write_project(tmp_path, "name: demo\nruntime: python\nstackConfigDir: /stacks\n", {})
    (tmp_path / "stacks").mkdir()
    (tmp_path / "stacks" / "Pulumi.prod.yaml").write_text("config:\n  demo:namespace: prod-ns\n")

    assert load_stack_config(tmp_path, "prod").values == {"demo:namespace": "prod-ns"}


@pytest.mark.parametrize(("name", "reason"), [
    ("my project", "name 'my project': project names may only contain alphanumerics, hyphens, underscores, and "
                   "periods (the Pulumi CLI refuses it)"),
    ("a/b", "name 'a/b': project names may only contain alphanumerics, hyphens, underscores, and periods (the Pulumi "
            "CLI refuses it)"),
    ("é", "name 'é': project names may only contain alphanumerics, hyphens, underscores, and periods (the Pulumi CLI "
          "refuses it)"),
    ("x" * 101, "name: project names are limited to 100 characters"),
])
def test_a_project_name_the_cli_refuses_is_refused_with_its_rule(tmp_path: Path, name: str, reason: str) -> None:
    """Issue 45 §5: the names pulumi 3.274.1 refuses (checked against it by hand: issue 45's note)."""
    write_project(tmp_path, f"name: '{name}'\nruntime: python\n", {"dev": "config: {}\n"})
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(tmp_path, "dev")
    assert str(raised.value) == f"{tmp_path / 'Pulumi.yaml'}: {reason}"


@pytest.mark.parametrize("name", ["1abc", "-abc", "a.b", "A_Z.9", "x" * 100])
def test_a_project_name_the_cli_takes_is_taken(tmp_path: Path, name: str) -> None:
    write_project(tmp_path, f"name: '{name}'\nruntime: python\n", {"dev": "config: {}\n"})
    assert load_stack_config(tmp_path, "dev").project == name


def test_two_merge_keys_in_one_mapping_are_refused_as_the_cli_refuses_them(tmp_path: Path) -> None:
    """yaml.v3 (the CLI's reader): `mapping key "<<" already defined`; PyYAML merged both (issue 45 §5)."""
    stack = """\
        base: &base {demo:namespace: a}
        more: &more {demo:engine: b}
        config:
          <<: *base
          <<: *more
    """
    write_project(tmp_path, PROJECT, {"dev": stack})
    with pytest.raises(KvpoolError) as raised:
        load_stack_config(tmp_path, "dev")
    assert str(raised.value) == (
        f"{tmp_path / 'Pulumi.dev.yaml'}:5: duplicate key '<<' (first at line 4); the Pulumi CLI refuses a key given "
        'twice (mapping key "<<" already defined), keep one'
    )


@pytest.mark.parametrize(("key", "value", "said"), [
    ("encryptionsalt", "[a, b]", "is a list, but the Pulumi CLI reads it as text and refuses the file (cannot "
                                 "unmarshal !!seq into string)"),
    ("secretsprovider", "{a: b}", "is a mapping, but the Pulumi CLI reads it as text and refuses the file (cannot "
                                  "unmarshal !!map into string)"),
])
def test_a_stack_files_text_fields_of_another_shape_are_refused(tmp_path: Path, key: str, value: str, said: str) -> None:
    write_project(tmp_path, PROJECT, {"dev": f"{key}: {value}\nconfig: {{}}\n"})
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(tmp_path, "dev")
    assert str(raised.value) == f"{tmp_path / 'Pulumi.dev.yaml'}: {key}: {said}"


def test_a_declared_key_without_default_that_the_stack_omits_is_missing(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, PROJECT, {"dev": "config:\n  demo:namespace: ucm\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == "Stack 'dev' is missing configuration value 'engine'"


def test_several_missing_keys_are_listed_in_one_message_like_the_cli(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, PROJECT, {"dev": "config: {}\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == "Stack 'dev' is missing configuration values 'engine' and 'namespace'"


def test_a_null_default_is_no_default(tmp_path: Path) -> None:
    project = "name: demo\nruntime: python\nconfig:\n  namespace:\n    default: null\n"
    project_dir = write_project(tmp_path, project, {"dev": "config: {}\n"})

    with pytest.raises(StackConfigError, match=r"^Stack 'dev' is missing configuration value 'namespace'$"):
        load_stack_config(project_dir, "dev")


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("demo:replicas: two", "Stack 'dev' with configuration key 'replicas' must be of type 'integer' (found 'two')"),
        (
            "demo:create_namespace: 'yes'",
            "Stack 'dev' with configuration key 'create_namespace' must be of type 'boolean' (found 'yes')",
        ),
        (
            "demo:namespace: {name: ucm}",
            "Stack 'dev' with configuration key 'namespace' must be of type 'string' (found '{\"name\":\"ucm\"}')",
        ),
    ],
)
def test_typed_declarations_are_type_checked(tmp_path: Path, line: str, message: str) -> None:
    namespace = "" if line.startswith("demo:namespace:") else "  demo:namespace: ucm\n"  # a key given twice is refused
    stack = f"config:\n{namespace}  demo:engine: {{}}\n  {line}\n"
    project_dir = write_project(tmp_path, PROJECT, {"dev": stack})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == message


def test_array_items_are_type_checked(tmp_path: Path) -> None:
    project = "name: demo\nruntime: python\nconfig:\n  ports:\n    type: array\n    items:\n      type: integer\n"
    project_dir = write_project(tmp_path, project, {"ok": "config:\n  demo:ports: [80, 443]\n"})
    (project_dir / "Pulumi.bad.yaml").write_text("config:\n  demo:ports: [80, https]\n")

    assert load_stack_config(project_dir, "ok").values == {"demo:ports": "[80,443]"}
    with pytest.raises(StackConfigError, match=r"must be of type 'array<integer>'"):
        load_stack_config(project_dir, "bad")


def test_a_secret_declaration_requires_an_encrypted_stack_value(tmp_path: Path) -> None:
    project = "name: demo\nruntime: python\nconfig:\n  token:\n    secret: true\n"
    project_dir = write_project(tmp_path, project, {"dev": "config:\n  demo:token: plain\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == "Stack 'dev' with configuration key 'token' must be encrypted as it's secret"


def test_type_object_is_rejected_as_the_cli_schema_does(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, "name: demo\nruntime: python\nconfig:\n  engine:\n    type: object\n", {"dev": "config: {}\n"})

    with pytest.raises(StackConfigError, match=r"config key 'engine': type 'object' is not supported"):
        load_stack_config(project_dir, "dev")


def test_missing_pulumi_yaml(tmp_path: Path) -> None:
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(tmp_path, "dev")
    assert str(raised.value) == (f"no Pulumi.yaml in {tmp_path.resolve()}: not a Pulumi project; run kvpool in the "
                                 "project's folder or name it with --project-dir DIR")


def test_missing_stack_file_lists_the_stacks_that_exist(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": "config: {}\n", "staging": "config: {}\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "prod")
    assert str(raised.value) == (
        f"no stack file {project_dir / 'Pulumi.prod.yaml'} for stack 'prod' (stacks in {project_dir}: dev, staging)"
    )


def test_yaml_syntax_errors_name_file_line_and_column(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": "config:\n  demo:a: [1, 2\n  demo:b: 3\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == f"{project_dir / 'Pulumi.dev.yaml'}:3:9: invalid YAML: expected ',' or ']', but got ':'"


def test_a_key_without_a_namespace_is_the_projects_as_for_the_cli(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": "config:\n  namespace: ucm\n  other:x: 1\n"})

    assert load_stack_config(project_dir, "dev").values == {"demo:namespace": "ucm", "other:x": "1"}


def test_a_key_written_with_and_without_its_namespace_is_refused(tmp_path: Path) -> None:
    project_dir = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": "config:\n  namespace: ucm\n  demo:namespace: kv\n"})

    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project_dir, "dev")
    assert str(raised.value) == (f"{project_dir / 'Pulumi.dev.yaml'}: config has both 'namespace' and demo:namespace, "
                                 "which the Pulumi CLI reads as one key and keeps either at random; remove one")


def test_structured_values_resolve_plain_scalars_as_yaml_v3(tmp_path: Path) -> None:
    """The CLI reads stack files with yaml.v3 (YAML 1.2 with its own integer rules), not YAML 1.1: tests/e2e's
    test_stack_file_yaml.py checks the whole corpus against the real CLI; these are the values users write most."""
    stack = """\
        config:
          demo:engine: {on: on, flag: yes, octal: 0o17, old_octal: 0755, hex: 0x10, under: 1_0, exp: 1e3,
                        time: 1:30, equals: =, half: .5, plus: +1, nothing: ~, big: -9223372036854775809}
    """
    config = load_stack_config(write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": stack}), "dev")
    assert config.values["demo:engine"] == (
        '{"big":-9223372036854776000,"equals":"=","exp":1000,"flag":"yes","half":0.5,"hex":16,"nothing":null,'
        '"octal":15,"old_octal":493,"on":"on","plus":1,"time":"1:30","under":10}'
    )


def test_a_value_json_cannot_carry_is_refused_naming_the_key_and_the_quoting(tmp_path: Path) -> None:
    stack = """\
        config:
          demo:engine: {limits: [1, .inf], ratio: .nan, id: 18446744073709551615}
    """
    project = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": stack})
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project, "dev")
    assert str(raised.value).splitlines() == [
        f"{project / 'Pulumi.dev.yaml'}: demo:engine.limits[1]: inf is not a number JSON can carry; write it quoted "
        '(".inf") if it is text',
        f"{project / 'Pulumi.dev.yaml'}: demo:engine.ratio: nan is not a number JSON can carry; write it quoted "
        '(".nan") if it is text',
        f"{project / 'Pulumi.dev.yaml'}: demo:engine.id: 18446744073709551615 is beyond a 64-bit integer, which the "
        'Pulumi CLI rounds; write it quoted ("18446744073709551615") if it is text',
    ]


def test_a_date_is_refused_naming_the_key_and_the_quoting(tmp_path: Path) -> None:
    """The CLI hands a plain date over as Go's time text (tests/e2e/test_stack_file_yaml.py shows it on the CLI)."""
    stack = """\
        config:
          demo:engine: {release: 2026-12-02}
    """
    project = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": stack})
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project, "dev")
    assert str(raised.value) == (
        f"{project / 'Pulumi.dev.yaml'}:2: config.demo:engine.release: 2026-12-02 is a date or time, which the Pulumi "
        "CLI hands over in Go's words (2026-12-02 as '2026-12-02 00:00:00 +0000 UTC'); write it in quotes "
        '("2026-12-02")'
    )


def test_merge_keys_are_merged_as_the_cli_merges_them(tmp_path: Path) -> None:
    """yaml.v3 merges `<<: *anchor` into `config` and into values (tests/e2e/test_stack_file_yaml.py holds it to the
    CLI); a key beside the merge wins, and so does the first of several merged mappings. Go's encoding/json escapes
    <, > and & in the JSON text the program gets."""
    project = write_project(tmp_path, "name: demo\nruntime: python\n", {"dev": """\
        common: &common
          demo:merged: 1
          demo:kept: {x: 1}
        base: &base {x: 1, y: 2, z: 3}
        other: &other {z: 4, w: 5}
        config:
          <<: *common
          demo:kept: {x: 2}
          demo:value: {<<: *base, y: 9}
          demo:several: {<<: [*base, *other]}
          demo:text: [<<, a&b]
        """})
    assert load_stack_config(project, "dev").values == {
        "demo:merged": "1",
        "demo:kept": '{"x":2}',
        "demo:value": '{"x":1,"y":9,"z":3}',
        "demo:several": '{"w":5,"x":1,"y":2,"z":3}',
        "demo:text": '["\\u003c\\u003c","a\\u0026b"]',
    }


@pytest.mark.parametrize(("runtime", "reason"), [
    ("", "runtime: is missing, and without it the Pulumi CLI runs no program (its preview registers nothing, "
         "`pulumi up` deletes what the stack has); add `runtime: python`"),
    ("runtime:\n", "runtime: is missing, and without it the Pulumi CLI runs no program (its preview registers "
                   "nothing, `pulumi up` deletes what the stack has); add `runtime: python`"),
    ("runtime: nodejs\n", "runtime: is 'nodejs', but this project is a Python program: the Pulumi CLI would run it "
                          "with the language host of 'nodejs' (pulumi-language-nodejs), not this program; write "
                          "`runtime: python`"),
    ("runtime: {name: go, options: {binary: x}}\n", "runtime: is 'go', but this project is a Python program: the "
                                                    "Pulumi CLI would run it with the language host of 'go' "
                                                    "(pulumi-language-go), not this program; write `runtime: python`"),
    ("runtime: {options: {}}\n", "runtime: names no language (write a name, or a mapping with `name:`); write "
                                 "`runtime: python`"),
])
def test_a_project_the_cli_would_not_run_as_this_python_program_is_refused(tmp_path: Path, runtime: str,
                                                                         reason: str) -> None:
    """Issue 45 §5: without `runtime` pulumi 3.274.1 runs no program at all (checked against it: its preview lists no
    resource); with another runtime it runs another language's program. Both previewed clean offline."""
    write_project(tmp_path, f"name: demo\n{runtime}", {"dev": "config: {}\n"})
    for read in (lambda: load_stack_config(tmp_path, "dev"), lambda: stack_config_dir(tmp_path)):
        with pytest.raises(StackConfigError) as raised:
            read()
        assert str(raised.value) == f"{tmp_path / 'Pulumi.yaml'}: {reason}"


def test_a_runtime_mapping_naming_python_is_taken(tmp_path: Path) -> None:
    write_project(tmp_path, "name: demo\nruntime: {name: python, options: {toolchain: pip}}\n", {"dev": "config: {}\n"})
    assert load_stack_config(tmp_path, "dev").program is None


@pytest.mark.parametrize(("main", "reason"), [
    ("/srv/program", "main: '/srv/program': is an absolute path; write the program's folder relative to the project "
                     "(e.g. `main: src/`)"),
    ("../elsewhere", "main: '../elsewhere': names {parent}/elsewhere, outside the project {project}; the program must "
                     "be a folder inside the project (e.g. `main: src/`)"),
    ("link", "main: 'link': names {parent}/elsewhere, outside the project {project}; the program must be a folder "
             "inside the project (e.g. `main: src/`)"),
    ("src/", "main: 'src/': {project}/src does not exist (the Pulumi CLI refuses it: project 'main' could not be "
             "read); create the folder with the program's __main__.py, or remove `main`"),
    ("[src]", "main: must be text, the program's folder (the Pulumi CLI refuses the file: #/main: expected string "
              "or null)"),
])
def test_a_main_outside_the_project_or_missing_is_refused(tmp_path: Path, main: str, reason: str) -> None:
    project = tmp_path / "project"
    write_project(project, f"name: demo\nruntime: python\nmain: {main}\n", {"dev": "config: {}\n"})
    (tmp_path / "elsewhere").mkdir()
    (project / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(StackConfigError) as raised:
        load_stack_config(project, "dev")
    assert str(raised.value) == (f"{project / 'Pulumi.yaml'}: "
                                 f"{reason.format(parent=tmp_path.resolve(), project=project.resolve())}")


def test_main_names_the_program_and_the_folder_it_runs_in(tmp_path: Path) -> None:
    write_project(tmp_path, "name: demo\nruntime: python\nmain: src/\n", {"dev": "config: {}\n"})
    (tmp_path / "src").mkdir()
    config = load_stack_config(tmp_path, "dev")
    assert (config.program, config.program_dir) == (tmp_path.resolve() / "src" / "__main__.py",
                                                    tmp_path.resolve() / "src")
