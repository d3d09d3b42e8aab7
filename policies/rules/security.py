"""Workload safety: no plain-text secrets, no sensitive host paths, no system namespaces, no privileged pods."""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

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


# Host folders that hold the node itself: mounting one (or a parent of one) hands the pod the node.
SYSTEM_HOST_ROOTS = frozenset({
    "/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib32", "/lib64", "/opt", "/proc", "/root", "/run",
    "/sbin", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/lib", "/usr/local", "/usr/sbin", "/var", "/var/lib",
    "/var/log", "/var/run",
})
# Host paths whose content, or anything below them, controls the node or holds its credentials. A hostPath that
# is one of these, lies below one, or contains one is refused.
SENSITIVE_HOST_PATHS = (
    "/proc", "/sys", "/boot", "/root/.ssh", "/etc/shadow", "/etc/gshadow", "/etc/passwd", "/etc/sudoers",
    "/etc/sudoers.d", "/etc/ssh", "/etc/kubernetes", "/etc/pki", "/etc/ssl/private", "/dev/mem", "/dev/kmem",
    "/dev/port", "/var/run/docker.sock", "/run/docker.sock", "/var/run/containerd", "/run/containerd",
    "/var/run/crio", "/run/crio", "/var/run/secrets", "/run/secrets", "/var/lib/kubelet", "/var/lib/docker",
    "/var/lib/containerd", "/var/lib/etcd", "/var/log/pods",
)
# Namespaces Kubernetes itself owns: a service deployed there mixes with the cluster's own components.
SYSTEM_NAMESPACES = ("kube-system", "kube-public", "kube-node-lease", "default")
# Capabilities that amount to root on the node (Kubernetes' baseline Pod Security Standard forbids adding them).
PRIVILEGED_CAPABILITIES = frozenset({"ALL", "SYS_ADMIN", "SYS_MODULE", "SYS_RAWIO", "SYS_PTRACE", "NET_ADMIN", "BPF",
                                     "SYS_BOOT", "DAC_READ_SEARCH", "PERFMON"})
READ_VERBS = frozenset({"get", "list", "watch"})


def _normal_host_path(path: str) -> str:
    """`/etc/`, `//etc` and `/x/../etc` are /etc (the kubelet follows `..`; section 2 refuses it separately)."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            parts = parts[:-1]
        else:
            parts.append(part)
    return "/" + "/".join(parts)


def host_path_problem(path: str) -> str | None:
    """Why a host path may not be mounted, or None when it may."""
    if not isinstance(path, str) or not path.startswith("/"):
        return None  # not a host path (the schema names the field)
    normal = _normal_host_path(path)
    if normal in SYSTEM_HOST_ROOTS:
        return f"is the host's {'root' if normal == '/' else normal} folder, which holds the node itself"
    for sensitive in SENSITIVE_HOST_PATHS:
        if normal == sensitive or normal.startswith(sensitive + "/"):
            return f"lies in the host's {sensitive}, which controls the node or holds its credentials"
        if sensitive.startswith(normal + "/"):
            return f"contains the host's {sensitive}, which controls the node or holds its credentials"
    return None


def check_host_path(path: str, where: str) -> list[Finding]:
    """A hostPath may not be the host's root, a system folder, or a path that holds the node's control or
    credentials (the container runtime's socket, the kubelet's folder, /proc, /etc/shadow ...)."""
    problem = host_path_problem(path)
    if problem is None:
        return []
    return [Finding(where, f"{path!r} {problem}; mount a folder of its own (e.g. /mnt/<service>) instead.")]


def check_deploy_host_paths(deploy: Mapping[str, Any]) -> list[Finding]:
    """The host paths a service's settings name: the weights and hostpath storage entries."""
    findings = check_host_path(deploy.get("weight_mount_path", "/mnt/weight"), "motor_deploy_config.weight_mount_path")
    for index, entry in enumerate(deploy.get("storage") or []):
        if isinstance(entry, Mapping) and entry.get("type") == "hostpath":
            findings += check_host_path(entry.get("path"), f"motor_deploy_config.storage[{index}].path")
    return findings


# Motor's LogConfig.host_log_dir default, and deploy.py's modify_log_mount's when a role's section has none.
DEFAULT_HOST_LOG_DIR = "/root/ascend/log"
# Whose logging_config.host_log_dir deploy.py's modify_log_mount mounts in which pods: engines take the node manager's.
LOG_SECTION_BY_ROLE = {
    "controller": "motor_controller_config",
    "coordinator": "motor_coordinator_config",
    "engine": "motor_nodemanger_config",
}


def host_log_dir(user_config: Mapping[str, Any], role: str) -> Any:
    """The node folder a role's pods log to: its section's logging_config.host_log_dir, else (absent or null, as
    deploy.py's get_json_by_path reads it) the default."""
    logging = (user_config.get(LOG_SECTION_BY_ROLE[role]) or {}).get("logging_config")
    folder = logging.get("host_log_dir") if isinstance(logging, Mapping) else None
    return DEFAULT_HOST_LOG_DIR if folder is None else folder


def host_path_backsteps(path: str) -> str | None:
    """Kubernetes refuses a hostPath with a `..` element (core validation, validatePathNoBacksteps)."""
    if ".." in path.split("/"):
        return f"{path!r} contains '..'; Kubernetes refuses it in a hostPath: write the path without it"
    return None


def check_host_log_dirs(user_config: Mapping[str, Any]) -> list[Finding]:
    """Each role's host_log_dir is mounted from the node (deploy.py's modify_log_mount): an absolute folder path
    that Kubernetes accepts and that is no system or sensitive folder."""
    findings: list[Finding] = []
    for role, section in LOG_SECTION_BY_ROLE.items():
        path, where = host_log_dir(user_config, role), f"{section}.logging_config.host_log_dir"
        if not isinstance(path, str) or not path.startswith("/"):
            findings.append(Finding(where, f"is {path!r}; give the absolute path of a folder on the node, as deploy.py "
                                           f"mounts it (default {DEFAULT_HOST_LOG_DIR})."))
        elif backsteps := host_path_backsteps(path):
            findings.append(Finding(where, backsteps))
        else:
            findings += check_host_path(path, where)
    return findings


def check_system_namespace(namespace: Any, where: str) -> list[Finding]:
    """A service never lives in a namespace Kubernetes owns."""
    if namespace not in SYSTEM_NAMESPACES:
        return []
    return [Finding(where, f"is {namespace!r}, a namespace Kubernetes itself uses; give the service a namespace of "
                           f"its own (job_id defaults to the stack name).")]


def is_read_only_configmap_role(role_rules: Sequence[Mapping[str, Any]]) -> bool:
    """A Role that only reads ConfigMaps: what Motor's controller holds in kube-system to read MindX DL's device
    reports (components/rbac.py); the one thing motor-kvpool puts in a system namespace."""
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
