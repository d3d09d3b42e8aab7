"""Host paths come from an allow-list: the node paths Motor's deployer mounts, and the folders a stack declares once.

A hostPath hands a pod part of the node. A deny-list of dangerous folders always misses one (/etc/cron.d,
/root/.kube, /usr/local/bin, /etc/systemd/system, /opt/cni/bin, /home/<user>/.ssh each take the node over), so
the rule is the other way round. A pod may mount:

- exactly the node paths Motor's deployer mounts (MOTOR_HOST_PATHS), writable only where something in the pod
  writes them;
- below Motor's log folder (/root/ascend/log), writable: where a role's logging_config.host_log_dir points by
  default;
- below the roots the stack declares in motor_deploy_config: weight_mount_path (read-only, the weights),
  host_path_roots.logs (writable, host_log_dir) and host_path_roots.storage (writable, storage[] hostPath).

A declared root must itself lie below a folder where a node keeps a service's data (DATA_PARENTS): declaring
/etc/cron.d is refused like mounting it. The settings run check_host_paths over the effective user_config.json; the
policy pack runs check_pod_host_paths over every rendered pod with the allow-list of the same user_config.json,
read back from ConfigMap motor-config (kvpool/policies/service_view.py). Paths are compared as written, in full: a path
that is not plain (`..`, `.`, `//`, a character outside DATA_PATH_CHARS) matches nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from .sections import Finding


@dataclass(frozen=True)
class HostRoot:
    """One entry of the allow-list: `path` itself (exact) or `path` and everything below it."""

    path: str
    writable: bool
    exact: bool
    source: str  # where the entry comes from, as a message names it


# The node paths Motor's deployer mounts (examples/deployer at 8919e55; reference/research/motor-deployer.md:95,314),
# path -> whether a pod may write it. motor-kvpool mounts each read-only unless something in the pod writes it
# (kvpool/internal/pod_layout.py). Not taken: deploy.py's whole /data, /mnt and /var/queue_schedule
# (engine_template.yaml:92-101,110-112), which no Motor script or process reads; storage[] names what a service needs.
MOTOR_HOST_PATHS: dict[str, bool] = {
    "/usr/local/Ascend/driver/version.info": False,  # yaml_template/engine_template.yaml:126-129 (type File)
    "/usr/local/Ascend/driver/tools/hccn_tool": False,  # engine_template.yaml:113-115
    "/etc/hccn.conf": False,  # engine_template.yaml:116-118; only queried (startup/hccl_tools.py:121)
    "/var/coredump": True,  # engine_template.yaml:106-109 (and every role's template): the kernel writes cores
    "/dev/infiniband": True,  # engine_template.yaml:130-132: RDMA verbs open the device nodes read-write
    "/dev/hisi_hdc": True,  # engine_template.yaml:133-135: the HDC driver's device node
    # A5 (hardware types 350/850/950): lib/constant.py:42-45 (A5_HOST_PATH_VOLUMES, lib/generator/engine.py:47-58)
    "/usr/lib64": False,  # the UB transport's libraries, only loaded
    "/etc/hixlep": True,  # DirectoryOrCreate in motor-kvpool: the UB transport's state
    # A5's route table and admin tool (reference/research/motor-deployer.md:95,314)
    "/lib/route.conf": True,
    "/usr/bin/urma_admin": False,
}
# Not Motor's: the openYuanrong worker's Unix sockets, shared with the engines of its node
# (kvpool/components/kv_store/yuanrong.py mounts it); a folder of motor-kvpool's own under /var/run, writable.
YUANRONG_SOCKET_HOST_DIR = "/var/run/motor-kvpool/datasystem"
MOTOR_HOST_PATHS[YUANRONG_SOCKET_HOST_DIR] = True
# Motor's LogConfig.host_log_dir default, and deploy.py's modify_log_mount's when a role's section has none
# (lib/utils.py:218-234; engine_template.yaml:122-125 plog-path, DirectoryOrCreate).
DEFAULT_HOST_LOG_DIR = "/root/ascend/log"
# deploy.py's weight-mount default (lib/constant.py:239; engine_template.yaml:119-121).
DEFAULT_WEIGHT_MOUNT_PATH = "/mnt/weight"
# Where a node keeps a service's data: the folders deploy.py hands its engines whole (/mnt and /data,
# engine_template.yaml:92-94,110-112), numbered data disks (/data01/models/ is Motor's own example of a weight path,
# config_tool/vllm_to_motor.py:197) and the FHS's /srv. A declared root lies strictly below one of them.
DATA_PARENTS = re.compile(r"/(?:mnt|data[0-9]*|srv)")
DATA_PARENTS_TEXT = "/mnt, /data (or /data01, /data02 ...) or /srv"
# One part of a plain path. No space, quote, glob or control character: a path is one word.
DATA_PATH_CHARS = "letters, digits, '.', '_', '-', '+' or '@'"
_PLAIN_PATH = re.compile(r"/|(?:/[A-Za-z0-9._+@-]+)+/?")

# Whose logging_config.host_log_dir deploy.py's modify_log_mount mounts in which pods: engines take the node manager's.
LOG_SECTION_BY_ROLE = {
    "controller": "motor_controller_config",
    "coordinator": "motor_coordinator_config",
    "engine": "motor_nodemanger_config",
}
ROOT_KINDS = ("logs", "storage")
_CREATES = ("DirectoryOrCreate", "FileOrCreate")  # hostPath types that write to the node
ROOTS_KEY = "motor_deploy_config.host_path_roots"


def normal_host_path(path: Any) -> str | None:
    """The path without a trailing slash when it is plain: absolute, parts of DATA_PATH_CHARS, no `.` or `..` part,
    no `//`. None otherwise: such a path matches no entry of the allow-list."""
    if not isinstance(path, str) or not _PLAIN_PATH.fullmatch(path):
        return None
    parts = [part for part in path.split("/") if part]  # only the leading and one trailing slash are empty
    if any(part in (".", "..") for part in parts):
        return None
    return "/" + "/".join(parts)


def _within(path: str, root: HostRoot) -> bool:
    return path == root.path or (not root.exact and path.startswith(root.path + "/"))


def host_path_backsteps(path: str) -> str | None:
    """Kubernetes refuses a hostPath with a `..` element (core validation, validatePathNoBacksteps)."""
    if ".." in path.split("/"):
        return f"{path!r} contains '..'; Kubernetes refuses it in a hostPath: write the path without it"
    return None


def _not_plain(path: Any) -> str:
    return (f"{path!r} is not a plain absolute path: write /folder/... with {DATA_PATH_CHARS} in each part, "
            "no '.' or '..' part and no '//'.")


def declared_root_problem(path: Any) -> str | None:
    """Why `path` may not be declared as a root (weight_mount_path, host_path_roots.*), or None."""
    normal = normal_host_path(path)
    if normal is None:
        return _not_plain(path)
    parent = "/" + normal.split("/")[1]
    if not DATA_PARENTS.fullmatch(parent) or normal == parent:
        return (f"{path!r} is no folder below {DATA_PARENTS_TEXT}, where a node keeps a service's data; keep the "
                f"data in a folder of its own there (e.g. /mnt/<service>).")
    return None


def host_log_dir(user_config: Mapping[str, Any], role: str) -> Any:
    """The node folder a role's pods log to: its section's logging_config.host_log_dir, else (absent or null, as
    deploy.py's get_json_by_path reads it) the default."""
    logging = (user_config.get(LOG_SECTION_BY_ROLE[role]) or {}).get("logging_config")
    folder = logging.get("host_log_dir") if isinstance(logging, Mapping) else None
    return DEFAULT_HOST_LOG_DIR if folder is None else folder


def _declared(user_config: Mapping[str, Any], kind: str) -> list[Any]:
    deploy = user_config.get("motor_deploy_config") or {}
    roots = deploy.get("host_path_roots") if isinstance(deploy, Mapping) else None
    declared = roots.get(kind) if isinstance(roots, Mapping) else None
    return list(declared) if isinstance(declared, list) else []


def _weight_mount_path(user_config: Mapping[str, Any]) -> Any:
    deploy = user_config.get("motor_deploy_config") or {}
    return deploy.get("weight_mount_path", DEFAULT_WEIGHT_MOUNT_PATH) if isinstance(deploy, Mapping) else None


def _overlap(path: str, other: str) -> bool:
    """One of two normal paths is the other or lies below it."""
    return path == other or path.startswith(other.rstrip("/") + "/") or other.startswith(path.rstrip("/") + "/")


def _writable_root_problem(path: Any, user_config: Mapping[str, Any]) -> str | None:
    """Why `path` may not be declared as a writable root (host_path_roots.*), or None."""
    if problem := declared_root_problem(path):
        return problem
    weights = _weight_mount_path(user_config)
    if declared_root_problem(weights) is None and _overlap(normal_host_path(path), normal_host_path(weights)):
        return (f"{path!r} overlaps weight_mount_path {weights!r}, which pods mount read-only: a writable root there "
                "lets a pod rewrite the model; declare a folder beside the weights.")
    return None


def _roots(paths: Iterable[Any], writable: bool, source: str, user_config: Mapping[str, Any]) -> list[HostRoot]:
    """The declarable ones of `paths` as roots: a declaration refused is no root (the settings name it)."""
    refused = _writable_root_problem if writable else (lambda path, _: declared_root_problem(path))
    return [HostRoot(normal_host_path(path), writable, False, source)  # type: ignore[arg-type]
            for path in paths if refused(path, user_config) is None]


def log_roots(user_config: Mapping[str, Any]) -> list[HostRoot]:
    """Where a role's host_log_dir may point: Motor's log folder and the declared log roots."""
    return [HostRoot(DEFAULT_HOST_LOG_DIR, True, False, "Motor's log folder"),
            *_roots(_declared(user_config, "logs"), True, f"{ROOTS_KEY}.logs", user_config)]


def allowed_host_paths(user_config: Mapping[str, Any]) -> list[HostRoot]:
    """The allow-list of one service: Motor's node paths, its log folders, its weights (read-only) and its storage."""
    return [
        *(HostRoot(path, writable, True, "a node path Motor's deployer mounts")
          for path, writable in MOTOR_HOST_PATHS.items()),
        *log_roots(user_config),
        *_roots([_weight_mount_path(user_config)], False, "motor_deploy_config.weight_mount_path", user_config),
        *_roots(_declared(user_config, "storage"), True, f"{ROOTS_KEY}.storage", user_config),
    ]


def host_path_problem(path: Any, writable: bool, allowed: Iterable[HostRoot]) -> str | None:
    """Why a pod may not mount `path` (`writable`: mounted without readOnly, or created on the node), or None."""
    normal = normal_host_path(path)
    if normal is None:
        return _not_plain(path)
    matches = [root for root in allowed if _within(normal, root)]
    if any(root.writable or not writable for root in matches):
        return None
    if matches:
        what = f"is {matches[0].source}" if matches[0].exact else f"lies in {matches[0].source}"
        return (f"{path!r} {what}, which pods mount read-only; mount it with readOnly: true and a hostPath type "
                f"that does not create it (not {' or '.join(_CREATES)}).")
    return (f"{path!r} is neither a node path Motor's deployer mounts nor below a root the stack declares "
            f"(motor_deploy_config.weight_mount_path, {ROOTS_KEY}.logs or {ROOTS_KEY}.storage); mount a folder below "
            f"a declared root.")


def _undeclared(path: Any, kind: str, alternative: str = "") -> str:
    """A path a setting names outside the roots of `kind`: what to declare, or where to move it first."""
    key = f"{ROOTS_KEY}.{kind}"
    if declared_root_problem(path) is None:
        return (f"{path!r} lies below no folder declared in {key}; declare its folder there once "
                f"(e.g. {key}: [{path}]){alternative}.")
    return (f"{path!r} lies outside every folder a pod may mount from the node; keep it in a folder below "
            f"{DATA_PARENTS_TEXT} and declare that folder once in {key}{alternative}.")


def check_host_paths(user_config: Mapping[str, Any]) -> list[Finding]:
    """Every host path the settings name against the allow-list, each finding naming the field: the declared roots
    themselves, weight_mount_path, each hostpath storage[] entry and each role's logging_config.host_log_dir."""
    findings = []
    for kind in ROOT_KINDS:
        for index, path in enumerate(_declared(user_config, kind)):
            if problem := _writable_root_problem(path, user_config):
                findings.append(Finding(f"{ROOTS_KEY}.{kind}[{index}]", problem))
    if problem := declared_root_problem(_weight_mount_path(user_config)):
        findings.append(Finding("motor_deploy_config.weight_mount_path", problem))
    storage_roots = _roots(_declared(user_config, "storage"), True, "", user_config)
    deploy = user_config.get("motor_deploy_config") or {}
    for index, entry in enumerate((deploy.get("storage") if isinstance(deploy, Mapping) else None) or []):
        if isinstance(entry, Mapping) and entry.get("type") == "hostpath":
            path, where = entry.get("path"), f"motor_deploy_config.storage[{index}].path"
            normal = normal_host_path(path)
            if normal is None:
                findings.append(Finding(where, _not_plain(path)))
            elif not any(_within(normal, root) for root in storage_roots):
                findings.append(Finding(where, _undeclared(path, "storage")))
    for role, section in LOG_SECTION_BY_ROLE.items():
        path, where = host_log_dir(user_config, role), f"{section}.logging_config.host_log_dir"
        normal = normal_host_path(path)
        if not isinstance(path, str) or not path.startswith("/"):
            findings.append(Finding(where, f"is {path!r}; give the absolute path of a folder on the node, as deploy.py "
                                           f"mounts it (default {DEFAULT_HOST_LOG_DIR})."))
        elif backsteps := host_path_backsteps(path):
            findings.append(Finding(where, backsteps))
        elif normal is None:
            findings.append(Finding(where, _not_plain(path)))
        elif not any(_within(normal, root) for root in log_roots(user_config)):
            findings.append(Finding(where, _undeclared(
                path, "logs", f", or leave host_log_dir out to log below Motor's {DEFAULT_HOST_LOG_DIR}")))
    return findings


def check_pod_host_paths(pod_spec: Mapping[str, Any], allowed: Iterable[HostRoot], where: str = "") -> list[Finding]:
    """Every hostPath volume of a pod against the allow-list. Writable: a container (init containers included)
    mounts it without readOnly: true, or its type creates it on the node."""
    allowed = list(allowed)
    mounts: dict[Any, list[bool]] = {}
    for kind in ("initContainers", "containers", "ephemeralContainers"):
        for container in pod_spec.get(kind) or []:
            for mount in (container.get("volumeMounts") or []) if isinstance(container, Mapping) else []:
                if isinstance(mount, Mapping):
                    mounts.setdefault(mount.get("name"), []).append(mount.get("readOnly") is True)
    findings = []
    for volume in pod_spec.get("volumes") or []:
        source = volume.get("hostPath") if isinstance(volume, Mapping) else None
        if not isinstance(source, Mapping):
            continue
        name = volume.get("name", "?")
        writable = source.get("type") in _CREATES or not all(mounts.get(name, [True]))
        if problem := host_path_problem(source.get("path"), writable, allowed):
            findings.append(Finding(f"{where}volumes[{name}].hostPath.path", problem))
    return findings
