"""Workload safety: no plain-text secrets, no env names that change a shell or the loader, no system namespaces, no
privileged pods (host paths: host_paths.py)."""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping, Sequence

from .sections import Finding

# Words that make a name secret-looking (split at `_`, `-`, `.` and camelCase): DB_PASS, hf_token, tlsPassword.
SECRET_WORDS = frozenset({
    "PASSWORD", "PASSWD", "PASS", "PWD", "PASSPHRASE", "SECRET", "TOKEN", "CREDENTIAL", "CREDENTIALS", "APIKEY",
    "PRIVATEKEY", "SECRETKEY", "ACCESSKEY",
})
# A last word that says the value is not the secret itself: where it is (passwd_file, TOKEN_PATH) or a measure
# or switch about it (first_token_timeout, max_token_len, enable_api_key_enabled).
NOT_SECRET_LAST_WORDS = frozenset({
    "FILE", "FILES", "PATH", "DIR", "ENV", "TIMEOUT", "LEN", "LENGTH", "NUM", "COUNT", "SIZE", "LIMIT", "ENABLE",
    "ENABLED", "TTL", "ID", "IDS", "TYPE", "MODE", "PREFIX", "HEADER",
})
# Spellings without a separator that still say secret (MYPASSWORD, DBSECRET).
_SECRET_SUBSTRINGS = ("PASSWORD", "PASSWD", "SECRET", "CREDENTIAL", "API_KEY", "ACCESS_KEY", "PRIVATE_KEY")
_NAME_WORDS = re.compile(r"[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])")


def _name_words(name: str) -> list[str]:
    return [word.upper() for word in _NAME_WORDS.split(name) if word]


def looks_secret(name: str, env: bool = True) -> bool:
    """Whether a name says its value is a secret. `env`: an environment variable, where a last word KEY means a
    key too (OPENAI_KEY); in a configuration section a bare `key` is too often something else (label_key)."""
    words = _name_words(name)
    if not words or words[-1] in NOT_SECRET_LAST_WORDS:
        return False
    upper = "_".join(words)
    return (
        any(hint in upper for hint in _SECRET_SUBSTRINGS)
        or any(word in SECRET_WORDS for word in words)
        or (env and words[-1] in ("KEY", "KEYS"))
    )


def _secret_finding(path: str, name: str) -> Finding:
    env_name = "_".join(_name_words(name)) or "NAME"
    return Finding(path, "looks like a secret but is plain text; keep it as a Pulumi secret delivered through a "
                         f"Kubernetes Secret: `pulumi config set --secret --path secret_env.{env_name} VALUE`.")


def check_plaintext_secrets(values: Mapping[str, Any], where: str) -> list[Finding]:
    """Secret-looking names with plain values (ConfigMap data, container env): they belong in Pulumi secrets,
    delivered as Kubernetes Secrets."""
    return [
        _secret_finding(f"{where}.{name}", name)
        for name, value in values.items()
        if isinstance(value, str) and value and looks_secret(name)
    ]


def check_plaintext_config_secrets(config: Any, where: str = "") -> list[Finding]:
    """Secret-looking keys with plain text values anywhere in a configuration tree (the pass-through sections of
    user_config.json, such as engine_config.hf_token or tls_config.password, land in ConfigMap motor-config)."""
    findings: list[Finding] = []
    if isinstance(config, Mapping):
        for key, value in config.items():
            path = f"{where}.{key}" if where else str(key)
            if isinstance(value, str) and value and looks_secret(str(key), env=False):
                findings.append(_secret_finding(path, str(key)))
            else:
                findings += check_plaintext_config_secrets(value, path)
    elif isinstance(config, list):
        for index, item in enumerate(config):
            findings += check_plaintext_config_secrets(item, f"{where}[{index}]")
    return findings


def conf_entries(text: str) -> list[tuple[int, str, str | None]]:
    """The `key = value` lines of a conf file (MemCache's LocalService conf) as (line number, key, value); value None
    on a line without `=`. Blank lines and `#` comments are skipped."""
    entries = []
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            key, separator, value = stripped.partition("=")
            entries.append((number, key.strip(), value.strip() if separator else None))
    return entries


