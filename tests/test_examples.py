"""The example stacks preview clean and byte-identically; every Motor example imports and previews, or is refused
with its precise reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from components.errors import KvpoolError
from kvpool.importer import import_pair
from kvpool.preview import preview
from tests.outside import MOTOR_EXAMPLES
from tests.program_runs import PROJECT_DIR

STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))
# Motor's example configurations: an outside corpus (tests/outside.py); the `motor_examples` fixture skips without it,
# or fails under CI.
EXAMPLES = sorted(str(path.parent.relative_to(MOTOR_EXAMPLES)) for path in MOTOR_EXAMPLES.glob("**/user_config.json"))
# Motor's examples leave these as "<请按实际情况填写...>" placeholders; the README's import command fills them.
FILL = {
    "motor_deploy_config.image_name": "registry.local/mindie-motor-vllm:3.0.0",
    "motor_deploy_config.weight_mount_path": "/mnt/weight",
}
# Mooncake pools of the older guide: alloc_in_same_node imports (renamed), the missing eviction ratios do not.
ALLOC = (
    "kv_cache_store_config.eviction_high_watermark_ratio: is required for backend 'mooncake' (the pool usage at "
    "which mooncake_master starts evicting); set a value in (0, 1], e.g. 0.6 (the seed suggests 0.9, which let only "
    "40-54% of a fast writer's puts through on the real master: bench/results/eviction.md).",
    "kv_cache_store_config.eviction_ratio: is required for backend 'mooncake' (the fraction of the pool freed per "
    "eviction); set a value in [0, 1], e.g. 0.4 (the seed suggests 0.1).",
)
REFUSED = {
    "vllm/models/GLM/5": ALLOC,
    "vllm/models/deepseek/v3_2": ALLOC,
    "vllm/models/qwen/3/30b": ALLOC,
    "vllm/pd_hybrid": (
        "motor_engine_union_config: this is a PD-hybrid (union) service; motor-kvpool deploys disaggregated prefill "
        "and decode with a KV pool, so there is nothing to import. Keep it on deploy.py, or rewrite it as "
        "motor_engine_prefill_config + motor_engine_decode_config."
    ),
    "vllm/single_container": (
        "motor_deploy_config.deploy_mode: single_container runs every role in one container (a single-node trial); "
        "motor-kvpool deploys each role as its own workload: write multi_deployment or infer_service_set"
    ),
    "vllm/ucm_pd": (
        "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]."
        "kv_connector_extra_config.ucm_connectors[0].ucm_connector_config.posix_capacity_gb: is 1024 GiB but the "
        "volume it writes to is 512Gi; keep it below the volume size so UCM's garbage collection runs before the "
        "volume is full."
    ),
}


def test_there_are_examples_for_every_backend_and_mode():
    assert {"dev", "mooncake-layerwise", "mooncake-ha", "yuanrong", "ucm", "service-set"} <= set(STACKS)


def test_motors_examples_are_all_there(motor_examples: Path):
    assert len(EXAMPLES) == 22


@pytest.mark.parametrize("stack", STACKS)
def test_example_stack_previews_clean_and_byte_identical(stack, tmp_path):
    first = preview(PROJECT_DIR, stack, tmp_path / "first")
    second = preview(PROJECT_DIR, stack, tmp_path / "second")
    assert first.validation.validated, "no manifest was schema-checked"
    assert second.validation == first.validation
    files = sorted(path.relative_to(tmp_path / "first") for path in (tmp_path / "first").rglob("*") if path.is_file())
    assert files == sorted(path.relative_to(tmp_path / "second") for path in (tmp_path / "second").rglob("*") if path.is_file())
    for relative in files:
        assert (tmp_path / "first" / relative).read_bytes() == (tmp_path / "second" / relative).read_bytes(), relative


def project_copy(tmp_path: Path) -> Path:
    """This program with an empty stacks/ folder, so imported stacks preview without touching the repository."""
    project = tmp_path / "project"
    project.mkdir()
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(PROJECT_DIR / name, project / name)
    for package in ("components", "policies"):
        shutil.copytree(PROJECT_DIR / package, project / package, ignore=shutil.ignore_patterns("__pycache__"))
    return project


@pytest.mark.parametrize("example", EXAMPLES or ["<none>"])
def test_motor_example_imports_and_previews_or_is_refused_precisely(motor_examples: Path, example, tmp_path):
    folder = motor_examples / example
    project = project_copy(tmp_path)
    try:
        import_pair(folder / "user_config.json", folder / "env.json", "imported", project / "stacks", FILL)
    except KvpoolError as error:
        problems = getattr(error, "problems", [str(error)])
        expected = REFUSED.get(example, "<expected to import>")
        assert problems == (list(expected) if isinstance(expected, tuple) else [expected])
        return
    assert example not in REFUSED
    result = preview(project, "imported", tmp_path / "out")
    assert result.validation.validated


@pytest.mark.parametrize("stack", ["mooncake-ha", "service-set"])
def test_preview_files_do_not_depend_on_the_processs_hash_seed(stack, tmp_path):
    """Two processes with different PYTHONHASHSEED (set and dict order could leak into the files) write the same bytes."""
    import os
    import subprocess
    import sys

    for seed in ("1", "2"):
        done = subprocess.run(
            [sys.executable, "-m", "kvpool", "preview", "--stack", stack, "--out", str(tmp_path / seed), "--no-policy"],
            cwd=PROJECT_DIR, capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONHASHSEED": seed},
        )
        assert done.returncode == 0, done.stderr
    first = sorted(p.relative_to(tmp_path / "1") for p in (tmp_path / "1").rglob("*") if p.is_file())
    assert first == sorted(p.relative_to(tmp_path / "2") for p in (tmp_path / "2").rglob("*") if p.is_file())
    for relative in first:
        assert (tmp_path / "1" / relative).read_bytes() == (tmp_path / "2" / relative).read_bytes(), relative
