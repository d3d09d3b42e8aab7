"""Motor's Python package as Motor's build leaves it, for running Motor's processes in tests.

The checkout holds the etcd client's .proto files but not the modules generated from them
(motor/common/etcd/proto/rpc_pb2.py, rpc_pb2_grpc.py, which the controller imports through
motor/common/etcd/etcd_client.py:26). Motor's build.sh runs scripts/generate_proto.sh before it packs the wheel
(njuyuan/PyMotor, scripts/generate_proto.sh, not in the reference checkout): for each .proto, grpc_tools.protoc in the
file's folder with `--proto_path=. --python_out=. --grpc_python_out=.`, then each generated `import X_pb2` becomes
`from <the folder as a package> import X_pb2`. The same steps run here on a writable copy, never in the checkout.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests.deploy_py import writable_copy

GENERATED_IMPORT = re.compile(r"^import (\w+_pb2)\b", re.MULTILINE)


def build_motor(checkout: Path, folder: Path) -> Path:
    """A copy of the checkout's `motor` package under `folder`, with its protobuf modules generated; returns `folder`
    (the path to put first on sys.path)."""
    package = writable_copy(checkout / "motor", folder / "motor")
    for proto in sorted(package.rglob("*.proto")):
        protoc = subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", "--proto_path=.", "--python_out=.", "--grpc_python_out=.",
             proto.name],
            cwd=proto.parent, capture_output=True, text=True, check=False,
        )
        if protoc.returncode:
            raise RuntimeError(f"grpc_tools.protoc failed on {proto} (is grpcio-tools installed, as requirements-dev.txt "
                               f"pins it?):\n{protoc.stderr}")
        dotted = ".".join(proto.parent.relative_to(folder).parts)
        for generated in (proto.with_name(f"{proto.stem}_pb2.py"), proto.with_name(f"{proto.stem}_pb2_grpc.py")):
            generated.write_text(GENERATED_IMPORT.sub(rf"from {dotted} import \1", generated.read_text()))
    return folder
