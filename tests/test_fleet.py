"""`python -m kvpool fleet`: the example stacks and a generated fleet (one owner with several consumers in other
namespaces, a revoked consumer, a key mismatch, a dangling reference, a consumer of a consumer, two owners on one
namespace) as exact tables, JSON and problems; the pictures drawn by Graphviz and read back; the destroy guard
(`make destroy`) with a stand-in `pulumi` that records whether it was called."""

from __future__ import annotations

import copy
import dataclasses
import json
import os
import pickle
import struct
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import pytest
from pulumi.automation import StackSummary

from kvpool.cli.commands.cli import main
from kvpool.cli.fleet import report as fleet_report
from kvpool.cli.fleet.backend import stack_reference
from kvpool.cli.fleet.graph import PictureError, render
from kvpool.cli.fleet.model import build_fleet, pool_bytes_per_process
from kvpool.cli.fleet.offline import MissingPreviewError, offline_facts
from kvpool.cli.preview import preview
from kvpool.components.kv_store.endpoint import KVStoreEndpoint
from kvpool.errors import SettingsError
from kvpool.settings.loader import load_from_pulumi_config
from tests.program_runs import PROJECT, PROJECT_DIR, project_with_stacks, stack_values
from tests.service_configs import memcache_pool, mooncake_pool

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def example_fleet():
    return build_fleet(offline_facts(PROJECT_DIR))


def test_example_stacks_table(example_fleet):
    assert fleet_report.report(example_fleet) == [
        'STACK               CLUSTER  ROLE      NAMESPACE           BACKEND   READS      ALLOWED CONSUMERS  KEY               PREFILL              DECODE               POOL MEMORY',
        'dev                 default  owner     dev                 memcache  -          -                  279288a82e88af5d  1x1 pod, 2GiB each   1x1 pod, 2GiB each   4GiB',
        'kv-affinity         default  owner     kv-affinity         mooncake  -          -                  87b40f557eba6d0d  2x1 pod, 40GiB each  1x1 pod, 40GiB each  120GiB',
        'mooncake-ha         default  owner     mooncake-ha         mooncake  -          -                  dd863391253d1585  1x1 pod, 29GiB each  1x1 pod, 29GiB each  58GiB',
        'mooncake-layerwise  default  owner     mooncake-layerwise  mooncake  -          -                  dd863391253d1585  1x1 pod, 29GiB each  1x1 pod, 29GiB each  58GiB',
        'service-a           default  owner     service-a           memcache  -          service-b          87b40f557eba6d0d  1x1 pod, 2GiB each   1x1 pod, 2GiB each   4GiB',
        'service-b           default  consumer  service-b           memcache  service-a  -                  87b40f557eba6d0d  1x1 pod, 2GiB each   1x1 pod, 2GiB each   4GiB',
        'service-set         default  owner     service-set         memcache  -          -                  279288a82e88af5d  1x1 pod, 2GiB each   1x1 pod, 2GiB each   4GiB',
        'ucm                 default  owner     ucm                 mooncake  -          -                  279288a82e88af5d  2x1 pod, 0B each     1x1 pod, 0B each     0B',
        'yuanrong            default  owner     yuanrong            yuanrong  -          -                  279288a82e88af5d  1x1 pod, 0B each     1x1 pod, 0B each     0B',
        '',
        'Pools:',
        '  dev (memcache, namespace dev): 4GiB in 2 engine pods; consumers: none',
        '  kv-affinity (mooncake, namespace kv-affinity): 120GiB in 3 engine pods; consumers: none',
        '  mooncake-ha (mooncake, namespace mooncake-ha): 58GiB in 2 engine pods; consumers: none',
        '  mooncake-layerwise (mooncake, namespace mooncake-layerwise): 58GiB in 2 engine pods; consumers: none',
        '  service-a (memcache, namespace service-a): 8GiB in 4 engine pods; consumers: service-b',
        '  service-set (memcache, namespace service-set): 4GiB in 2 engine pods; consumers: none',
        '  ucm (mooncake, namespace ucm): holds nothing: no engine uses a store connector; consumers: none',
        "  yuanrong (yuanrong, namespace yuanrong): each node's datasystem worker offers 32GiB (2 engine pods); consumers: none",
        "Pool readiness: not checked; add --kubeconfig FILE to read each owner's store from its cluster",
        '',
        "Sizing (docs/sizing.md; the owner's and its counted consumers' writers):",
        'POOL                BACKEND   WRITERS                                                          KV BYTES/TOKEN                                           CAPACITY                                                                                               BLOCK LIFETIME                    FRONTIER',
        "dev                 memcache  1 prefill x 1500 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  2 GiB x 2 engine pod's LocalServices = 29056 tokens in 227 blocks of 128 (29056 per writing instance)  11.65 s (above the 10 s minimum)  not measured for this backend",
        'kv-affinity         mooncake  2 prefill x 8192 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  10 GiB x 12 engine ranks = 873728 tokens in 6826 blocks of 128 (436864 per writing instance)           19.20 s (above the 10 s minimum)  0.02% of the pool per 10 ms (row <= 8%): 0.6/0.4 kept >= 99 % of puts',
        'mooncake-ha         mooncake  1 prefill x 8192 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  29 GiB x 2 engine ranks = 422272 tokens in 3299 blocks of 128 (422272 per writing instance)            18.56 s (above the 10 s minimum)  0.02% of the pool per 10 ms (row <= 8%): 0.6/0.4 kept >= 99 % of puts',
        'mooncake-layerwise  mooncake  1 prefill x 8192 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  29 GiB x 2 engine ranks = 422272 tokens in 3299 blocks of 128 (422272 per writing instance)            18.56 s (above the 10 s minimum)  0.02% of the pool per 10 ms (row <= 8%): 0.6/0.4 kept >= 99 % of puts',
        "service-a           memcache  1 prefill x 1500 tok/s, 1 prefill x 1500 tok/s                   147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  2 GiB x 4 engine pod's LocalServices = 58240 tokens in 455 blocks of 128 (29120 per writing instance)  11.65 s (above the 10 s minimum)  not measured for this backend",
        "service-set         memcache  1 prefill x 1500 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  2 GiB x 2 engine pod's LocalServices = 29056 tokens in 227 blocks of 128 (29056 per writing instance)  11.65 s (above the 10 s minimum)  not measured for this backend",
        'ucm                 mooncake  none: no engine uses a store connector, the store holds nothing',
        'yuanrong            yuanrong  1 prefill x 8192 tok/s                                           147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))  32 GiB x 2 node workers = 465920 tokens in 3640 blocks of 128 (465920 per writing instance)            56.89 s (above the 10 s minimum)  not measured for this backend',
        '',
        'Problems: none',
    ]


