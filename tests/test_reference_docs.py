"""docs/configuration.md, docs/policies.md and docs/restarts.md: committed exactly as `python -m tools.reference`
writes them from their sources (issue 25 part 3), and those sources agree with what they describe: the settings'
keys with the keys the loader takes, the policies with the pack, the checksum inputs with the annotations the
example stacks' pods carry."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from kvpool.internal.checksums import INPUTS, PREFIX
from kvpool.settings.from_stack import SECRET_ENV_KEY
from kvpool.settings.loader import ALIASES, MIGRATIONS, PULUMI_CONFIG_KEYS
from tests.program_runs import PROJECT_DIR, Rendered, render, render_stack, stack_values
from tools import reference
from tools.reference import __main__ as command
from tools.reference.policies import catalog

STACKS = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml")
                for path in (PROJECT_DIR / "stacks").glob("Pulumi.*.yaml"))


def page(name: str) -> str:
    return (PROJECT_DIR / "docs" / name).read_text(encoding="utf-8")


def test_the_committed_pages_are_what_the_command_writes() -> None:
    for name, write in command.PAGES.items():
        assert page(name) == write(), f"docs/{name}: run venv/bin/python -m tools.reference"
    check = subprocess.run([sys.executable, "-m", "tools.reference", "--check"], cwd=PROJECT_DIR,
                           capture_output=True, text=True, timeout=120)
    assert (check.returncode, check.stderr) == (0, "")


def test_check_names_a_stale_page_and_exits_1(tmp_path: Path, monkeypatch, capsys) -> None:
    for name, write in command.PAGES.items():
        (tmp_path / name).write_text(write(), encoding="utf-8")
    (tmp_path / "policies.md").write_text(page("policies.md").replace("mandatory (high)", "advisory (high)", 1))
    monkeypatch.setattr(command, "DOCS", tmp_path)
    assert command.main(["--check"]) == 1
    assert capsys.readouterr().err == (f"{tmp_path / 'policies.md'} differs from its sources; run venv/bin/python "
                                       "-m tools.reference\n")


def test_the_configuration_page_names_exactly_the_keys_the_settings_take() -> None:
    top = page("configuration.md").split("\n## ", 2)[1]
    named = re.findall(r"^\| `([a-z_]+)` \|", top, flags=re.MULTILINE)
    assert sorted(named) == sorted({*PULUMI_CONFIG_KEYS, SECRET_ENV_KEY})  # each once
    assert not set(named) & set(MIGRATIONS)  # e.g. motor_scripts_dir, which the settings refuse
    for old in ALIASES:
        assert f"| `{old}` |" in page("configuration.md")


def test_a_field_row_says_its_type_limits_default_and_description() -> None:
    text = page("configuration.md")
    assert ("| `p_pod_npu_num` | integer 1..16 | required | NPUs per prefill pod. |" in text)
    assert ("| `coordinator_infer_node_port` | integer 30000..32767 | unset | NodePort of the inference API for "
            "clients outside the cluster; unset, the Service is ClusterIP. deploy.py's is 31015: write it to keep it "
            "(one stack per cluster may hold it). |") in text
    assert "| `etcd` | [kv_cache_store_config.ha.etcd](#kv_cache_store_confighaetcd) | `{\"replicas\": 3}` |" in text
    assert "PYTHONHASHSEED=0, ASCEND_CONNECT_TIMEOUT=10000, ASCEND_TRANSFER_TIMEOUT=10000" in text


def test_every_link_of_the_configuration_page_has_its_section() -> None:
    text = page("configuration.md")
    anchors = {reference.markdown.anchor(heading) for heading in re.findall(r"^## (.+)$", text, flags=re.MULTILINE)}
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert links and links <= anchors, sorted(links - anchors)


def test_the_policy_page_lists_every_policy_of_the_pack_with_its_level() -> None:
    rows = re.findall(r"^\| `(kvpool-[a-z-]+)` \| (\w+) \((\w+)\) \|", page("policies.md"), flags=re.MULTILINE)
    assert rows == [(p.name, p.enforcement_level.value, p.severity.value) for p in catalog().POLICIES]
    assert ("Configurable: `maxHighWatermark` (default `0.6`), `minEvictionRatio` (default `0.4`)."
            in page("policies.md"))


def checksum_inputs(rendered: Rendered) -> set[str]:
    """The checksum/<input> names on the rendered workloads' pod templates."""
    templates = [(body.get("spec") or {}).get("template") or {} for body in rendered.objects.values()]
    return {key.removeprefix(PREFIX) for template in templates
            for key in (template.get("metadata") or {}).get("annotations") or {} if key.startswith(PREFIX)}


def test_the_example_stacks_carry_exactly_the_documented_checksum_inputs() -> None:
    found: set[str] = set()
    for stack in STACKS:
        owner = stack_values(stack).get("kv_cache_store_config", {}).get("target_stack")
        references = {owner: render_stack(owner.rsplit("/", 1)[1]).run.outputs} if owner else None
        found |= checksum_inputs(render(stack_values(stack), stack=stack, stack_references=references))
    # secret-env needs a Pulumi secret and motor-scripts Motor's checkout (motor_deployer_dir), which no example
    # stack holds: tests/test_restarts.py renders both
    assert found == set(INPUTS) - {"secret-env", "motor-scripts"}
