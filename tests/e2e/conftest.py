"""Fixtures for the end-to-end tests: the real Pulumi CLI and provider, and a loopback-only cluster.

Binaries come from `bash tools/real-engine/build.sh` (make test runs it first); when one is missing the tests
that need it skip, naming it and that command, or fail under CI (tests/outside.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cluster_stacks import StacksUp
from tests.e2e.realengine import (
    BUILD_COMMAND,
    CLUSTER_BINARIES,
    MOTOR_CHECKOUT,
    MOTOR_DEPLOYER,
    PULUMI_BINARIES,
    REPO,
    YAML_BINARIES,
    Cluster,
    PulumiWorkspace,
    find_binaries,
)
from tests.e2e.views import CONSUMERS, STACKS, offline_preview
from tests.outside import absent


def _require(names: tuple[str, ...]) -> dict[str, Path]:
    found, missing = find_binaries(names)
    if missing:
        absent(f"real engine: {', '.join(missing)} not built; run `{BUILD_COMMAND}`")
    if not (REPO / "venv" / "bin" / "python").exists():
        absent("real engine: the project's virtualenv ./venv is missing; run `make preview` or `make test`")
    return found


@pytest.fixture(scope="session")
def e2e_tmp() -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="motor-kvpool-e2e-"))
    yield root
    if os.environ.get("E2E_KEEP_TMP") != "1":
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def pulumi_bins() -> dict[str, Path]:
    return _require(PULUMI_BINARIES + YAML_BINARIES)


@pytest.fixture(scope="session")
def cluster(e2e_tmp: Path) -> Iterator[Cluster]:
    bins = _require(CLUSTER_BINARIES)
    cluster = Cluster(bins, e2e_tmp / "cluster")
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def offline_workspace(e2e_tmp: Path, pulumi_bins: dict[str, Path]) -> PulumiWorkspace:
    """The CLI with no cluster configured (preview only)."""
    workspace = PulumiWorkspace(pulumi_bins, e2e_tmp / "offline", kubeconfig=None)
    workspace.root.mkdir()
    workspace.bundle_yaml()
    workspace.setup()
    return workspace


def _live_workspace(pulumi_bins: dict[str, Path], cluster: Cluster, root: Path) -> PulumiWorkspace:
    """The CLI against the cluster. `pulumi up` needs Motor's scripts for ConfigMap motor-config."""
    if not MOTOR_DEPLOYER.is_dir():
        absent(f"no Motor checkout at {MOTOR_CHECKOUT} (set MOTOR_CHECKOUT): pulumi up refuses without Motor's scripts")
    workspace = PulumiWorkspace(pulumi_bins, root, kubeconfig=cluster.kubeconfig)
    workspace.root.mkdir()
    workspace.bundle_yaml()  # runtime: yaml projects too (tests/e2e/test_component_package.py)
    workspace.setup()
    return workspace


@pytest.fixture(scope="session")
def workspace(e2e_tmp: Path, pulumi_bins: dict[str, Path], cluster: Cluster) -> PulumiWorkspace:
    return _live_workspace(pulumi_bins, cluster, e2e_tmp / "live")


@pytest.fixture
def own_workspace(
    request: pytest.FixtureRequest, e2e_tmp: Path, pulumi_bins: dict[str, Path], cluster: Cluster
) -> PulumiWorkspace:
    """The test's own copy of the project and file backend, for a test that kills the CLI: a kill inside a checkpoint
    save leaves the stack unloadable, and then `pulumi stack ls` fails (`error: EOF`) for every stack of its backend."""
    return _live_workspace(pulumi_bins, cluster, e2e_tmp / f"own-{request.node.name}")


# The stacks the tests share, up once per session (the tests that change them run last: test_updates.py).


@pytest.fixture(scope="session")
def offline_out(e2e_tmp: Path) -> Path:
    out = e2e_tmp / "offline-out"
    for stack in sorted(STACKS, key=lambda s: s in CONSUMERS):
        result = offline_preview(stack, out)
        assert result.returncode == 0, f"offline preview of {stack}: {result.stderr}"
        (out / f"{stack}.tree").write_text(result.stdout)
    return out


@pytest.fixture(scope="session")
def offline_stacks(offline_workspace: PulumiWorkspace) -> PulumiWorkspace:
    for stack in STACKS:
        offline_workspace.stack_init(stack)
    return offline_workspace


@pytest.fixture(scope="session")
def stacks_up(workspace: PulumiWorkspace, cluster: Cluster, offline_out: Path, e2e_tmp: Path) -> StacksUp:
    return StacksUp(workspace, cluster, offline_out, e2e_tmp / "previews-as-up")


@pytest.fixture(scope="session")
def dev_up(stacks_up: StacksUp) -> PulumiWorkspace:
    stacks_up.bring_up("dev")
    return stacks_up.workspace


@pytest.fixture(scope="session")
def service_a_up(stacks_up: StacksUp) -> PulumiWorkspace:
    stacks_up.bring_up("service-a")
    return stacks_up.workspace