def test_example_stacks_json(example_fleet):
    document = fleet_report.as_json(example_fleet)
    assert document["problems"] == []
    by_stack = {stack["stack"].rsplit("/", 1)[1]: stack for stack in document["stacks"]}
    assert by_stack["service-a"] == {
        "stack": "organization/motor-kvpool/service-a", "cluster": "default", "role": "owner", "namespace": "service-a",
        "backend": "memcache", "compatibility_key": "87b40f557eba6d0d",
        "engines": [
            {"role": "prefill", "instances": 1, "pods_per_instance": 1, "pool_bytes_per_pod": 2 * 2**30},
            {"role": "decode", "instances": 1, "pods_per_instance": 1, "pool_bytes_per_pod": 2 * 2**30},
        ],
        "pool_bytes": 4 * 2**30, "allowed_consumers": ["service-b"],
        "consumers": ["organization/motor-kvpool/service-b"], "pool_size_bytes": 8 * 2**30,
    }
    assert by_stack["service-b"]["target_stack"] == "organization/motor-kvpool/service-a"
    assert "consumers" not in by_stack["service-b"]
    # A MemCache LocalService and a Mooncake segment in every engine rank: service-a's TP 2 pods hold two each.
    assert by_stack["mooncake-ha"]["engines"][0]["pool_bytes_per_pod"] == 29 * 2**30
    assert by_stack["ucm"]["pool_bytes"] == 0  # its engines have no store connector
    assert by_stack["yuanrong"]["node_worker_mib"] == 32768


# --- a generated fleet ---------------------------------------------------------------------------------------


def _consumer(target: str, **store) -> dict:
    values = stack_values("service-b")
    values["kv_cache_store_config"] = {"backend": "memcache", "target_stack": f"organization/{PROJECT}/{target}",
                                       "dram_size": "2GB", **store}
    return values


