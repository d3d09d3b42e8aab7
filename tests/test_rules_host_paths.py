"""Host paths come from an allow-list (issue 33 class 2): Motor's node paths, Motor's log folder and the roots a
stack declares once; every other host path is refused, naming the field and what to declare."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from kvpool.policies import rules

ROOTS = "motor_deploy_config.host_path_roots"
OUTSIDE = "is neither a node path Motor's deployer mounts nor below a root the stack declares " \
          f"(motor_deploy_config.weight_mount_path, {ROOTS}.logs or {ROOTS}.storage); mount a folder below a declared root."
# The examples, and other folders that take a node over.
NODE_TAKEOVERS = [
    "/etc/cron.d", "/root/.kube", "/usr/local/bin", "/etc/systemd/system", "/var/lib/rancher", "/opt/cni/bin",
    "/home/alice/.ssh", "/", "/etc", "/root", "/var/run/docker.sock", "/run/containerd", "/var/lib/kubelet",
    "/proc/1/root", "/sys", "/dev", "/boot", "/var/log/pods", "/mnt", "/data", "/srv", "/usr/lib", "/opt",
    "/var/lib/containerd", "/etc/kubernetes/pki", "/home", "/tmp", "/var/tmp", "/lib/modules",
]


def service(storage: list[str] = (), logs: list[str] = (), weights: str | None = None, **log_dirs: str) -> dict:
    deploy: dict = {"host_path_roots": {"storage": list(storage), "logs": list(logs)}}
    if weights is not None:
        deploy["weight_mount_path"] = weights
    config: dict = {"motor_deploy_config": deploy}
    for section, folder in log_dirs.items():
        config[section] = {"logging_config": {"host_log_dir": folder}}
    return config


def messages(user_config: dict) -> list[str]:
    return [str(finding) for finding in rules.check_host_paths(user_config)]


@pytest.mark.parametrize("path", NODE_TAKEOVERS)
def test_a_node_folder_is_refused_writable_and_read_only(path):
    allowed = rules.allowed_host_paths(service(storage=["/data/ucm"], logs=["/mnt/logs"]))
    assert rules.host_path_problem(path, True, allowed) == f"{path!r} {OUTSIDE}"
    assert rules.host_path_problem(path, False, allowed) == f"{path!r} {OUTSIDE}"


@pytest.mark.parametrize("path", NODE_TAKEOVERS)
def test_a_storage_hostpath_on_a_node_folder_is_refused_naming_the_field(path):
    config = service()
    config["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": path, "mount_path": "/mnt/ucm"}]
    assert messages(config) == [
        f"motor_deploy_config.storage[0].path: {path!r} lies outside every folder a pod may mount from the node; keep "
        f"it in a folder below /mnt, /data (or /data01, /data02 ...) or /srv and declare that folder once in "
        f"{ROOTS}.storage."
    ]


@pytest.mark.parametrize("section", list(rules.LOG_SECTION_BY_ROLE.values()))
@pytest.mark.parametrize("path", ["/etc/cron.d", "/root/.kube", "/usr/local/bin", "/etc/systemd/system",
                                  "/var/lib/rancher", "/opt/cni/bin", "/home/alice/.ssh"])
def test_each_roles_host_log_dir_on_a_node_folder_is_refused_naming_the_field(section, path):
    assert messages(service(**{section: path})) == [
        f"{section}.logging_config.host_log_dir: {path!r} lies outside every folder a pod may mount from the node; "
        f"keep it in a folder below /mnt, /data (or /data01, /data02 ...) or /srv and declare that folder once in "
        f"{ROOTS}.logs, or leave host_log_dir out to log below Motor's /root/ascend/log."
    ]


def test_an_undeclared_data_folder_says_what_to_declare():
    config = service(motor_coordinator_config="/data/logs/coordinator")
    config["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": "/data/ucm", "mount_path": "/mnt/ucm"}]
    assert messages(config) == [
        f"motor_deploy_config.storage[0].path: '/data/ucm' lies below no folder declared in {ROOTS}.storage; declare "
        f"its folder there once (e.g. {ROOTS}.storage: [/data/ucm]).",
        f"motor_coordinator_config.logging_config.host_log_dir: '/data/logs/coordinator' lies below no folder declared "
        f"in {ROOTS}.logs; declare its folder there once (e.g. {ROOTS}.logs: [/data/logs/coordinator]), or leave "
        "host_log_dir out to log below Motor's /root/ascend/log.",
    ]


def test_declared_folders_and_motors_log_folder_pass():
    config = service(storage=["/data/ucm/"], logs=["/mnt/logs"], weights="/data01/models/",
                     motor_controller_config="/mnt/logs/controller", motor_nodemanger_config="/root/ascend/log/engines")
    config["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": "/data/ucm/cache", "mount_path": "/mnt/u"}]
    assert messages(config) == []
    assert messages({}) == []  # Motor's defaults: /mnt/weight and /root/ascend/log


def test_a_declared_root_must_lie_below_a_data_folder():
    config = service(storage=["/etc/cron.d", "/mnt"], logs=["/var/log"], weights="/etc/")
    assert messages(config) == [
        f"{ROOTS}.logs[0]: '/var/log' is no folder below /mnt, /data (or /data01, /data02 ...) or /srv, where a node "
        "keeps a service's data; keep the data in a folder of its own there (e.g. /mnt/<service>).",
        f"{ROOTS}.storage[0]: '/etc/cron.d' is no folder below /mnt, /data (or /data01, /data02 ...) or /srv, where a "
        "node keeps a service's data; keep the data in a folder of its own there (e.g. /mnt/<service>).",
        f"{ROOTS}.storage[1]: '/mnt' is no folder below /mnt, /data (or /data01, /data02 ...) or /srv, where a node "
        "keeps a service's data; keep the data in a folder of its own there (e.g. /mnt/<service>).",
        "motor_deploy_config.weight_mount_path: '/etc/' is no folder below /mnt, /data (or /data01, /data02 ...) or "
        "/srv, where a node keeps a service's data; keep the data in a folder of its own there (e.g. /mnt/<service>).",
    ]
    # A refused declaration allows nothing.
    assert rules.host_path_problem("/etc/cron.d", True, rules.allowed_host_paths(config)) == f"'/etc/cron.d' {OUTSIDE}"


@pytest.mark.parametrize(("root", "weights"), [("/mnt/weight", "/mnt/weight/"), ("/mnt/weight/ucm", "/mnt/weight"),
                                             ("/mnt/weight", "/mnt/weight/qwen")])
def test_a_writable_root_over_the_weights_is_refused(root, weights):
    config = service(storage=[root], logs=[root], weights=weights)
    problem = (f"{root!r} overlaps weight_mount_path {weights!r}, which pods mount read-only: a writable root there "
               "lets a pod rewrite the model; declare a folder beside the weights.")
    assert messages(config) == [f"{ROOTS}.logs[0]: {problem}", f"{ROOTS}.storage[0]: {problem}"]
    assert rules.host_path_problem(root, True, rules.allowed_host_paths(config)) is not None
    beside = service(storage=["/mnt/cache"], weights=weights)
    assert rules.host_path_problem("/mnt/cache/ucm", True, rules.allowed_host_paths(beside)) is None


@pytest.mark.parametrize("path", ["//etc", "/mnt//weight", "/mnt/weight/../../etc", "/mnt/./weight", "/mnt/weight//",
                                  "/mnt/weight\n", "/mnt/we ight", "mnt/weight", "", "/mnt/$(id)", "/mnt/*"])
def test_a_path_that_is_not_plain_matches_nothing(path):
    allowed = rules.allowed_host_paths(service(storage=["/mnt"]))
    assert rules.normal_host_path(path) is None
    assert rules.host_path_problem(path, False, allowed) == (
        f"{path!r} is not a plain absolute path: write /folder/... with letters, digits, '.', '_', '-', '+' or '@' in "
        "each part, no '.' or '..' part and no '//'."
    )


def test_motors_read_only_node_files_stay_read_only():
    allowed = rules.allowed_host_paths({})
    for path, writable in rules.MOTOR_HOST_PATHS.items():
        assert rules.host_path_problem(path, False, allowed) is None
        assert (rules.host_path_problem(path, True, allowed) is None) == writable
    assert rules.host_path_problem("/etc/hccn.conf", True, allowed) == (
        "'/etc/hccn.conf' is a node path Motor's deployer mounts, which pods mount read-only; mount it with readOnly: "
        "true and a hostPath type that does not create it (not DirectoryOrCreate or FileOrCreate)."
    )
    # Exact: nothing below or beside a node file Motor mounts.
    assert rules.host_path_problem("/usr/local/Ascend/driver", False, allowed) is not None
    assert rules.host_path_problem("/etc/hccn.conf/x", False, allowed) is not None
    # The weights are read-only too.
    assert rules.host_path_problem("/mnt/weight/qwen", True, allowed) == (
        "'/mnt/weight/qwen' lies in motor_deploy_config.weight_mount_path, which pods mount read-only; mount it with "
        "readOnly: true and a hostPath type that does not create it (not DirectoryOrCreate or FileOrCreate)."
    )


def test_a_pods_hostpath_is_writable_when_mounted_so_or_created():
    allowed = rules.allowed_host_paths({})
    spec = {
        "containers": [{"name": "c", "volumeMounts": [{"name": "hccn", "mountPath": "/etc/hccn.conf", "readOnly": True},
                                                      {"name": "tool", "mountPath": "/t"}]}],
        "initContainers": [{"name": "i", "volumeMounts": [{"name": "hccn", "mountPath": "/h"}]}],
        "volumes": [{"name": "hccn", "hostPath": {"path": "/etc/hccn.conf"}},
                    {"name": "tool", "hostPath": {"path": "/usr/local/Ascend/driver/tools/hccn_tool"}},
                    {"name": "version", "hostPath": {"path": "/usr/local/Ascend/driver/version.info", "type": "FileOrCreate"}},
                    {"name": "cron", "hostPath": {"path": "/etc/cron.d"}},
                    {"name": "cores", "hostPath": {"path": "/var/coredump", "type": "DirectoryOrCreate"}},
                    {"name": "shm", "emptyDir": {}}],
    }
    assert [f.path for f in rules.check_pod_host_paths(spec, allowed, "spec.")] == [
        "spec.volumes[hccn].hostPath.path", "spec.volumes[tool].hostPath.path", "spec.volumes[version].hostPath.path",
        "spec.volumes[cron].hostPath.path",
    ]


# --- generated paths: every path below a root is accepted, every other refused ----------------------------------


def _parts(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def _below(path: str, root: str) -> bool:
    return _parts(path)[:len(_parts(root))] == _parts(root)


def _overlap(path: str, other: str) -> bool:
    return _below(path, other) or _below(other, path)


_PART = st.from_regex(r"[A-Za-z0-9_+@-][A-Za-z0-9._+@-]{0,11}", fullmatch=True).filter(lambda p: p not in (".", ".."))
_NODE_TOP = st.sampled_from(["etc", "root", "usr", "var", "opt", "home", "lib", "bin", "sbin", "boot", "dev", "proc",
                             "sys", "run", "tmp", "snap", "media", "lost+found", "nix", "data-x", "mntx", "srv2x"])
_DATA_TOP = st.sampled_from(["mnt", "data", "data01", "data7", "srv"])


@st.composite
def _paths(draw, top):
    parts = [draw(top), *draw(st.lists(_PART, min_size=0, max_size=4))]
    return "/" + "/".join(parts) + draw(st.sampled_from(["", "/"]))


@settings(max_examples=300, deadline=None)
@given(root=_paths(_DATA_TOP).filter(lambda p: p.strip("/").count("/") >= 1), below=st.lists(_PART, max_size=3),
       writable=st.booleans())
def test_every_path_below_a_declared_root_is_accepted(root, below, writable):
    assume(not _overlap(root, "/mnt/weight"))  # a writable root over the weights is refused (test above)
    path = root.rstrip("/") + "".join(f"/{part}" for part in below)
    config = service(storage=[root], logs=[root])
    config["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": path}]
    config["motor_controller_config"] = {"logging_config": {"host_log_dir": path}}
    assert messages(config) == []
    assert rules.host_path_problem(path, writable, rules.allowed_host_paths(config)) is None


@settings(max_examples=300, deadline=None)
@given(path=st.one_of(_paths(_NODE_TOP), _paths(_DATA_TOP)), roots=st.lists(_paths(_DATA_TOP), max_size=3),
       writable=st.booleans())
def test_every_path_outside_the_allowed_roots_is_refused(path, roots, writable):
    """The oracle, by parts: below a declared root of two parts or more (one part is the data folder itself, which
    no declaration may be), below Motor's log folder, below the weights when read-only, or a Motor node path."""
    config = service(storage=roots, logs=roots)
    inside = (
        any(len(_parts(root)) >= 2 and not _overlap(root, "/mnt/weight") and _below(path, root) for root in roots)
        or _below(path, "/root/ascend/log")
        or (not writable and _below(path, "/mnt/weight"))
        or path.rstrip("/") in {p for p, w in rules.MOTOR_HOST_PATHS.items() if w or not writable}
    )
    problem = rules.host_path_problem(path, writable, rules.allowed_host_paths(config))
    assert (problem is None) == inside
    if not inside and not _below(path, "/mnt/weight"):
        assert problem == f"{path!r} {OUTSIDE}"
        config["motor_deploy_config"]["storage"] = [{"type": "hostpath", "path": path}]
        assert [f.path for f in rules.check_host_paths(config)
                if f.path.startswith("motor_deploy_config.storage")] == ["motor_deploy_config.storage[0].path"]