def check_plaintext_conf_secrets(text: str, where: str) -> list[Finding]:
    """Secret-looking keys with a value in a conf file the stack passes through (it lands in a ConfigMap)."""
    return [
        _secret_finding(f"{where}.{key}", key)
        for _, key, value in conf_entries(text)
        if value and looks_secret(key, env=False)
    ]


# Namespaces Kubernetes itself owns: a service deployed there mixes with the cluster's own components.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")
# Capabilities that amount to root on the node (Kubernetes' baseline Pod Security Standard forbids adding them).
PRIVILEGED_CAPABILITIES = frozenset({"ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "SYS_PTRACE", "NET_ADMIN", "BPF",
                                     "SYS_BOOT", "DAC_READ_SEARCH", "PERFMON"})
READ_VERBS = frozenset({"get", "list", "watch"})


def check_system_namespace(namespace: Any, where: str) -> list[Finding]:
    """A service never lives in a namespace Kubernetes owns."""
    if namespace not in SYSTEM_NAMESPACES:
        return []
    return [Finding(where, f"is {namespace!r}, a namespace Kubernetes itself uses; give the service a namespace of "
                           f"its own (job_id defaults to the stack name).")]


def is_read_only_configmap_role(role_rules: Sequence[Mapping[str, Any]]) -> bool:
    """A Role that only reads ConfigMaps: what Motor's controller holds in kube-system to read MindX DL's device
    reports (kvpool/internal/rbac.py); the one thing motor-kvpool puts in a system namespace."""
    return bool(role_rules) and all(
        list(rule.get("apiGroups") or []) == [""]
        and list(rule.get("resources") or []) == ["configmaps"]
        and set(rule.get("verbs") or []) <= READ_VERBS
        for rule in role_rules
    )


def check_privileged_container(container: Mapping[str, Any], where: str) -> list[Finding]:
    """No privileged container, no added capability that amounts to root on the node, no privilege escalation."""
    context = container.get("securityContext") or {}
    findings = []
    if context.get("privileged"):
        findings.append(Finding(f"{where}.securityContext.privileged",
                                "is true: the container gets every device and capability of the node; remove it."))
    added = sorted(set((context.get("capabilities") or {}).get("add") or []) & PRIVILEGED_CAPABILITIES)
    if added:
        findings.append(Finding(f"{where}.securityContext.capabilities.add",
                                f"adds {', '.join(added)}, which amount to root on the node; remove them."))
    if context.get("allowPrivilegeEscalation") is True:
        findings.append(Finding(f"{where}.securityContext.allowPrivilegeEscalation",
                                "is true: a setuid binary can regain the capabilities the container dropped; set false."))
    return findings


def check_privileged_pod(pod_spec: Mapping[str, Any], where: str) -> list[Finding]:
    """A pod spec: its host namespaces (PID, IPC) and every container (init containers included)."""
    findings = [
        Finding(f"{where}.{field}", f"is true: the pod sees the node's {what}; remove it.")
        for field, what in (("hostPID", "processes"), ("hostIPC", "shared memory and semaphores"))
        if pod_spec.get(field)
    ]
    for kind in ("initContainers", "containers"):
        for container in pod_spec.get(kind) or []:
            if isinstance(container, Mapping):
                findings += check_privileged_container(container, f"{where}.{kind}[{container.get('name', '?')}]")
    return findings