def _generated_stacks() -> dict[str, dict]:
    hub = stack_values("service-a")
    hub["kv_cache_store_config"]["allowed_consumers"] = ["team-1", "team-2", "team-4", "team-5"]
    mismatch = _consumer("hub")
    mismatch["motor_engine_prefill_config"]["engine_config"]["block-size"] = 64
    mismatch["motor_engine_decode_config"]["engine_config"]["block-size"] = 64
    big = _consumer("hub")
    big["motor_deploy_config"].update(p_instances_num=2, single_p_instance_pod_num=2)
    second_owner = copy.deepcopy(hub)
    second_owner["motor_deploy_config"]["job_id"] = "hub"
    second_owner["kv_cache_store_config"]["allowed_consumers"] = []
    return {
        "hub": hub,
        "team-1": big,  # admitted, agrees: 2 prefill instances of 2 pods each read the hub's pool
        "team-2": mismatch,  # admitted, block size 64 against the hub's 128
        "team-3": _consumer("hub"),  # its namespace was revoked from the hub's allowed_consumers
        "team-4": _consumer("gone"),  # the stack it reads does not exist
        "team-5": _consumer("team-1"),  # reads a consumer, which exports no kv_store
        "hub-twin": second_owner,  # owns a store in namespace hub too
    }


@pytest.fixture(scope="module")
def generated_project(tmp_path_factory):
    return project_with_stacks(tmp_path_factory.mktemp("fleet"), _generated_stacks())


@pytest.fixture(scope="module")
def generated_fleet(generated_project):
    return build_fleet(offline_facts(generated_project))


HUB, GONE = "organization/motor-kvpool/hub", "organization/motor-kvpool/gone"
TEAM = {n: f"organization/motor-kvpool/team-{n}" for n in range(1, 6)}


def test_generated_fleet_table(generated_fleet):
    assert fleet_report.table(generated_fleet) == [
        "STACK     CLUSTER  ROLE      NAMESPACE  BACKEND   READS   ALLOWED CONSUMERS            KEY               PREFILL              DECODE              POOL MEMORY",
        "hub       default  owner     hub        memcache  -       team-1,team-2,team-4,team-5  87b40f557eba6d0d  1x1 pod, 2GiB each   1x1 pod, 2GiB each  4GiB",
        "hub-twin  default  owner     hub        memcache  -       -                            87b40f557eba6d0d  1x1 pod, 2GiB each   1x1 pod, 2GiB each  4GiB",
        "team-1    default  consumer  team-1     memcache  hub     -                            87b40f557eba6d0d  2x2 pods, 2GiB each  1x1 pod, 2GiB each  10GiB",
        "team-2    default  consumer  team-2     memcache  hub     -                            ead711650c547ccc  1x1 pod, 2GiB each   1x1 pod, 2GiB each  4GiB",
        "team-3    default  consumer  team-3     memcache  hub     -                            87b40f557eba6d0d  1x1 pod, 2GiB each   1x1 pod, 2GiB each  4GiB",
        "team-4    default  consumer  team-4     memcache  gone    -                            87b40f557eba6d0d  1x1 pod, ? each      1x1 pod, ? each     ?",
        "team-5    default  consumer  team-5     memcache  team-1  -                            87b40f557eba6d0d  1x1 pod, ? each      1x1 pod, ? each     ?",
    ]


