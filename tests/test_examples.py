"""The example stacks preview clean and byte-identically; every Motor example imports and previews, or is refused
with its precise reason."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from kvpool.cli.preview import preview
from kvpool.cli.views.importer import import_pair
from kvpool.errors import KvpoolError
from tests.outside import MOTOR_EXAMPLES
from tests.program_runs import PROJECT_DIR

STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))
# Motor's example configurations: an outside corpus (tests/outside.py); the `motor_examples` fixture skips without it,
# or fails under CI.
EXAMPLES = sorted(str(path.parent.relative_to(MOTOR_EXAMPLES)) for path in MOTOR_EXAMPLES.glob("**/user_config.json"))
# The older generation's examples: examples/infer_engines/ of Ascend/MindIE-PyMotor 7d15c04 (kv_cache_pool_config,
# SchedulerConfig.deploy_mode), the same layout.
MOTOR_OLDER_EXAMPLES = Path(
    os.environ.get("MOTOR_OLDER_EXAMPLES") or PROJECT_DIR.parent / "shared" / "reference" / "motor-examples-7d15c04"
)
OLDER_EXAMPLES = sorted(
    str(path.parent.relative_to(MOTOR_OLDER_EXAMPLES)) for path in MOTOR_OLDER_EXAMPLES.glob("**/user_config.json")
)
# Not in the reference corpus CI has (../shared/reference), so these skip there too, naming the setting.
needs_older_examples = pytest.mark.skipif(
    not OLDER_EXAMPLES,
    reason=f"no older Motor examples at {MOTOR_OLDER_EXAMPLES} (set MOTOR_OLDER_EXAMPLES to a copy of "
    "examples/infer_engines/ of Ascend/MindIE-PyMotor 7d15c04)",
)
# Motor's examples leave these as "<请按实际情况填写...>" placeholders; the README's import command fills them.
FILL = {
    "motor_deploy_config.image_name": "registry.local/mindie-motor-vllm:3.0.0",
    "motor_deploy_config.weight_mount_path": "/mnt/weight",
}
# Mooncake pools of the older guide set no eviction ratios: Motor's generator refuses them
# (examples/deployer/lib/generator/kv_cache_store.py), and so does the import, showing the values to write.
WITHOUT_EVICTION_RATIOS = (
    "kv_cache_store_config.eviction_high_watermark_ratio: is required for backend 'mooncake' (the pool usage at which "
    "mooncake_master starts evicting); set a value in (0, 1], e.g. 0.6 (the seed suggests 0.9, which let only 40-54% "
    "of a fast writer's puts through on the real master: bench/results/eviction.md).",
    "kv_cache_store_config.eviction_ratio: is required for backend 'mooncake' (the fraction of the pool freed per "
    "eviction); set a value in [0, 1], e.g. 0.4 (the seed suggests 0.1).",
    "fix them while importing: --set kv_cache_store_config.eviction_high_watermark_ratio=0.6 --set "
    "kv_cache_store_config.eviction_ratio=0.4",
)
UCM_POSIX = (
    "motor_engine_prefill_config.engine_config.kv_transfer_config.kv_connector_extra_config.connectors[1]."
    "kv_connector_extra_config.ucm_connectors[0].ucm_connector_config.posix_capacity_gb"
)
REFUSED = {
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
        f"{UCM_POSIX}: is 1024 GiB but the volume it writes to is 512Gi; keep it below the volume size so UCM's "
        "garbage collection runs before the volume is full, e.g. 460.",
        f"fix them while importing: --set {UCM_POSIX}=460",
    ),
    **{example: WITHOUT_EVICTION_RATIOS for example in ("vllm/models/GLM/5", "vllm/models/deepseek/v3_2", "vllm/models/qwen/3/30b")},
}
# The older generation: the same two are not disaggregated services.
OLDER_REFUSED = {example: REFUSED[example] for example in ("vllm/pd_hybrid", "vllm/single_container")}


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
    shutil.copytree(PROJECT_DIR / "kvpool", project / "kvpool", ignore=shutil.ignore_patterns("__pycache__"))
    return project


def import_and_preview(
    corpus: Path, example: str, tmp_path: Path, refused: dict, fill: dict = FILL, with_policies: bool = False
):
    """Import Motor's pair into an empty project and preview it (with the policy pack: `with_policies`); None when
    refused with exactly `refused`'s words."""
    folder = corpus / example
    project = project_copy(tmp_path)
    try:
        _, conversion = import_pair(folder / "user_config.json", folder / "env.json", "imported", project / "stacks", fill)
    except KvpoolError as error:
        problems = getattr(error, "problems", [str(error)])
        expected = refused.get(example, "<expected to import>")
        assert problems == (list(expected) if isinstance(expected, tuple) else [expected])
        return None
    assert example not in refused
    pack = PROJECT_DIR / "kvpool" / "policies" if with_policies else None
    result = preview(project, "imported", tmp_path / "out", policy_pack=pack)
    assert result.validation.validated
    return conversion, result


@pytest.mark.parametrize("example", EXAMPLES or ["<none>"])
def test_motor_example_imports_and_previews_or_is_refused_precisely(motor_examples: Path, example, tmp_path):
    import_and_preview(motor_examples, example, tmp_path, REFUSED)


def test_16_of_motors_22_examples_import(motor_examples: Path):
    assert len(EXAMPLES) - len(REFUSED) == 16


def test_the_ucm_examples_refusal_names_the_set_that_fixes_it(motor_examples: Path, tmp_path):
    fixed = {**FILL, UCM_POSIX: 460}
    conversion, result = import_and_preview(motor_examples, "vllm/ucm_pd", tmp_path, {}, fixed, with_policies=True)
    assert conversion.notes[-1] == f"{UCM_POSIX} set to 460 (--set; the file had 1024)"
    assert result.policy_report.mandatory == []


def test_a_pool_without_eviction_ratios_imports_with_the_values_its_refusal_shows(motor_examples: Path, tmp_path):
    fixed = {**FILL, "kv_cache_store_config.eviction_high_watermark_ratio": 0.6, "kv_cache_store_config.eviction_ratio": 0.4}
    conversion, result = import_and_preview(motor_examples, "vllm/models/GLM/5", tmp_path, {}, fixed, with_policies=True)
    assert conversion.notes[-2:] == [
        "kv_cache_store_config.eviction_high_watermark_ratio set to 0.6 (--set; the file had none)",
        "kv_cache_store_config.eviction_ratio set to 0.4 (--set; the file had none)",
    ]
    # Its engines transfer P/D only (MooncakeConnectorV1, MooncakeLayerwiseConnector): nothing fills the pool.
    assert [v.policy_name for v in result.policy_report.violations] == []


@needs_older_examples
@pytest.mark.parametrize("example", OLDER_EXAMPLES or ["<none>"])
def test_older_motor_example_imports_and_previews_or_is_refused_precisely(example, tmp_path):
    import_and_preview(MOTOR_OLDER_EXAMPLES, example, tmp_path, OLDER_REFUSED)


@needs_older_examples
def test_7_of_motors_9_older_examples_import():
    assert (len(OLDER_EXAMPLES), len(OLDER_REFUSED)) == (9, 2)


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