# Variables that change what bash runs or how it reads a script when it inherits them, and so make an inert value
# run: every Motor container starts with `bash -c` (its probes and preStop too). From the Bash Reference Manual
# (GNU bash 5.2): "Bourne Shell Variables" (PATH decides which program every command of Motor's scripts runs, and
# where `source NAME` looks; CDPATH changes cd; IFS splits every unquoted expansion; PS1 and PS2 prompts. Left
# alone: HOME, which bash reads only for `~` and a bare `cd`, neither in Motor's scripts; MAIL, MAILPATH (and
# MAILCHECK), read only by an interactive shell; OPTIND, which bash resets to 1 at start; OPTARG, set by getopts
# before it is read), "Bash Startup Files" (BASH_ENV read by every non-interactive shell, ENV in POSIX mode),
# "Bash Variables" (SHELLOPTS and BASHOPTS set options at start, xtrace among them, whose PS4 is expanded, so a
# `$(...)` in it runs; PROMPT_COMMAND and PS0-PS3; GLOBIGNORE, EXECIGNORE and FIGNORE change globs and command
# lookup; BASH_XTRACEFD, BASH_COMPAT, BASH_LOADABLES_PATH, FUNCNEST, TMOUT change tracing, compatibility, loadable
# builtins, function depth and reads; POSIXLY_CORRECT turns on POSIX mode), and "Shell Functions" (an exported
# function travels as BASH_FUNC_<name>%%).
SHELL_ENV_NAMES = frozenset({
    "PATH", "BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND", "IFS",
    "CDPATH", "GLOBIGNORE", "EXECIGNORE", "FIGNORE", "BASH_XTRACEFD", "BASH_COMPAT", "BASH_LOADABLES_PATH",
    "FUNCNEST", "TMOUT", "POSIXLY_CORRECT",
})
# The dynamic loader reads every LD_* variable of ld.so(8) ("Environment": LD_PRELOAD, LD_LIBRARY_PATH, LD_AUDIT,
# LD_DEBUG_OUTPUT, ...) and GLIBC_TUNABLES (tunables(7)) in every process the container starts.
SHELL_ENV_PREFIXES = ("BASH_FUNC_", "LD_")
LOADER_ENV_NAMES = frozenset({"GLIBC_TUNABLES"})
# glibc's list of variables it drops for setuid programs (UNSECURE_ENVVARS, sysdeps/generic/unsecvars.h), the ones
# that make the C library load, read or write a file the value names: GCONV_PATH (iconv loads gconv modules, code,
# from it), GETCONF_DIR (getconf runs a program from it), LOCPATH (locale files), NLSPATH (message catalogs, whose
# strings are printf formats), HOSTALIASES and RESOLV_HOST_CONF (the resolver's alias and host.conf files), TZDIR
# (time zone files), MALLOC_TRACE (mtrace(3) writes its log there). Left alone from that list: LOCALDOMAIN and
# RES_OPTIONS (resolver options, no file), TMPDIR (where temporary files are made), NIS_PATH (NIS+ lookups only);
# its LD_* entries and GLIBC_TUNABLES are the loader's above.
LIBC_ENV_NAMES = frozenset({"GCONV_PATH", "GETCONF_DIR", "LOCPATH", "NLSPATH", "HOSTALIASES", "RESOLV_HOST_CONF",
                            "TZDIR", "MALLOC_TRACE"})


def changes_the_shell(name: str) -> bool:
    return (name in SHELL_ENV_NAMES or name in LOADER_ENV_NAMES or name in LIBC_ENV_NAMES
            or name.startswith(SHELL_ENV_PREFIXES))


def check_shell_env_names(names_by_place: Mapping[str, Iterable[str]]) -> list[Finding]:
    """No environment variable named so that bash, the dynamic loader or the C library acts on it: its value would
    run (BASH_ENV's file, PS4's `$(...)`, a program PATH finds first) or load code (LD_PRELOAD, GCONV_PATH), however
    it is quoted. `names_by_place`: where the names are written (env.motor_common_env, secret_env) -> the names."""
    return [
        Finding(f"{place}.{name}", _LOADER_MESSAGE if name in LOADER_ENV_NAMES or name.startswith("LD_")
                else _LIBC_MESSAGE if name in LIBC_ENV_NAMES else _SHELL_MESSAGE)
        for place, names in names_by_place.items()
        for name in names
        if changes_the_shell(name)
    ]


_SHELL_MESSAGE = ("is read by bash itself, and every Motor container, probe and preStop starts with bash -c: its value "
                  "would run or change what runs, however it is quoted; remove it.")
_LOADER_MESSAGE = ("is read by the dynamic loader in every process of a Motor container: its value would load or change "
                   "code there; remove it, and set what it is for in the image (its Dockerfile's ENV), where it is "
                   "reviewed with the image.")
_LIBC_MESSAGE = ("is read by the C library in a Motor container's processes: it names files they would load, run or "
                 "read (gconv modules, getconf's programs, locales, message catalogs, resolver files), so its value "
                 "would load or change code there; remove it, and set what it is for in the image (its Dockerfile's "
                 "ENV), where it is reviewed with the image.")