def test_generated_fleet_problems(generated_fleet):
    problems = [(p.kind, p.consumer, p.owner) for p in generated_fleet.problems]
    assert problems == [
        ("not-admitted", TEAM[3], HUB),
        ("compatibility", TEAM[2], HUB),
        ("no-store", TEAM[5], TEAM[1]),
        ("missing-stack", TEAM[4], GONE),
        ("shared-namespace", "organization/motor-kvpool/hub-twin", HUB),
    ]
    messages = {p.kind: p.message for p in generated_fleet.problems}
    assert messages["not-admitted"] == (
        f"kv_cache_store_config.target_stack: {HUB} does not allow namespace 'team-3' (kv_store.allowed_consumers: "
        f"['team-1', 'team-2', 'team-4', 'team-5']); add it to {HUB}'s kv_cache_store_config.allowed_consumers and "
        f"run `pulumi up` there, so that its NetworkPolicy admits {TEAM[3]}'s engines."
    )
    assert messages["compatibility"] == (
        f"motor_engine_prefill_config.engine_config.block_size (or block-size): {TEAM[2]} has 64 but {HUB} has 128 "
        f"(kv_store.compatibility.block_size); cached blocks are only shared between services that agree on it."
    )
    assert messages["missing-stack"] == (
        f"kv_cache_store_config.target_stack: {TEAM[4]} reads the KV store of {GONE}, which is not a stack of the "
        f"fleet; point target_stack at a stack that owns a store, or create {GONE}."
    )
    assert messages["no-store"].startswith(
        f"kv_cache_store_config.target_stack: stack {TEAM[1]} has no `kv_store` output, so {TEAM[5]} has no store"
    )
    assert messages["shared-namespace"] == (
        f"motor_deploy_config.job_id: {HUB} and organization/motor-kvpool/hub-twin both deploy into namespace 'hub' "
        "of cluster 'default': both create the Namespace and their objects have the same names (ConfigMap "
        "motor-config, the controller, the coordinator, their Services), so the second `pulumi up` is refused or "
        "takes them over. Set motor_deploy_config.job_id: hub-twin in hub-twin, or let it read the other's KV pool "
        "with kv_cache_store_config.target_stack."
    )
    # The consumers whose programs refuse to run render nothing: their clashes come from their settings, said so.
    assert [(stack.name, stack.unrendered.split(" (")[0]) for stack in generated_fleet.stacks if stack.unrendered] == [
        (f"team-{n}", "its program refuses to run") for n in (2, 3, 4, 5)
    ]


def test_generated_fleet_pool_counts_only_consumers_that_pass(generated_fleet):
    hub = next(stack for stack in generated_fleet.stacks if stack.name == "hub")
    # Each engine pod's LocalService memory is its stack's dram_size, 2GB (Motor splits it over the pod's ranks): hub's
    # 2 pods (4GiB), team-1's 2x2 prefill pods of one rank (TP 2 over 2 pods) and 1 decode pod of two (10GiB); team-2
    # and team-3 fail their checks.
    assert generated_fleet.pool_bytes(hub) == 14 * 2**30
    assert [c.name for c in generated_fleet.consumers_of(HUB)] == ["team-1", "team-2", "team-3"]
    assert fleet_report.pool_lines(generated_fleet) == [
        "Pools:",
        "  hub (memcache, namespace hub): 14GiB in 7 engine pods; consumers: team-1, team-2, team-3 (team-2, team-3 "
        "not counted: see problems)",
        "  hub-twin (memcache, namespace hub): 4GiB in 2 engine pods; consumers: none",
    ]


def test_generated_fleet_sizes_a_pool_for_its_counted_consumers_writers(generated_fleet):
    """hub's pool: its own prefill and team-1's two (team-2 and team-3 fail their checks), 7 pods of 2GiB."""
    rows = {stack.name: stack.sizing for stack in generated_fleet.stacks}
    assert rows["hub"][2:5] == (
        "1 prefill x 1500 tok/s, 2 prefill x 1500 tok/s",
        "147456 (table row Qwen3-8B (from /mnt/weight/qwen3_8B))",
        "2 GiB x 7 engine pod's LocalServices = 101888 tokens in 796 blocks of 128 (33962 per writing instance)",
    )
    assert rows["hub"][5] == "13.59 s (above the 10 s minimum)"  # 0.6 x 14 GiB / (3 x 1500 x 147456 bytes/s)
    assert rows["hub-twin"][4].startswith("2 GiB x 2 engine pod's LocalServices")
    assert rows["team-1"][2] == f"into {HUB}'s pool: sized with that stack"


