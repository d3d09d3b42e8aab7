"""What each Motor hardware_type means for Kubernetes scheduling and for the KV transports (deploy.py's values)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Hardware:
    npu_resource: str
    accelerator: str
    # deploy.py reads accelerator-type from the cluster's node labels; these are its values for A2 and A3.
    accelerator_type: str | None
    family: str  # A2, A3 or A5 (Ascend 950)
    memcache_protocol: str
    # Host files engines mount beyond the common ones (name -> (path, hostPath type)): A5's UB transport tools.
    host_files: tuple[tuple[str, str, str], ...] = ()


_A2 = Hardware("huawei.com/Ascend910", "huawei-Ascend910", "module-910b-8", "A2", "device_rdma")
_A3 = Hardware("huawei.com/Ascend910", "huawei-Ascend910", "module-a3-16", "A3", "device_sdma")
# deploy.py's A5 template mounts these (the UB transport's libraries, route table and admin tool).
_A5 = Hardware(
    "huawei.com/npu", "huawei-npu", None, "A5", "device_urma",
    host_files=(
        ("usr-lib64", "/usr/lib64", "Directory"),
        ("hixlep", "/etc/hixlep", "DirectoryOrCreate"),
        ("route-conf", "/lib/route.conf", "File"),
        ("urma-admin", "/usr/bin/urma_admin", "File"),
    ),
)

HARDWARE = {
    "800I_A2": _A2, "800T_A2": _A2,
    "800I_A3": _A3, "800T_A3": _A3,
    "350-Atlas-8": _A5, "350-Atlas-16": _A5, "350-Atlas-4p-8": _A5, "350-Atlas-4p-16": _A5,
    "850-Atlas-8p-8": _A5, "850-SuperPod-Atlas-8": _A5, "950-SuperPod-Atlas-8": _A5,
}


def engine_node_selector(hardware_type: str) -> dict[str, str]:
    hardware = HARDWARE[hardware_type]
    selector = {"accelerator": hardware.accelerator}
    if hardware.accelerator_type:
        selector["accelerator-type"] = hardware.accelerator_type
    return selector
