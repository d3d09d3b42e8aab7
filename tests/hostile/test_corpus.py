"""Issue 45's corpus: at least 150 inputs of its eight classes that no other test of tests/hostile holds, each with
the outcome asserted exactly (exit 1 and the refusal's first line, naming the field or file, or exit 0 where the
input is legal), and for every one: no exit 2, no traceback, within TIME_BOUND seconds and MEMORY_BOUND bytes more
address space. The open-ended classes (env names and values, numbers x numeric fields, files x readers) are
generated from fixed lists with a fixed seed.

Every case runs in this process (the settings loader, or the command line's `main`, which returns the exit code the
process would have); `{t}` in an expected line stands for the case's temporary folder. `test_counts` writes the
counts per class to its temporary folder and prints them (`pytest -s`)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import resource
import shutil
import signal
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pytest

from kvpool.cli.commands.cli import main
from kvpool.cli.engine.stack_config import load_stack_config
from kvpool.cli.fleet.offline import check_cluster_clashes
from kvpool.errors import SettingsError
from kvpool.settings.from_stack import settings_from_config
from kvpool.settings.loader import load_from_pulumi_config
from tests.hostile.shell_roads import shell_payloads
from tests.program_runs import PROJECT_DIR, stack_values
from tests.service_configs import as_motor_files, memcache_pool, mooncake_pool

TIME_BOUND = 60
MEMORY_BOUND = 1024**3
SEED = 45

SHELL = "shell roads (§1)"
LINKS = "writes through links (§2)"
INTERNAL = "internal errors in commands (§3)"
MEMORY = "memory and time (§4)"
PROJECT = "project and stack files (§5)"
SIBLINGS = "one broken file in the folder (§6)"
DEPLOYS = "wrong deploys (§7)"
IMPORT = "import (§8)"

Outcome = tuple[int, str]
"""Exit code and the first line of stderr (a settings case: the first problem), "" when there is none."""


@dataclass(frozen=True)
class Case:
    cls: str
    name: str
    run: Callable[[Path], Outcome]
    expected: Outcome | tuple[int, re.Pattern[str]]
    check: Callable[[Path], None] | None = None
    """What must hold of the folder afterwards (a link's target untouched)."""


CORPUS: list[Case] = []


def case(cls: str, name: str, run: Callable[[Path], Outcome], code: int, first: str | re.Pattern[str] = "",
         check: Callable[[Path], None] | None = None) -> None:
    CORPUS.append(Case(cls, name, run, (code, first), check))


# --- runners -------------------------------------------------------------------------------------------------------


def settings_of(stack: str, change: Callable[[dict[str, Any]], Any]) -> Callable[[Path], Outcome]:
    """The settings loader on an example stack's values after `change`: (0, "") or (1, the first problem)."""
    def run(_: Path) -> Outcome:
        values = stack_values(stack)
        change(values)
        try:
            load_from_pulumi_config(values, "svc")
        except SettingsError as error:
            return 1, error.problems[0]
        return 0, ""
    return run


def cli(setup: Callable[[Path], list[Any]]) -> Callable[[Path], Outcome]:
    """`python -m kvpool` in this process on the arguments `setup` makes in the case's folder."""
    def run(folder: Path) -> Outcome:
        argv = [str(argument) for argument in setup(folder)]
        err = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as leaving:  # argparse's own exit, which main's parser turns into 1
                code = leaving.code if isinstance(leaving.code, int) else 1
        text = err.getvalue()
        assert "Traceback" not in text and "internal error" not in text, text[-2000:]
        lines = text.splitlines() or [""]
        if re.fullmatch(r"error: .*: \d+ problems?", lines[0]) and len(lines) > 1:
            return code, f"{lines[0]}\n{lines[1]}"  # the count, then the first problem
        return code, lines[0]
    return run


def project_folder(folder: Path, pulumi_yaml: str | None = None, stacks: dict[str, str] | None = None) -> Path:
    """A project running this repository's program, its Pulumi.yaml `pulumi_yaml` (default: the repository's)."""
    project = folder / "project"
    (project / "stacks").mkdir(parents=True)
    for name in ("__main__.py", "kvpool"):
        (project / name).symlink_to(PROJECT_DIR / name)
    if pulumi_yaml is None:
        (project / "Pulumi.yaml").symlink_to(PROJECT_DIR / "Pulumi.yaml")
    else:
        (project / "Pulumi.yaml").write_text(pulumi_yaml)
    for name, text in (stacks if stacks is not None else {"dev": DEV}).items():
        (project / "stacks" / f"Pulumi.{name}.yaml").write_text(text)
    return project


DEV = (PROJECT_DIR / "stacks" / "Pulumi.dev.yaml").read_text()
PULUMI_YAML = (PROJECT_DIR / "Pulumi.yaml").read_text()
SECTIONS = ("motor_common_env", "motor_controller_env", "motor_coordinator_env", "motor_engine_prefill_env",
            "motor_engine_decode_env", "motor_kv_cache_store_env", "motor_kv_conductor_env")
rng = random.Random(SEED)


# --- §1 shell roads: env names bash or the loader act on, in every section; values that only look dangerous -------

SHELL_MESSAGE = ("is read by bash itself, and every Motor container, probe and preStop starts with bash -c: its value "
                 "would run or change what runs, however it is quoted; remove it.")
LOADER_MESSAGE = ("is read by the dynamic loader in every process of a Motor container: its value would load or "
                  "change code there; remove it, and set what it is for in the image (its Dockerfile's ENV), where "
                  "it is reviewed with the image.")
PAYLOADS = shell_payloads("/tmp/kvpool-corpus")
# bash(1) "Shell Variables" and "INVOCATION" (the ones test_shell_env_names.py does not already give).
BASH_NAMES = ("BASHOPTS", "PS0", "PS1", "PS2", "PS3", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE", "EXECIGNORE",
              "FIGNORE", "BASH_XTRACEFD", "BASH_COMPAT", "BASH_LOADABLES_PATH", "FUNCNEST", "TMOUT",
              "POSIXLY_CORRECT", "BASH_FUNC_ls", "BASH_FUNC_cd", "BASH_FUNC_x_y")
# ld.so(8) "ENVIRONMENT" (every LD_* but LD_PRELOAD and LD_AUDIT, which test_shell_env_names.py gives).
LOADER_NAMES = ("LD_LIBRARY_PATH", "LD_BIND_NOW", "LD_BIND_NOT", "LD_DEBUG", "LD_DEBUG_OUTPUT", "LD_DYNAMIC_WEAK",
                "LD_HWCAP_MASK", "LD_ORIGIN_PATH", "LD_POINTER_GUARD", "LD_PROFILE", "LD_PROFILE_OUTPUT",
                "LD_SHOW_AUXV", "LD_TRACE_LOADED_OBJECTS", "LD_USE_LOAD_BIAS", "LD_ASSUME_KERNEL",
                "LD_PREFER_MAP_32BIT_EXEC", "LD_LIBRARY_PATH_X")
# Names bash and ld.so do not read (they are case-sensitive and match whole names): legal.
LOOK_ALIKES = ("bash_env", "Ld_Preload", "BASH_ENVX", "XLD_PRELOAD", "LDPRELOAD", "PS5", "MY_IFS", "SHELLOPTS_",
               "ENV_FILE", "BASHFUNC_x")


def with_env(section: str, name: str, value: str) -> Callable[[dict[str, Any]], None]:
    return lambda values: values.setdefault("env", {}).setdefault(section, {}).update({name: value})


for name in (*BASH_NAMES, *LOADER_NAMES):
    section, payload = rng.choice(SECTIONS), rng.choice(PAYLOADS)
    message = LOADER_MESSAGE if name.startswith("LD_") else SHELL_MESSAGE
    case(SHELL, f"name {name} in {section}", settings_of("dev", with_env(section, name, payload)), 1,
         f"env.{section}.{name}: {message}")
for name in LOOK_ALIKES:
    section = rng.choice(SECTIONS)
    case(SHELL, f"look-alike {name} in {section}", settings_of("dev", with_env(section, name, rng.choice(PAYLOADS))), 0)
for payload in PAYLOADS:
    section = rng.choice(SECTIONS)
    case(SHELL, f"value {payload!r} in {section}", settings_of("dev", with_env(section, "APP_NOTE", payload)), 0)


def secret_env(names: dict[str, str]) -> Callable[[Path], Outcome]:
    def run(_: Path) -> Outcome:
        texts = {f"motor-kvpool:{key}": json.dumps(value) for key, value in mooncake_pool().items()}
        texts["motor-kvpool:secret_env"] = json.dumps(names)
        try:
            settings_from_config(texts, {"motor-kvpool:secret_env"}, "dev")
        except SettingsError as error:
            return 1, error.problems[0]
        return 0, ""
    return run


for name in ("PROMPT_COMMAND", "LD_LIBRARY_PATH", "BASH_FUNC_ls", "GLOBIGNORE"):
    message = LOADER_MESSAGE if name.startswith("LD_") else SHELL_MESSAGE
    case(SHELL, f"secret_env {name}", secret_env({"HF_TOKEN": "t", name: "x"}), 1, f"secret_env.{name}: {message}")


# --- §2 writes through links: every place a command writes, a link there (or dangling) ------------------------------

LINK = ("{path} is a symbolic link (to {target!r}); kvpool writes no file through a link it did not make: remove the "
        "link, or name the real folder")


def victim(folder: Path) -> Path:
    (folder / "victim").mkdir(exist_ok=True)
    (folder / "victim" / "kept.yaml").write_text("kept: true\n")
    return folder / "victim"


def untouched(folder: Path) -> None:
    assert sorted(path.name for path in (folder / "victim").iterdir()) == ["kept.yaml"]
    assert (folder / "victim" / "kept.yaml").read_text() == "kept: true\n"


def kept_and(*written: str) -> Callable[[Path], None]:
    def check(folder: Path) -> None:
        assert sorted(path.name for path in (folder / "victim").iterdir()) == sorted(["kept.yaml", *written])
        assert (folder / "victim" / "kept.yaml").read_text() == "kept: true\n"
    return check


def motor_pair(folder: Path) -> tuple[Path, Path]:
    user, env = as_motor_files(memcache_pool())
    (folder / "motor").mkdir(exist_ok=True)
    (folder / "motor" / "user_config.json").write_text(json.dumps(user))
    (folder / "motor" / "env.json").write_text(json.dumps(env))
    return folder / "motor" / "user_config.json", folder / "motor" / "env.json"


def preview_out(link_at: str, target: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        victim(folder)
        path = folder / "out" / link_at
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(folder / target)
        return ["preview", "--stack", "dev", "--no-policy", "--out", folder / "out"]
    return setup


for link_at, target in (("dev", "victim"), ("dev/manifests", "victim/absent"), ("dev/outputs.json", "victim/new.json")):
    case(LINKS, f"preview: out/{link_at} a link to {target}", cli(preview_out(link_at, target)), 1,
         "error: " + LINK.format(path=f"{{t}}/out/{link_at}", target=f"{{t}}/{target}"), untouched)
# A link inside manifests/ is replaced (removed itself, its target kept): a real file is written in its place.
for name in ("v1-ConfigMap-motor-config.yaml", "zz-stale.yaml"):
    case(LINKS, f"preview: manifests/{name} a link", cli(preview_out(f"dev/manifests/{name}", "victim/kept.yaml")), 0,
         check=untouched)


def named_out_link(folder: Path) -> list[Any]:
    victim(folder)
    (folder / "out").symlink_to(folder / "victim")
    return ["preview", "--stack", "dev", "--no-policy", "--out", folder / "out"]


# The folder the user names is taken as named, a link or not (as `cd` would): the preview lands in its target.
case(LINKS, "preview: --out itself a link the user named", cli(named_out_link), 0, check=kept_and("dev"))


def schema(link_at: str, target: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        victim(folder)
        project = folder / "p"
        project.mkdir()
        shutil.copy(PROJECT_DIR / "Pulumi.yaml", project)
        (project / link_at).parent.mkdir(parents=True, exist_ok=True)
        (project / link_at).symlink_to(folder / target)
        return ["stack-schema", "--project-dir", project]
    return setup


for link_at, target in (("stacks/stack-file.schema.json", "victim/new.json"), ("stacks", "victim")):
    case(LINKS, f"stack-schema: {link_at} a link", cli(schema(link_at, target)), 1,
         "error: " + LINK.format(path=f"{{t}}/p/{link_at}", target=f"{{t}}/{target}"), untouched)


def package(link_at: str | None, target: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        victim(folder)
        if link_at is None:
            (folder / "pkg").symlink_to(folder / target)
        else:
            (folder / "pkg").mkdir()
            (folder / "pkg" / link_at).symlink_to(folder / target)
        return ["component-package", folder / "pkg"]
    return setup


for link_at, target in (("__main__.py", "victim/new.py"), ("PulumiPlugin.yaml", "victim/kept.yaml")):
    case(LINKS, f"component-package: {link_at} a link to {target}", cli(package(link_at, target)), 1,
         "error: " + LINK.format(path=f"{{t}}/pkg/{link_at}", target=f"{{t}}/{target}"), untouched)
case(LINKS, "component-package: DIR a dangling link", cli(package(None, "victim/absent")), 1,
     "error: {t}/pkg: File exists", untouched)
case(LINKS, "component-package: DIR a link the user named", cli(package(None, "victim")), 0,
     check=kept_and("PulumiPlugin.yaml", "__main__.py"))


def import_into(link_at: str, target: str, *extra: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        victim(folder)
        user, env = motor_pair(folder)
        (folder / link_at).parent.mkdir(parents=True, exist_ok=True)
        (folder / link_at).symlink_to(folder / target)
        return ["import", "--user-config", user, "--env-config", env, "--stack", "svc", "--stacks-dir",
                folder / "stacks", *extra]
    return setup


for extra in ((), ("--force",)):
    case(LINKS, f"import {' '.join(extra)}: a dangling link at the stack file",
         cli(import_into("stacks/Pulumi.svc.yaml", "victim/new.yaml", *extra)), 1,
         "error: " + LINK.format(path="{t}/stacks/Pulumi.svc.yaml", target="{t}/victim/new.yaml"), untouched)
case(LINKS, "import: --stacks-dir itself a link the user named", cli(import_into("stacks", "victim")), 0,
     check=kept_and("Pulumi.svc.yaml"))


# --- §3 internal errors: numbers x numeric fields, the size command, import --set's quoted keys -----------------

INTEGER_FIELDS = (  # (stack, dotted path, the example the refusal gives)
    ("dev", "motor_deploy_config.p_instances_num", "1"),
    ("dev", "motor_deploy_config.d_pod_npu_num", "2"),
    ("dev", "kv_pool_sizing.prefill_tokens_per_second", "2"),
    ("dev", "motor_engine_decode_config.engine_config.max_num_batched_tokens", "2"),
    ("yuanrong", "kv_cache_store_config.port", "50088"),
    ("yuanrong", "kv_cache_store_config.shared_memory_size_mb", "65536"),
)
DECIMALS = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf"), "1e+308": 1e308, "1.5": 1.5,
            "-0.5": -0.5}
NOT_WHOLE = {"true": True, "false": False, '"7"': "7", "list": [], "dict": {}}


def set_path(dotted: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(values: dict[str, Any]) -> None:
        *parents, last = dotted.split(".")
        holder = values
        for key in parents:
            holder = holder.setdefault(key, {})
        holder[last] = value
    return change


for stack, field, example in INTEGER_FIELDS:
    for shown, value in DECIMALS.items():
        case(INTERNAL, f"{field} = {shown}", settings_of(stack, set_path(field, value)), 1,
             f"{field}: {shown} is a decimal number; write a whole number without quotes, e.g. {example}")
    for shown, value in NOT_WHOLE.items():
        case(INTERNAL, f"{field} = {shown}", settings_of(stack, set_path(field, value)), 1,
             f"{field}: {shown} is not a whole number; write a whole number without quotes, e.g. {example}")

LIFETIME = "kv_pool_sizing.min_block_lifetime_seconds"
for shown, value, problem in (
        ("NaN", float("nan"), "NaN must be above 0; write a number greater than 0"),
        ("-Infinity", float("-inf"), "-Infinity must be above 0; write a number greater than 0"),
        ("Infinity", float("inf"), "Infinity is above 86400, the most this field takes; write 86400 or less"),
        ("2**63", 2**63, f"{2**63} is above 86400, the most this field takes; write 86400 or less"),
        ("-1", -1, "-1 must be above 0; write a number greater than 0"),
        ("86400.5", 86400.5, "86400.5 is above 86400, the most this field takes; write 86400 or less")):
    case(INTERNAL, f"{LIFETIME} = {shown}", settings_of("dev", set_path(LIFETIME, value)), 1, f"{LIFETIME}: {problem}")
case(INTERNAL, f"{LIFETIME} = 86400", settings_of("dev", set_path(LIFETIME, 86400)), 0)


def size(*args: str) -> Callable[[Path], list[Any]]:
    return lambda folder: ["size", *args]


NOT_A_LIFETIME = "error: argument --lifetime: {!r} is not a lifetime: write a number of seconds above 0, e.g. 10"
for text in ("NaN", "+inf", "1e309", "10e1000", "-0", "-1e-300", "-inf"):
    case(INTERNAL, f"size --lifetime={text}", cli(size("--stack", "dev", f"--lifetime={text}")), 1,
         NOT_A_LIFETIME.format(text))
for text in ("0x10", "", "ten"):
    case(INTERNAL, f"size --lifetime={text!r}", cli(size("--stack", "dev", f"--lifetime={text}")), 1,
         f"error: argument --lifetime: {text!r} is not a number of seconds, e.g. 10")
for text in ("1_0", " 10"):
    case(INTERNAL, f"size --lifetime={text!r} (Python's float reads it)", cli(size("--stack", "dev", f"--lifetime={text}")),
         0)
for text in ("1.5", "1e6", "9" * 5000):
    case(INTERNAL, f"size --tokens={text[:12]}", cli(size("--stack", "mooncake-ha", f"--tokens={text}")), 1,
         f"error: argument --tokens: {text!r} is not a whole number of tokens, e.g. 200000")
case(INTERNAL, "size --tokens=-7", cli(size("--stack", "mooncake-ha", "--tokens=-7")), 1,
     "error: argument --tokens: '-7' is not a number of tokens: write a whole number above 0")
case(INTERNAL, "size --tokens=2**63", cli(size("--stack", "mooncake-ha", f"--tokens={2**63}")), 1,
     f"error: {2**63} cached tokens needs more than one node's memory (16384GB, the most the settings accept) in each "
     "of the pool's 2 engine ranks (kv_cache_store_config.global_segment_size); ask for less, or add engines to the "
     "pool")
case(INTERNAL, "size --tokens=1_000", cli(size("--stack", "mooncake-ha", "--tokens=1_000")), 0)


def import_set(assignment: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        user, env = motor_pair(folder)
        return ["import", "--user-config", user, "--env-config", env, "--stack", "x", "--stacks-dir",
                folder / "stacks", "--set", assignment]
    return setup


BAD_ESCAPES = {"a\\x4": "truncated \\xXX escape", "\\N{NOPE}": "unknown Unicode character name",
               "\\u12": "truncated \\uXXXX escape", "\\U0011ffff": "illegal Unicode character",
               "\\x": "truncated \\xXX escape", "\\N{}": "malformed \\N character escape"}
for key, reason in BAD_ESCAPES.items():
    for section in ("motor_controller_config", "env.motor_common_env"):
        path = f"{section}['{key}']"
        case(INTERNAL, f"import --set {path}", cli(import_set(f"{path}=1")), 1,
             f"error: --set {path}: the quoted key ['{key}'] cannot be read ({reason}); write escapes as \\xXX, "
             "\\uXXXX or \\N{NAME}, and the key on one line")
case(INTERNAL, "import --set a raw line break in a quoted key", cli(import_set("env.motor_common_env['a\nb']=1")), 1,
     "error: --set env.motor_common_env['a")
for key in ("\\x41", "\\N{LATIN CAPITAL LETTER A}", "\\u0041"):
    case(INTERNAL, f"import --set env.motor_common_env['{key}'] (reads A)",
         cli(import_set(f"env.motor_common_env['{key}']=1")), 0)


# --- §4 memory and time: each file a command reads x files too big, too deep, endless or not files ----------------

BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{name}: &{name} [{','.join(['*' + previous] * 9)}]\n" for previous, name in zip("abcdefgh", "bcdefghi", strict=True))
BAD_FILES: dict[str, tuple[Callable[[Path], Any], str]] = {
    "a JSON object 10,000 deep": (lambda path: path.write_text('{"a":' * 10_000 + "1" + "}" * 10_000),
                                  "nested more than 64 levels deep"),
    "a list 100,000 deep": (lambda path: path.write_text("[" * 100_000 + "]" * 100_000),
                            "nested more than 64 levels deep"),
    "2 MiB": (lambda path: path.write_text('{"a": "' + "x" * (2 * 1024 * 1024) + '"}'),
              "larger than 1024 KiB; this is not a configuration file"),
    "a FIFO": (lambda path: os.mkfifo(path), "is a FIFO, not a regular file; name a file"),
    "a link to /dev/zero": (lambda path: path.symlink_to("/dev/zero"),
                            "is a character device, not a regular file; name a file"),
    "a folder": (lambda path: path.mkdir(), "is a folder, not a file"),
    "a YAML alias bomb": (lambda path: path.write_text(BOMB), "not valid JSON: line 1 column 1: Expecting value"),
}


def reader(flag: str, make: Callable[[Path], Any]) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        bad = folder / "input"
        make(bad)
        if flag in ("--policy-config", "--stack-outputs"):
            extra = [] if flag == "--policy-config" else ["--no-policy"]
            return ["preview", "--stack", "dev", "--out", folder / "out", *extra, flag, bad]
        user, env = motor_pair(folder)
        user, env = (bad, env) if flag == "--user-config" else (user, bad)
        return ["import", "--user-config", user, "--env-config", env, "--stack", "x", "--stacks-dir", folder / "s"]
    return setup


for flag in ("--policy-config", "--stack-outputs", "--user-config", "--env-config"):
    for kind, (make, problem) in BAD_FILES.items():
        named = f"{flag} {{t}}/input" if flag in ("--policy-config", "--stack-outputs") else "{t}/input"
        case(MEMORY, f"{flag} {kind}", cli(reader(flag, make)), 1, f"error: {named}: {problem}")


def own_file(make: Callable[[Path], Any], which: str = "stacks/Pulumi.dev.yaml") -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        project = project_folder(folder, pulumi_yaml=PULUMI_YAML, stacks={} if "stacks" in which else None)
        (project / which).unlink(missing_ok=True)
        make(project / which)
        return ["settings", "--stack", "dev", "--project-dir", project]
    return setup


YAML_FILES = {
    "a FIFO": (lambda path: os.mkfifo(path), "is a FIFO, not a regular file; name a file"),
    "a link to /dev/zero": (lambda path: path.symlink_to("/dev/zero"),
                            "is a character device, not a regular file; name a file"),
    "a folder": (lambda path: path.mkdir(), "is a folder, not a file"),
    "2 MiB": (lambda path: path.write_text("#" * (2 * 1024 * 1024)),
              "larger than 1024 KiB; this is not a configuration file"),
    "a link to /proc/self/mem": (lambda path: path.symlink_to("/proc/self/mem"),
                                 "cannot read it: Input/output error"),
}
for which in ("Pulumi.yaml", "stacks/Pulumi.dev.yaml"):
    for kind, (make, problem) in YAML_FILES.items():
        case(MEMORY, f"{which} {kind}", cli(own_file(make, which)), 1, f"error: {{t}}/project/{which}: {problem}")
case(MEMORY, "Pulumi.yaml an alias bomb", cli(own_file(lambda path: path.write_text(BOMB + PULUMI_YAML), "Pulumi.yaml")),
     1, "error: {t}/project/Pulumi.yaml:6: aliases expand the document beyond 200000 values; write the sections out "
        "instead of multiplying them with anchors")
case(MEMORY, "Pulumi.yaml 5,000 deep", cli(own_file(
    lambda path: path.write_text(PULUMI_YAML + "x: " + "[" * 5000 + "]" * 5000 + "\n"), "Pulumi.yaml")), 1,
     f"error: {{t}}/project/Pulumi.yaml:{PULUMI_YAML.count(chr(10)) + 1}: nested more than 64 levels deep")


# --- §5 the project and stack files as the CLI reads them -------------------------------------------------------

NAME_RULE = ("project names may only contain alphanumerics, hyphens, underscores, and periods (the Pulumi CLI "
             "refuses it)")


def project_yaml(text: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        return ["settings", "--stack", "dev", "--project-dir", project_folder(folder, pulumi_yaml=text)]
    return setup


def replaced(old: str, new: str, base: str = PULUMI_YAML) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def top(line: str) -> str:
    return replaced("stackConfigDir: stacks\n", f"stackConfigDir: stacks\n{line}\n")


RUNTIME = "runtime:\n  name: python\n  options:\n    toolchain: pip\n    virtualenv: venv\n"
MISSING = ("error: Stack 'dev' is missing configuration values 'motor_deploy_config', 'motor_engine_decode_config' "
           "and 'motor_engine_prefill_config'")  # the stack file is the repository's, written for motor-kvpool
PROJECT_FILES: dict[str, tuple[str, int, str]] = {
    "name with a tab": (replaced("name: motor-kvpool", 'name: "a\\tb"'), 1, f"name 'a\\tb': {NAME_RULE}"),
    "name with a colon": (replaced("name: motor-kvpool", 'name: "a:b"'), 1, f"name 'a:b': {NAME_RULE}"),
    "name with a plus": (replaced("name: motor-kvpool", "name: a+b"), 1, f"name 'a+b': {NAME_RULE}"),
    "name in Cyrillic": (replaced("name: motor-kvpool", "name: мотор"), 1, f"name 'мотор': {NAME_RULE}"),
    "name a number": (replaced("name: motor-kvpool", "name: 5"), 1, "'name' (the project name) is required"),
    "name a list": (replaced("name: motor-kvpool", "name: [a]"), 1, "'name' (the project name) is required"),
    "name empty": (replaced("name: motor-kvpool", "name: ''"), 1, "'name' (the project name) is required"),
    "name twice": ("name: other\n" + PULUMI_YAML, 1, "3: duplicate key 'name' (first at line 1); the Pulumi CLI "
                   'refuses a key given twice (mapping key "name" already defined), keep one'),
    "runtime go": (replaced(RUNTIME, "runtime: go\n"), 1, "runtime: is 'go', but this project is a Python program: "
                   "the Pulumi CLI would run it with the language host of 'go' (pulumi-language-go), not this "
                   "program; write `runtime: python`"),
    "runtime Python": (replaced(RUNTIME, "runtime: {name: Python}\n"), 1, "runtime: is 'Python', but this project is "
                       "a Python program: the Pulumi CLI would run it with the language host of 'Python' "
                       "(pulumi-language-Python), not this program; write `runtime: python`"),
    "runtime a number": (replaced(RUNTIME, "runtime: 3\n"), 1, "runtime: names no language (write a name, or a "
                         "mapping with `name:`); write `runtime: python`"),
    "runtime without a name": (replaced(RUNTIME, "runtime: {options: {toolchain: pip}}\n"), 1,
                               "runtime: names no language (write a name, or a mapping with `name:`); write "
                               "`runtime: python`"),
    "runtime options text": (replaced(RUNTIME, "runtime: {name: python, options: x}\n"), 1, "runtime.options: is "
                             "string, which the Pulumi CLI refuses (the file: #/runtime/options: expected object, "
                             "but got string)"),
    "runtime with another field": (replaced(RUNTIME, "runtime: {name: python, extra: 1}\n"), 1, "runtime.extra: is no "
                                   "field of runtime (it takes name, options), which the Pulumi CLI refuses (the "
                                   "file: #/runtime: additionalProperties 'extra' not allowed)"),
    "runtime python as text": (replaced(RUNTIME, "runtime: python\n"), 0, ""),
    "main a list": (top("main: [a]"), 1, "main: must be text, the program's folder (the Pulumi CLI refuses the file: "
                    "#/main: expected string or null)"),
    "main absolute": (top("main: /srv/program"), 1, "main: '/srv/program': is an absolute path; write the program's "
                      "folder relative to the project (e.g. `main: src/`)"),
    "main .": (top("main: ."), 0, ""),
    "main null": (top("main: null"), 0, ""),
    "stackConfigDir a number": (replaced("stackConfigDir: stacks", "stackConfigDir: 5"), 1, "stackConfigDir: is "
                                "number, which the Pulumi CLI refuses (the file: #/stackConfigDir: expected string or "
                                "null, but got number)"),
    "stackConfigDir a list": (replaced("stackConfigDir: stacks", "stackConfigDir: [stacks]"), 1, "stackConfigDir: is "
                              "array, which the Pulumi CLI refuses (the file: #/stackConfigDir: expected string or "
                              "null, but got array)"),
    "stackConfigDir ./stacks/": (replaced("stackConfigDir: stacks", "stackConfigDir: ./stacks/"), 0, ""),
    "description a list": (replaced("description: MindIE", "description: [x]\nabout: MindIE"), 1, "description: is "
                           "array, which the Pulumi CLI refuses (the file: #/description: expected string or null, "
                           "but got array)"),
    "author a number": (top("author: 5"), 1, "author: is number, which the Pulumi CLI refuses (the file: #/author: "
                        "expected string or null, but got number)"),
    "website a list": (top("website: [x]"), 1, "website: is array, which the Pulumi CLI refuses (the file: #/website: "
                       "expected string or null, but got array)"),
    "license true": (top("license: true"), 1, "license: is boolean, which the Pulumi CLI refuses (the file: "
                     "#/license: expected string or null, but got boolean)"),
    "backend.url a number": (top("backend: {url: 5}"), 1, "backend.url: is number, which the Pulumi CLI refuses (the "
                             "file: #/backend/url: expected string, but got number)"),
    "backend with another field": (top("backend: {typo: 1}"), 1, "backend.typo: is no field of backend (it takes "
                                   "url), which the Pulumi CLI refuses (the file: #/backend: additionalProperties "
                                   "'typo' not allowed)"),
    "options a list": (top("options: [1]"), 1, "options: is array, which the Pulumi CLI refuses (the file: #/options: "
                       "expected object or null, but got array)"),
    "options.refresh never": (top("options: {refresh: never}"), 1, "options.refresh: is 'never', which the Pulumi CLI "
                              "refuses (the file: #/options/refresh: value must be \"always\")"),
    "options.refresh always": (top("options: {refresh: always}"), 0, ""),
    "plugins text": (top("plugins: x"), 1, "plugins: is string, which the Pulumi CLI refuses (the file: #/plugins: "
                     "expected object, but got string)"),
    "plugins null": (top("plugins: null"), 1, "plugins: is null, which the Pulumi CLI refuses (the file: #/plugins: "
                     "expected object, but got null)"),
    "template text": (top("template: x"), 1, "template: is string, which the Pulumi CLI refuses (the file: "
                      "#/template: expected object or null, but got string)"),
    "config a list": (replaced("config:\n  # Object", "config: []\nnotes:\n  # Object"), 1, "config: is array, which "
                      "the Pulumi CLI refuses (the file: #/config: expected object or string or null, but got array)"),
    "an unknown top-level field": (top("x-team: {owner: infra}"), 0, ""),
    "a list at the top": ("- name: motor-kvpool\n", 1, "expected a mapping at the top level, found list"),
    "two merge keys": (top("x: &a {a: 1}\ny: {<<: *a, <<: *a}"), 1, "11: duplicate key '<<' (first at line 11); the "
                       'Pulumi CLI refuses a key given twice (mapping key "<<" already defined), keep one'),
}
for kind, (text, code, problem) in PROJECT_FILES.items():
    case(PROJECT, f"Pulumi.yaml {kind}", cli(project_yaml(text)), code,
         f"error: {{t}}/project/Pulumi.yaml: {problem}" if problem and not problem[0].isdigit() else
         f"error: {{t}}/project/Pulumi.yaml:{problem}" if problem else "")

STACK_SHAPES: dict[str, tuple[str, str]] = {
    "encryptionsalt a mapping": ("encryptionsalt: {a: b}\n", "encryptionsalt: is a mapping, but the Pulumi CLI reads "
                                 "it as text and refuses the file (cannot unmarshal !!map into string)"),
    "secretsprovider a list": ("secretsprovider: [a]\n", "secretsprovider: is a list, but the Pulumi CLI reads it as "
                               "text and refuses the file (cannot unmarshal !!seq into string)"),
    "encryptedkey a list": ("encryptedkey: [a]\n", "encryptedkey: is a list, but the Pulumi CLI reads it as text and "
                            "refuses the file (cannot unmarshal !!seq into string)"),
    "encryptedkey a mapping": ("encryptedkey: {a: 1}\n", "encryptedkey: is a mapping, but the Pulumi CLI reads it as "
                               "text and refuses the file (cannot unmarshal !!map into string)"),
}


def stack_file(text: str) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        return ["settings", "--stack", "dev", "--project-dir", project_folder(folder, stacks={"dev": text})]
    return setup


for kind, (line, problem) in STACK_SHAPES.items():
    case(PROJECT, f"stack file {kind}", cli(stack_file(line + DEV)), 1,
         f"error: {{t}}/project/stacks/Pulumi.dev.yaml: {problem}")
case(PROJECT, "stack file two merge keys in a section", cli(stack_file(replaced(
    "  motor-kvpool:kv_cache_store_config:\n    backend: memcache\n",
    "  motor-kvpool:kv_cache_store_config:\n    <<: {backend: memcache}\n    <<: {backend: memcache}\n", DEV))), 1,
     re.compile(r"error: \{t\}/project/stacks/Pulumi\.dev\.yaml:\d+: duplicate key '<<' \(first at line \d+\); the "
                r'Pulumi CLI refuses a key given twice \(mapping key "<<" already defined\), keep one'))
case(PROJECT, "stack file encryptionsalt a number (yaml.v3 reads a scalar into text)",
     cli(stack_file("encryptionsalt: 5\n" + DEV)), 0)


# --- §6 one broken file in the folder: the stack previewed beside it, the sibling named in one line ----------------

NOT_CHECKED = ("stack {stack} ({{t}}/project/stacks/{file}) was not checked for what its cluster allocates once "
               "(NodePorts, namespaces): its stack file is refused: ")


def clashes(make: Callable[[Path], Any], file: str = "Pulumi.broken.yaml") -> Callable[[Path], Outcome]:
    """The preview's clash check of dev beside a broken sibling: (0, "") with no note, (0, the note) with one."""
    def run(folder: Path) -> Outcome:
        project = project_folder(folder)
        make(project / "stacks" / file)
        notes = check_cluster_clashes(project, load_stack_config(project, "dev"))
        assert len(notes) <= 1, notes
        return 0, str(notes[0]) if notes else ""
    return run


SIBLINGS_BROKEN: dict[str, tuple[Callable[[Path], Any], str]] = {
    "a dangling link": (lambda path: path.symlink_to("/nonexistent/kvpool"), "{p}: no such file"),
    "a looping link": (lambda path: path.symlink_to(path.name), "{p}: cannot read it: Too many levels of symbolic "
                       "links"),
    "a FIFO": (lambda path: os.mkfifo(path), "{p}: is a FIFO, not a regular file; name a file"),
    "a link to /dev/zero": (lambda path: path.symlink_to("/dev/zero"), "{p}: is a character device, not a regular "
                            "file; name a file"),
    "empty": (lambda path: path.write_text(""), "Stack 'broken' is missing configuration values "
              "'motor_deploy_config', 'motor_engine_decode_config' and 'motor_engine_prefill_config'"),
    "config a number": (lambda path: path.write_text("config: 5\n"), "{p}: 'config' must be a mapping of "
                        "'<namespace>:<key>' to values"),
    "a list at the top": (lambda path: path.write_text("- 1\n"), "{p}: expected a mapping at the top level, found "
                          "list"),
    "UTF-16": (lambda path: path.write_bytes(DEV.encode("utf-16")), "{p}: is UTF-16 text; save it as UTF-8"),
    "Latin-1": (lambda path: path.write_bytes(b"config:\n  motor-kvpool:x: \xe9\n"), "{p}:2: not UTF-8 text (byte "
                "0xe9 at offset 26); save it as UTF-8"),
    "a NUL byte": (lambda path: path.write_bytes(b"config:\n  a: \x00\n"), "{p}: invalid YAML: unacceptable "
                   "character #x0000: special characters are not allowed, the first: in \"<unicode string>\", "
                   "position 13"),
    "an alias bomb": (lambda path: path.write_text(BOMB + "config: {motor-kvpool:x: *i}\n"), "{p}:6: aliases expand "
                      "the document beyond 200000 values; write the sections out instead of multiplying them with "
                      "anchors"),
    "5,000 deep": (lambda path: path.write_text("config: {motor-kvpool:x: " + "[" * 5000 + "]" * 5000 + "}\n"),
                   "{p}:1: nested more than 64 levels deep"),
    "a duplicate key": (lambda path: path.write_text("config:\n  motor-kvpool:x: 1\n  motor-kvpool:x: 2\n"),
                        "{p}:3: duplicate key 'motor-kvpool:x' (first at line 2); the Pulumi CLI refuses a key given "
                        'twice (mapping key "motor-kvpool:x" already defined), keep one'),
    "two merge keys": (lambda path: path.write_text("a: &a {x: 1}\nconfig:\n  <<: *a\n  <<: *a\n"), "{p}:4: duplicate "
                       "key '<<' (first at line 3); the Pulumi CLI refuses a key given twice (mapping key "
                       '"<<" already defined), keep one'),
    "encryptionsalt a list": (lambda path: path.write_text("encryptionsalt: [a]\nconfig: {}\n"), "{p}: encryptionsalt: "
                              "is a list, but the Pulumi CLI reads it as text and refuses the file (cannot unmarshal "
                              "!!seq into string)"),
    "a python tag": (lambda path: path.write_text("config: {motor-kvpool:x: !!python/object:os.system x}\n"),
                     "{p}:1: config.motor-kvpool:x: tag 'tag:yaml.org,2002:python/object:os.system' is not "
                     "supported; write the value without it (in quotes, \"x\", if it is text)"),
    "2 MiB": (lambda path: path.write_bytes(b"#" * (2 * 1024 * 1024 + 1)), "{p}: larger than 1024 KiB; this is not a "
              "configuration file"),
}
for kind, (make, detail) in SIBLINGS_BROKEN.items():
    path = "{t}/project/stacks/Pulumi.broken.yaml"
    case(SIBLINGS, f"sibling {kind}", clashes(make), 0,
         NOT_CHECKED.format(stack="broken", file="Pulumi.broken.yaml") + detail.format(p=path))

NOT_A_STACK = "not a stack name; use 1 to 100 letters, digits, '-', '_' and '.' (the Pulumi CLI's rule)"
for file, stack in (("Pulumi.dev copy.yaml", "dev copy"), ("Pulumi..yaml", ""), ("Pulumi.a+b.yaml", "a+b")):
    case(SIBLINGS, f"a stray {file[:30]}", clashes(lambda path: path.write_text("config: [\n"), file), 0,
         NOT_CHECKED.format(stack=stack, file=file) + f"--stack {stack!r}: {NOT_A_STACK}")
for file in ("Pulumi.yml", "Pulumi.dev.yaml~", "Pulumi.dev.yaml.bak", "Pulumi.dev.yaml.swp", "notes.yaml"):
    case(SIBLINGS, f"a file {file} that names no stack", clashes(lambda path: path.write_text("config: [\n"), file), 0)


def preview_beside(make: Callable[[Path], Any]) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        project = project_folder(folder)
        make(project / "stacks" / "Pulumi.broken.yaml")
        return ["preview", "--stack", "dev", "--project-dir", project, "--out", folder / "out", "--no-policy"]
    return setup


case(SIBLINGS, "preview of dev beside a FIFO sibling", cli(preview_beside(lambda path: os.mkfifo(path))), 0,
     "note: " + NOT_CHECKED.format(stack="broken", file="Pulumi.broken.yaml")
     + "{t}/project/stacks/Pulumi.broken.yaml: is a FIFO, not a regular file; name a file")


# --- §7 wrong deploys that previewed clean ---------------------------------------------------------------------

ETCD = "kv_cache_store_config.etcd_client_cidrs[0]"
for cidr, addresses in (("0.0.0.0/1", 2**31), ("10.0.0.0/16", 2**16), ("192.168.0.0/23", 512), ("172.16.0.0/12", 2**20),
                        ("10.128.0.0/9", 2**23)):
    case(DEPLOYS, f"etcd_client_cidrs {cidr}", settings_of("yuanrong", set_path(
        "kv_cache_store_config.etcd_client_cidrs", [cidr])), 1,
         f"{ETCD}: {cidr!r} admits {addresses} addresses to Yuanrong's etcd, which has no authentication; list the "
         "engine nodes' own addresses (each /32) or ranges of at most 256 (/24)")
for cidr, addresses in (("::/1", 2**127), ("fd00::/64", 2**64), ("2001:db8::/119", 512)):
    case(DEPLOYS, f"etcd_client_cidrs {cidr}", settings_of("yuanrong", set_path(
        "kv_cache_store_config.etcd_client_cidrs", [cidr])), 1,
         f"{ETCD}: {cidr!r} admits {addresses} addresses to Yuanrong's etcd, which has no authentication; list the "
         "engine nodes' own addresses (each /128) or ranges of at most 256 (/120)")
for cidr in ("10.1.2.0/24", "10.1.2.3/32", "2001:db8::/120", "10.1.2.0/25"):
    case(DEPLOYS, f"etcd_client_cidrs {cidr} (legal)", settings_of("yuanrong", set_path(
        "kv_cache_store_config.etcd_client_cidrs", [cidr])), 0)
for cidr in ("10.1.2.3/24", "10.0.0.0/8 ", "10.0.0.0/33"):
    case(DEPLOYS, f"etcd_client_cidrs {cidr!r}", settings_of("yuanrong", set_path(
        "kv_cache_store_config.etcd_client_cidrs", [cidr])), 1,
         f"{ETCD}: {cidr!r} is not a network address such as 192.168.10.11/32")

DOMAIN = "is not a DNS domain such as cluster.local (the kubelet's clusterDomain; lower-case labels joined by dots)"
for domain in ("-a.local", "a..b", "A.LOCAL", "a_b.local", "cluster.local.", "ünï.local"):
    case(DEPLOYS, f"cluster_domain {domain!r}", settings_of("dev", set_path("cluster_domain", domain)), 1,
         f"cluster_domain: {domain!r} {DOMAIN}")
case(DEPLOYS, "cluster_domain a 64-character label", settings_of("dev", set_path("cluster_domain", "b" * 64 + ".x")),
     1, re.compile(rf"cluster_domain: '{'b' * 64}\.x' has the label '{'b' * 64}' of 64 characters; DNS allows at most "
                   r"63 in a label, so no Service host name in it would resolve.*"))
for domain in ("a" * 63, "a.b.c.d.e.f.g.h.i.j", "k8s-1.internal"):
    case(DEPLOYS, f"cluster_domain {domain[:20]} (legal)", settings_of("dev", set_path("cluster_domain", domain)), 0)

SYSTEM = ("{ns} is a namespace Kubernetes itself uses, where no service's engines run; admitting it opens the pool to "
          "the cluster's system pods: list the consumers' own namespaces")
for namespace in ("kube-node-lease", "kube-public", "default"):
    case(DEPLOYS, f"allowed_consumers [{namespace}]", settings_of("service-a", set_path(
        "kv_cache_store_config.allowed_consumers", ["service-b", namespace])), 1,
         "kv_cache_store_config.allowed_consumers: " + SYSTEM.format(ns=namespace))
for namespace in ("KUBE-SYSTEM", "*", ""):
    case(DEPLOYS, f"allowed_consumers [{namespace!r}]", settings_of("service-a", set_path(
        "kv_cache_store_config.allowed_consumers", [namespace])), 1,
         f"kv_cache_store_config.allowed_consumers[0]: {namespace!r} has the wrong form; see the field's description "
         "in kvpool/settings/service.py")
case(DEPLOYS, "allowed_consumers [kube-flannel] (legal: not a namespace Kubernetes makes)", settings_of(
    "service-a", set_path("kv_cache_store_config.allowed_consumers", ["kube-flannel"])), 0)


def second_storage(mount_path: str) -> Callable[[dict[str, Any]], None]:
    def change(values: dict[str, Any]) -> None:
        entry = values["motor_deploy_config"]["storage"][0]
        values["motor_deploy_config"]["storage"].append({**entry, "mount_path": mount_path})
    return change


STORAGE = "motor_deploy_config.storage[1].mount_path"
for mount_path, problem in (
        ("/sys/x", "lies in /proc, /sys, /dev, the kernel's filesystems, which a volume would hide"),
        ("/dev", "lies in /proc, /sys, /dev, the kernel's filesystems, which a volume would hide"),
        ("/dev/shm", "is where engine pods already mount the shared-memory volume (dshm_size)"),
        ("/mnt/ucm2/../configmap", "is where engine pods already mount ConfigMap motor-config"),
        ("/mnt/configmap/", "is where engine pods already mount ConfigMap motor-config"),
        # Linux reads a leading // as /: these were compared as strings with /mnt/configmap and /proc, and accepted.
        ("//mnt/configmap", "is where engine pods already mount ConfigMap motor-config"),
        ("//mnt//configmap/x", "lies inside /mnt/configmap, where engine pods mount ConfigMap motor-config"),
        ("//proc/x", "lies in /proc, /sys, /dev, the kernel's filesystems, which a volume would hide"),
        ("/etc", "holds /etc/hccn.conf, where engine pods mount the host file /etc/hccn.conf: a volume here would "
                 "hide it"),
        ("/usr/local/Ascend/driver", "holds /usr/local/Ascend/driver/version.info, where engine pods mount the host "
                                     "file /usr/local/Ascend/driver/version.info: a volume here would hide it")):
    case(DEPLOYS, f"a second storage at {mount_path}", settings_of("ucm", second_storage(mount_path)), 1,
         f"{STORAGE}: {mount_path!r} {problem}; choose another path")
for mount_path in ("//mnt//ucm", "/mnt/./ucm", "/mnt/ucm/cold/.."):
    case(DEPLOYS, f"a second storage at {mount_path} (the first, as a path)",
         settings_of("ucm", second_storage(mount_path)), 1,
         "motor_deploy_config: storage entries share mount_path /mnt/ucm; give each its own")
case(DEPLOYS, "a second storage at ///", settings_of("ucm", second_storage("///")), 1,
     "motor_deploy_config: storage entries' mount_path lie one inside another (/mnt/ucm inside /); mount each at a "
     "path of its own")
case(DEPLOYS, "a second storage at /mnt/ucm-cold (legal)", settings_of("ucm", second_storage("/mnt/ucm-cold")), 0)


def program_settings(stack: str, change: Callable[[dict[str, Any]], Any]) -> Callable[[Path], Outcome]:
    """The settings as the program reads them under the preview (each key's JSON text, settings_from_config) from
    an example stack's values after `change`."""
    def run(_: Path) -> Outcome:
        values = stack_values(stack)
        change(values)
        texts = {f"motor-kvpool:{key}": json.dumps(value) for key, value in values.items()}
        try:
            settings_from_config(texts, set(), stack)
        except SettingsError as error:
            return 1, error.problems[0]
        return 0, ""
    return run


def engine_arg(side: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """`key` set to `value` in a side's engine_config, in the spelling written (the other spelling removed)."""
    def change(values: dict[str, Any]) -> None:
        engine_config = values[f"motor_engine_{side}_config"]["engine_config"]
        engine_config.pop(key.replace("-", "_"), None)
        engine_config[key] = value
    return change


OUT_OF_RANGE = "{shown} is out of range: vLLM 0.17.0's --{option} must be {bounds}; write a value in that range"
ENGINE_BOUNDS = (  # (side, key as written, value, the range the refusal gives; None: legal)
    ("prefill", "gpu_memory_utilization", -1, "above 0 and at most 1"),
    ("decode", "gpu_memory_utilization", 1.5, "above 0 and at most 1"),
    ("prefill", "gpu-memory-utilization", 0, "above 0 and at most 1"),
    ("prefill", "gpu_memory_utilization", 1, None),
    ("prefill", "max_model_len", 0, "-1 (auto) or 1 or more"),
    ("decode", "max-model-len", -2, "-1 (auto) or 1 or more"),
    ("prefill", "max-model-len", "-5", "-1 (auto) or 1 or more"),  # Motor writes str(value): vLLM parses -5
    ("prefill", "max_model_len", -1, None),
    ("prefill", "max-model-len", "auto", None),
    # The block-lifetime advisory used to advise a pool of negative size for the dashed spelling's -1.
    ("prefill", "max-num-batched-tokens", -1, "1 or more"),
    ("decode", "max_num_batched_tokens", 0, "1 or more"),
    ("prefill", "max_num_seqs", 0, "1 or more"),
    ("decode", "max-num-seqs", -3, "1 or more"),
    ("prefill", "tensor_parallel_size", 0, "1 or more"),
    ("decode", "tensor-parallel-size", -1, "1 or more"),
    ("prefill", "data_parallel_size", 0, "1 or more"),
    ("decode", "data-parallel-size", -2, "1 or more"),
    ("prefill", "pipeline_parallel_size", 0, "1 or more"),
    ("decode", "pipeline-parallel-size", -1, "1 or more"),
)
for side, key, value, bounds in ENGINE_BOUNDS:
    field = f"motor_engine_{side}_config.engine_config.{key}"
    refusal = OUT_OF_RANGE.format(shown=json.dumps(value), option=key.replace("_", "-"), bounds=bounds)
    case(DEPLOYS, f"{field} = {value!r}", program_settings("dev", engine_arg(side, key, value)),
         *((0,) if bounds is None else (1, f"{field}: {refusal}")))
for side, key, value in (("prefill", "block_size", 0), ("decode", "block-size", -16)):
    case(DEPLOYS, f"motor_engine_{side}_config.engine_config.{key} = {value}", program_settings(
        "dev", engine_arg(side, key, value)), 1, f"motor_engine_{side}_config.engine_config.{key}: {value} is not "
         "allowed; write one of 1, 8, 16, 32, 64, 128 or 256")
RATE = "kv_pool_sizing.prefill_tokens_per_second"
for value in (10**8 + 1, 2**63):
    case(DEPLOYS, f"{RATE} = {value}", program_settings("dev", set_path(RATE, value)), 1,
         f"{RATE}: {value} is above 100000000, the most this field takes; write 100000000 or less")
case(DEPLOYS, f"{RATE} = 10**8 (legal)", program_settings("dev", set_path(RATE, 10**8)), 0)


# --- §8 import: numbers beyond 64 bits, duplicate keys, depth, characters that hide text ---------------------------


def motor_files(user_text: Callable[[str], str] | None = None, env_text: Callable[[str], str] | None = None,
                change: Callable[[dict[str, Any]], None] | None = None) -> Callable[[Path], list[Any]]:
    def setup(folder: Path) -> list[Any]:
        user, env = as_motor_files(memcache_pool())
        if change is not None:
            change(user)
        texts = [json.dumps(user, indent=1, ensure_ascii=False), json.dumps(env, indent=1)]
        texts = [texts[0] if user_text is None else user_text(texts[0]), texts[1] if env_text is None else
                 env_text(texts[1])]
        (folder / "motor").mkdir()
        for name, text in zip(("user_config.json", "env.json"), texts, strict=True):
            (folder / "motor" / name).write_text(text)
        return ["import", "--user-config", folder / "motor" / "user_config.json", "--env-config",
                folder / "motor" / "env.json", "--stack", "x", "--stacks-dir", folder / "stacks"]
    return setup


def engine(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda user: user["motor_engine_prefill_config"]["engine_config"].update({field: value})


for value in (-2**63 - 1, -2**64, 2**63, 10**20):
    case(IMPORT, f"engine_config.seed {value}", cli(motor_files(change=engine("seed", value))), 1,
         f"error: motor_engine_prefill_config.engine_config.seed: {value} is beyond a 64-bit integer, which the Pulumi "
         f'CLI rounds; write it quoted ("{value}") if it is text')
case(IMPORT, "engine_config.seed -2**63 (the least int64)", cli(motor_files(change=engine("seed", -2**63))), 0)
for literal in ("NaN", "Infinity", "-Infinity"):
    case(IMPORT, f"user_config.json {literal}", cli(motor_files(
        user_text=lambda text, literal=literal: text.replace('"max-model-len": 2048', f'"max-model-len": {literal}'))),
         1, f"error: {{t}}/motor/user_config.json: not valid JSON: {literal} is not a JSON number")
for place, text_change in (
        ("a top-level key", lambda text: text.replace('{\n "motor_deploy_config"', '{\n "version": "x",\n '
                                                      '"motor_deploy_config"', 1)),
        ("a key in motor_deploy_config", lambda text: text.replace('"p_pod_npu_num": 2,', '"p_pod_npu_num": 2,\n  '
                                                                   '"p_pod_npu_num": 4,', 1))):
    case(IMPORT, f"user_config.json: {place} twice", cli(motor_files(user_text=text_change)), 1,
         re.compile(r"error: \{t\}/motor/user_config\.json:\d+: duplicate key '(version|p_pod_npu_num)' \(first at "
                    r"line \d+\).*"))
case(IMPORT, "env.json: a section twice", cli(motor_files(
    env_text=lambda text: text.replace('"version": "2.0.0"', '"motor_common_env": {"A": "1"},\n "motor_common_env": '
                                                             '{"B": "2"},\n "version": "2.0.0"'))), 1,
     re.compile(r"error: \{t\}/motor/env\.json:3: duplicate key 'motor_common_env' \(first at line 2\).*"))
case(IMPORT, "env.json: a variable twice", cli(motor_files(
    env_text=lambda text: text.replace('"version": "2.0.0"', '"motor_common_env": {"A": "1",\n "A": "2"},\n '
                                                             '"version": "2.0.0"'))), 1,
     re.compile(r"error: \{t\}/motor/env\.json:3: duplicate key 'A' \(first at line 2\).*"))


def nested(depth: int) -> Any:
    value: Any = True
    for _ in range(depth):
        value = {"a": value}
    return value


for depth in (62, 63, 64):
    case(IMPORT, f"tls_config {depth} levels deep", cli(motor_files(change=lambda user, depth=depth: user[
        "motor_deploy_config"].update(tls_config=nested(depth)))), 1,
         "error: {t}/motor/user_config.json: nested more than 64 levels deep" if depth >= 63 else
         f"error: motor_deploy_config.tls_config{'.a' * 61}: nested more than 62 levels deep, which the stack file "
         "(its top level and `config:` above it, 64 levels in all) cannot hold; flatten it")
NAME_FIELD = "  - motor_engine_prefill_config.engine_config.served_model_name"
for character in ("\u202d", "\u2067", "\u2069", "\u200e"):
    case(IMPORT, f"served_model_name with {character!a}", cli(motor_files(change=engine(
        "served_model_name", f"qwen{character}"))), 1,
         f"error: {{t}}/motor/user_config.json: 1 problem\n{NAME_FIELD}: holds the bidirectional control "
         f"{character!a} (at offset 4); names, paths, labels and values take none: remove it")
case(IMPORT, "served_model_name a lone surrogate escape", cli(motor_files(
    user_text=lambda text: text.replace('"served_model_name": "qwen3-8B"', '"served_model_name": "qwen\\udc00"', 1))),
     1, f"error: {{t}}/motor/user_config.json: 1 problem\n{NAME_FIELD}: holds the lone surrogate '\\udc00' (at "
        "offset 4); names, paths, labels and values take none: remove it")


# --- the tests ---------------------------------------------------------------------------------------------------


def _timeout(signum: int, frame: Any) -> None:
    raise TimeoutError(f"over {TIME_BOUND} s")


@pytest.fixture
def bounded() -> Any:
    """TIME_BOUND seconds (SIGALRM) and MEMORY_BOUND more address space (RLIMIT_AS) for one case."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    size = int(Path("/proc/self/status").read_text().split("VmSize:")[1].split()[0]) * 1024
    limit = size + MEMORY_BOUND if hard == resource.RLIM_INFINITY else min(size + MEMORY_BOUND, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(TIME_BOUND)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@pytest.mark.parametrize("entry", CORPUS, ids=[f"{entry.cls.split()[-1]} {entry.name}"[:120] for entry in CORPUS])
def test_case(entry: Case, tmp_path: Path, bounded: None) -> None:
    code, first = entry.run(tmp_path)
    first = first.replace(str(tmp_path), "{t}")
    expected_code, expected_first = entry.expected
    assert code != 2, first
    if isinstance(expected_first, re.Pattern):
        assert (code, bool(expected_first.fullmatch(first))) == (expected_code, True), first
    else:
        assert (code, first) == (expected_code, expected_first)
    if entry.check is not None:
        entry.check(tmp_path)


def test_counts(tmp_path: Path) -> None:
    counts = Counter(entry.cls for entry in CORPUS)
    names = [(entry.cls, entry.name) for entry in CORPUS]
    assert len(set(names)) == len(names), [name for name in names if names.count(name) > 1]
    report = {"total": len(CORPUS), **dict(sorted(counts.items(), key=lambda item: item[0][-3:]))}
    (tmp_path / "corpus-counts.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    assert len(CORPUS) >= 150
    assert set(counts) == {SHELL, LINKS, INTERNAL, MEMORY, PROJECT, SIBLINGS, DEPLOYS, IMPORT}
    assert min(counts.values()) >= 8, counts
    assert sum(code == 0 for entry in CORPUS for code in entry.expected[:1]) >= 20  # legal inputs, accepted