def test_fleet_command_exits_1_and_prints_json(generated_project, capsys):
    assert main(["fleet", "--project-dir", str(generated_project), "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [(p["kind"], p["consumer"].rsplit("/", 1)[1]) for p in document["problems"]] == [
        ("not-admitted", "team-3"), ("compatibility", "team-2"), ("no-store", "team-5"), ("missing-stack", "team-4"),
        ("shared-namespace", "hub-twin"),
    ]
    team4 = next(s for s in document["stacks"] if s["stack"] == TEAM[4])
    assert team4["engines"][0]["pool_bytes_per_pod"] is None and team4["pool_bytes"] is None


def test_pictures_name_every_stack_and_edge(generated_fleet, tmp_path):
    svg = ElementTree.parse(render(generated_fleet, tmp_path / "fleet.svg")).getroot()
    titles = {g.get("class"): set() for g in svg.iter(f"{SVG}g")}
    for group in svg.iter(f"{SVG}g"):
        title = group.find(f"{SVG}title")
        if title is not None:
            titles.setdefault(group.get("class"), set()).add(title.text)
    assert titles["node"] == {"hub", "hub-twin", "team-1", "team-2", "team-3", "team-4", "team-5", "gone"}
    assert titles["edge"] == {"team-1->hub", "team-2->hub", "team-3->hub", "team-4->gone", "team-5->team-1",
                              "hub-twin->hub"}
    edge_labels = {group.find(f"{SVG}title").text: [t.text for t in group.iter(f"{SVG}text")]
                   for group in svg.iter(f"{SVG}g") if group.get("class") == "edge"}
    assert edge_labels["team-1->hub"] == ["reads"]
    assert edge_labels["team-3->hub"] == ["not-admitted"]
    assert edge_labels["hub-twin->hub"] == ["one namespace"]
    png = render(generated_fleet, tmp_path / "fleet.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png[12:16] == b"IHDR"
    width, height = struct.unpack(">II", png[16:24])
    assert width > 300 and height > 300


def test_picture_needs_a_known_format(generated_fleet, tmp_path):
    with pytest.raises(PictureError, match=r"fleet\.jpg: name the picture's file \.svg or \.png"):
        render(generated_fleet, tmp_path / "fleet.jpg")


def test_fleet_from_previews_equals_the_fleet_from_the_program(generated_project, generated_fleet, tmp_path):
    with pytest.raises(MissingPreviewError, match=rf"no {tmp_path}/hub/outputs\.json \(run python -m kvpool "
                                                  rf"preview --stack hub --out {tmp_path}\)"):
        offline_facts(generated_project, tmp_path)
    for stack in ("hub", "hub-twin", "team-1"):  # the others' previews are refused, as their programs are
        preview(generated_project, stack, tmp_path)
    from_previews = build_fleet(offline_facts(generated_project, tmp_path))
    assert from_previews.problems == generated_fleet.problems
    # Without a preview, a stack's clashes are checked on its settings, as when its program refuses to run.
    assert [(stack.name, stack.unrendered) for stack in from_previews.stacks if stack.unrendered] == [
        (f"team-{n}", f"no {tmp_path}/team-{n}/manifests (python -m kvpool preview --stack team-{n} --out {tmp_path} "
                      "writes it)") for n in (2, 3, 4, 5)
    ]
    assert ([dataclasses.replace(stack, unrendered=None) for stack in from_previews.stacks]
            == [dataclasses.replace(stack, unrendered=None) for stack in generated_fleet.stacks])


# --- the destroy guard ---------------------------------------------------------------------------------------


def _make_destroy(project: Path, stack: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess, str]:
    """`make destroy` with a stand-in `pulumi` first on PATH that records its arguments."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    record = tmp_path / "pulumi-called"
    (bin_dir / "pulumi").write_text(f'#!/bin/sh\necho "$@" > {record}\n')
    (bin_dir / "pulumi").chmod(0o755)
    (project / "Makefile").unlink(missing_ok=True)
    (project / "Makefile").symlink_to(PROJECT_DIR / "Makefile")
    (project / "kvpool").unlink(missing_ok=True)
    (project / "kvpool").symlink_to(PROJECT_DIR / "kvpool")
    result = subprocess.run(
        ["make", "--no-print-directory", "destroy", f"STACK={stack}", f"VENV={PROJECT_DIR / 'venv'}"],
        check=False, cwd=project, capture_output=True, text=True, timeout=300,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )
    return result, record.read_text() if record.exists() else ""


def test_make_destroy_refuses_an_owner_that_consumers_read(generated_project, tmp_path):
    result, pulumi_args = _make_destroy(generated_project, "hub", tmp_path)
    assert result.returncode != 0 and pulumi_args == ""
    assert "pulumi destroy of hub: refused\nProblems: 3\n" in result.stderr
    assert (f"  [destroy] team-3 -> hub: `pulumi destroy` of {HUB} would leave {TEAM[3]} without a KV pool: its "
            f"kv_cache_store_config.target_stack reads hub's store; point team-3 at another store or destroy it "
            f"first.") in result.stderr


def test_make_destroy_runs_pulumi_for_a_stack_nobody_reads(generated_project, tmp_path):
    result, pulumi_args = _make_destroy(generated_project, "team-2", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "pulumi destroy of team-2: no stack reads its KV store" in result.stdout
    assert pulumi_args == "destroy --stack team-2\n"


def test_the_programs_run_in_a_pool_give_the_facts_of_one_process(generated_project):
    # A consumer of a consumer (team-5), one the owner refused (team-3), one whose owner is missing (team-4).
    assert offline_facts(generated_project, jobs=2) == offline_facts(generated_project, jobs=1)


def test_an_error_crosses_the_pool_as_its_own_class_and_message():
    error = SettingsError(["motor_deploy_config.p_pod_npu_num: required; add it"], "stack 'svc'", {"a": 1})
    crossed = pickle.loads(pickle.dumps(error))
    assert (type(crossed), str(crossed), crossed.problems, crossed.fixes) == (
        SettingsError, "stack 'svc': 1 problem\n  - motor_deploy_config.p_pod_npu_num: required; add it",
        ["motor_deploy_config.p_pod_npu_num: required; add it"], {"a": 1})


# --- choosing stacks and sources (the backend source itself runs against the real CLI: tests/e2e/) ------------


def test_only_the_stacks_named(generated_project, capsys):
    # team-5 reads team-1, which reads the hub left out: the fleet of the two names the missing hub.
    assert main(["fleet", "--project-dir", str(generated_project), "--stack", "team-5", "--stack", "team-1"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[1:3]] == ["team-1", "team-5"]
    problems = out.index("Problems: 2")
    assert out[problems:problems + 3] == [
        "Problems: 2",
        "  [no-store] team-5 -> team-1: " + next(p.message for p in build_fleet(offline_facts(generated_project))
                                                 .problems if p.kind == "no-store"),
        f"  [missing-stack] team-1 -> hub: kv_cache_store_config.target_stack: {TEAM[1]} reads the KV store of {HUB}, "
        f"which is not a stack of the fleet; point target_stack at a stack that owns a store, or create {HUB}.",
    ]


def test_a_stack_named_without_a_stack_file_is_refused(generated_project, capsys):
    assert main(["fleet", "--project-dir", str(generated_project), "--stack", "team-9"]) == 1
    assert "Pulumi.team-9.yaml" in capsys.readouterr().err


def test_previews_are_the_offline_sources(capsys):
    assert main(["fleet", "--source", "backend", "--previews", "out"]) == 1
    assert capsys.readouterr().err == (
        "error: --previews: the backend source reads each stack's outputs from the backend; drop --previews or "
        "--source backend\n")


@pytest.mark.parametrize(("name", "url", "reference"), [
    ("service-a", None, "organization/motor-kvpool/service-a"),  # a file backend: no page, one organization
    ("service-a", "https://app.pulumi.com/acme/motor-kvpool/service-a", "acme/motor-kvpool/service-a"),
    ("team/service-a", "https://app.pulumi.com/team/motor-kvpool/service-a", "team/motor-kvpool/service-a"),
])
def test_a_backend_stack_is_referenced_as_target_stack_names_it(name, url, reference):
    assert stack_reference(StackSummary(name, current=False, url=url), "motor-kvpool") == reference


@pytest.mark.parametrize(("store", "expected"), [
    ({"backend": "mooncake", "store_mode": "standalone", "global_segment_size": "8GB",
      "eviction_high_watermark_ratio": 0.7, "eviction_ratio": 0.2}, (8 * 2**30, False)),
    ({"backend": "memcache", "local_service_mode": "standalone", "dram_size": "40GB"}, (40 * 2**30, False)),
    ({"backend": "memcache", "local_service_mode": "standalone"}, (None, False)),  # Motor takes 80 % of free memory
])
def test_a_standalone_store_process_holds_the_stacks_own_size_once_per_pod(store, expected):
    """Motor's node manager sizes the standalone store (Mooncake) or LocalService (MemCache) of each engine pod from
    the stack's own user_config.json, not from the client file, which says 0 there."""
    service = mooncake_pool() if store["backend"] == "mooncake" else memcache_pool()
    service["kv_cache_store_config"] = store
    settings = load_from_pulumi_config(service, "svc")
    endpoint = KVStoreEndpoint(
        backend=store["backend"], host="h", port=50088, metrics_port=9003, namespace="svc",
        deploy_mode="multi_deployment", standalone_store=store["backend"] == "mooncake",
        engine_env={"MMC_LOCAL_SERVICE_MODE": "standalone"} if store["backend"] == "memcache" else {},
    )
    assert pool_bytes_per_process(endpoint, settings) == expected
