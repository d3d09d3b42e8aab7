"""What each Motor hardware_type means for Kubernetes scheduling and for the KV transports (deploy.py's values)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hardware:
    npu_resource: str
    accelerator: str
    # The accelerator-type node label deploy.py expects for A2 and A3 (it reads the real value from the cluster's
    # nodes, e.g. module-a3-16-super-pod); None: the hardware_type itself, as deploy.py uses for A5.
    accelerator_type: str | None
    # What deploy.py requires of an accelerator-type value found on the nodes (lower-cased substring).
    accelerator_type_marker: str | None
    family: str  # A2, A3 or A5 (Ascend 950)
    memcache_protocol: str
    # Host files engines mount beyond the common ones (name, path, hostPath type, read-only): A5's UB transport.
    host_files: tuple[tuple[str, str, str, bool], ...] = ()


_A2 = Hardware("huawei.com/Ascend910", "huawei-Ascend910", "module-910b-8", "910b", "A2", "device_rdma")
_A3 = Hardware("huawei.com/Ascend910", "huawei-Ascend910", "module-a3-16", "a3", "A3", "device_sdma")
# deploy.py's A5 template mounts these (the UB transport's libraries, route table and admin tool). The libraries
# and the tool are only loaded and run: read-only. /etc/hixlep (created if absent, so something writes it) and the
# route table are the UB transport's state, which cannot be run here to show it never writes them: kept writable.
_A5 = Hardware(
    "huawei.com/npu", "huawei-npu", None, None, "A5", "device_urma",
    host_files=(
        ("usr-lib64", "/usr/lib64", "Directory", True),
        ("hixlep", "/etc/hixlep", "DirectoryOrCreate", False),
        ("route-conf", "/lib/route.conf", "File", False),
        ("urma-admin", "/usr/bin/urma_admin", "File", True),
    ),
)

HARDWARE = {
    "800I_A2": _A2, "800T_A2": _A2,
    "800I_A3": _A3, "800T_A3": _A3,
    "350-Atlas-8": _A5, "350-Atlas-16": _A5, "350-Atlas-4p-8": _A5, "350-Atlas-4p-16": _A5,
    "850-Atlas-8p-8": _A5, "850-SuperPod-Atlas-8": _A5, "950-SuperPod-Atlas-8": _A5,
}


def engine_node_selector(hardware_type: str, accelerator_type: str | None = None) -> dict[str, str]:
    """The labels every engine node must carry: accelerator and accelerator-type (the configured value, else
    deploy.py's default for the hardware type)."""
    hardware = HARDWARE[hardware_type]
    return {"accelerator": hardware.accelerator, "accelerator-type": accelerator_type or hardware.accelerator_type or hardware_type}


def accelerator_type_problem(hardware_type: str, accelerator_type: str) -> str | None:
    """deploy.py's check of an accelerator-type value against the hardware generation (A2: 910b, A3: a3)."""
    marker = HARDWARE[hardware_type].accelerator_type_marker
    if marker is None or marker in accelerator_type.lower():
        return None
    return (
        f"{accelerator_type!r} is not an accelerator-type of {hardware_type} nodes (deploy.py requires "
        f"{marker!r} in it, e.g. {HARDWARE[hardware_type].accelerator_type!r}); set the value your nodes carry"
    )


# The MemCache LocalService mode when the stack sets none. Seed 000's MemCache table: A2 and Atlas 850 run the
# LocalService in the vLLM process, A3 as its own process; the seeds say nothing for the other types, so those
# must choose explicitly.
MEMCACHE_LOCAL_SERVICE_MODE = {
    "800I_A2": "inprocess", "800T_A2": "inprocess",
    "850-Atlas-8p-8": "inprocess", "850-SuperPod-Atlas-8": "inprocess",
    "800I_A3": "standalone", "800T_A3": "standalone",
}
