"""Where things sit in Motor's pods: mount paths, the engines' host files, Motor's config folders.

Plain facts, below the settings and the components alike: the settings refuse a mount that would shadow one of these
(settings.engine_mount_paths) and the components mount them, so neither imports the other for them.
"""

from __future__ import annotations

from kvpool.internal.hardware import HARDWARE

# ConfigMap motor-config's mount in every Motor pod: boot.sh and the scripts it sources run from here.
CONFIGMAP_PATH = "/mnt/configmap"
# Motor's writable config folder in every Motor pod (CONFIG_PATH): its scripts copy config files there.
MOTOR_CONF_DIR = "/usr/local/Ascend/pyMotor/conf"
# Where engine containers mount the store's client files that Motor's scripts do not place themselves
# (mooncake.json); MemCache's mmc-local.conf travels in motor-config (kvpool/internal/motor_config.py).
CLIENT_CONFIG_DIR = "/etc/motor-kvpool/kv-client"
# The openYuanrong worker's Unix sockets, shared with the engines of its node through a hostPath.
YUANRONG_SOCKET_DIR = "/var/run/datasystem"
# deploy.py mounts a node folder at /root/ascend/log in every Motor pod (its controller, coordinator and engine
# templates' plog-path): Motor's common.sh chmods $MOTOR_LOG_ROOT_PATH there and writes its logs under it; CANN
# writes its plog. Which node folder: the role's logging_config.host_log_dir (rules.host_log_dir).
LOG_VOLUME_NAME = "plog-path"
LOG_MOUNT_PATH = "/root/ascend/log"
# deploy.py's engine template: host paths the Ascend runtime, HCCL and RDMA use, and where logs and core dumps
# go (hostPath type "" = no check, as deploy.py's template has it: hccn_tool sits in the driver's tools folder,
# whose layout differs between driver versions). Not mounted: deploy.py's /data, /mnt and /var/queue_schedule,
# whole host folders no Motor script or process reads (grep of Motor 8919e55); storage[] names what a service needs.
# name -> (path in the pod and on the node, hostPath type, read-only); plog-path alone has another node folder, the
# service's host_log_dir (EnginePool._volumes). Read-only unless something in the pod writes it:
# - version.info, hccn_tool: read and run only. /etc/hccn.conf: Motor only queries it (`hccn_tool -i N -ip -g`,
#   startup/hccl_tools.py:121); writing it (`hccn_tool -s`) is the node administrator's job, never an engine's.
# - /root/ascend/log: CANN writes its plog there; /var/coredump: common.sh chmods it and the kernel writes cores.
# - /dev/infiniband, /dev/hisi_hdc: device nodes the RDMA verbs and HDC drivers open read-write; kept as deploy.py
#   mounts them.
HOST_FILES = {
    "driver-version": ("/usr/local/Ascend/driver/version.info", "File", True),
    "hccn-conf": ("/etc/hccn.conf", "", True),
    "hccn-tool": ("/usr/local/Ascend/driver/tools/hccn_tool", "", True),
    LOG_VOLUME_NAME: (LOG_MOUNT_PATH, "DirectoryOrCreate", False),
    "coredump": ("/var/coredump", "DirectoryOrCreate", False),
    "rdma": ("/dev/infiniband", "", False),
    "hisi-hdc": ("/dev/hisi_hdc", "", False),
}


def host_files(hardware_type: str) -> dict[str, tuple[str, str, bool]]:
    """Every host file an engine of this hardware mounts, by volume name: (path, hostPath type, read-only)."""
    extra = {name: (path, kind, read_only) for name, path, kind, read_only in HARDWARE[hardware_type].host_files}
    return {**HOST_FILES, **extra}
