"""What one cluster allocates once, across the stacks that deploy to it (issue 34): the example stacks share one
cluster without a clash; a pair as two imported Motor examples are (deploy.py's NodePorts, job_id mindie-motor) is
listed by `kvpool fleet` and refused by `kvpool preview` of either, naming both stacks, the field and a free value;
two Yuanrong owners meet on their nodes' worker port; stacks of different clusters never clash."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kvpool.cli.commands.cli import main
from kvpool.cli.engine.stack_config import load_stack_config, stack_names
from kvpool.cli.fleet import report as fleet_report
from kvpool.cli.fleet.clashes import (
    Footprint,
    HostPort,
    clashes,
    footprint_from_settings,
)
from kvpool.cli.fleet.model import build_fleet
from kvpool.cli.fleet.offline import (
    check_cluster_clashes,
    offline_facts,
)
from kvpool.cli.views.importer import import_pair
from kvpool.errors import SettingsError
from kvpool.settings.deploy import DEPLOY_PY_NODE_PORTS
from kvpool.settings.from_stack import settings_from_config
from tests.program_runs import PROJECT_DIR, project_with_stacks, stack_values
from tests.service_configs import plain_pd
from tests.test_examples import FILL, project_copy
from tests.test_importer import NODE_PORT_NOTE, write_pair

ALPHA, BETA = "organization/motor-kvpool/alpha", "organization/motor-kvpool/beta"


def _as_imported() -> dict:
    """A stack as `kvpool import` of a Motor example writes it when the example is left as it is."""
    values = stack_values("dev")
    values["motor_deploy_config"].update(DEPLOY_PY_NODE_PORTS, job_id="mindie-motor")
    return values


def _node_port_message(second: str, first: str, key: str, port: int, free: int) -> str:
    return (
        f"motor_deploy_config.{key}: {second} asks for NodePort {port}, which {first} holds (motor_deploy_config."
        f"{key}) in cluster 'default'; the API server allocates a NodePort once per cluster and refuses the second "
        f"Service (`provided port is already allocated`). Write {free} (the lowest NodePort no stack of the cluster "
        "uses), or leave it unset for a ClusterIP Service."
    )


def _namespace_message(first: str, second: str, free: str) -> str:
    return (
        f"motor_deploy_config.job_id: {first} and {second} both deploy into namespace 'mindie-motor' of cluster "
        "'default': both create the Namespace and their objects have the same names (ConfigMap motor-config, the "
        "controller, the coordinator, their Services), so the second `pulumi up` is refused or takes them over. Set "
        f"motor_deploy_config.job_id: {free} in {free}, or let it read the other's KV pool with "
        "kv_cache_store_config.target_stack."
    )


@pytest.fixture(scope="module")
def pair_project(tmp_path_factory) -> Path:
    other_cluster = _as_imported()
    other_cluster["cluster"] = "staging"
    return project_with_stacks(tmp_path_factory.mktemp("pair"), {
        "alpha": _as_imported(), "beta": _as_imported(), "gamma": other_cluster,
    })


def test_the_example_stacks_share_one_cluster_without_a_clash() -> None:
    """Each example stack's settings, as `kvpool preview` reads them (tests/test_fleet.py: the rendered objects,
    as `kvpool fleet` reads them, show no problem either)."""
    footprints = []
    for stack in stack_names(PROJECT_DIR):
        config = load_stack_config(PROJECT_DIR, stack)
        settings = settings_from_config(config.values, set(config.secret_keys), stack)
        assert settings.cluster == "default"
        footprints.append(footprint_from_settings(stack, settings))
    assert clashes(footprints) == []
    check_cluster_clashes(PROJECT_DIR, load_stack_config(PROJECT_DIR, "service-b"))


def test_the_fleet_lists_each_clash_of_the_pair(pair_project: Path) -> None:
    fleet = build_fleet(offline_facts(pair_project))
    assert [(p.kind, p.consumer, p.owner, p.message) for p in fleet.problems] == [
        ("node-port", BETA, ALPHA, _node_port_message(BETA, ALPHA, "coordinator_infer_node_port", 31015, 30000)),
        ("node-port", BETA, ALPHA, _node_port_message(BETA, ALPHA, "coordinator_obs_node_port", 31017, 30001)),
        ("node-port", BETA, ALPHA, _node_port_message(BETA, ALPHA, "controller_observability_node_port", 31027, 30002)),
        ("shared-namespace", BETA, ALPHA, _namespace_message(ALPHA, BETA, "beta")),
    ]  # gamma, the same stack in cluster staging, clashes with neither
    assert [stack.cluster for stack in fleet.stacks] == ["default", "default", "staging"]
    assert not any(stack.unrendered for stack in fleet.stacks)  # checked on what each preview renders


def test_the_fleet_command_exits_1_listing_them(pair_project: Path, capsys) -> None:
    assert main(["fleet", "--project-dir", str(pair_project)]) == 1
    out = capsys.readouterr().out.splitlines()
    problems = out.index("Problems: 4")
    assert out[problems + 1] == "  [node-port] beta -> alpha: " + _node_port_message(
        BETA, ALPHA, "coordinator_infer_node_port", 31015, 30000)
    assert out[problems + 4].startswith("  [shared-namespace] beta -> alpha: motor_deploy_config.job_id: ")


@pytest.mark.parametrize(("stack", "other"), [("beta", "alpha"), ("alpha", "beta")])
def test_the_preview_of_either_is_refused_naming_the_other(pair_project: Path, tmp_path: Path, stack: str,
                                                           other: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "kvpool", "preview", "--stack", stack, "--project-dir", str(pair_project),
         "--no-policy", "--out", str(tmp_path)],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=300,
    )
    mine, theirs = f"organization/motor-kvpool/{stack}", f"organization/motor-kvpool/{other}"
    assert result.returncode == 1
    assert result.stderr == "\n".join([
        f"error: stack {stack} asks cluster 'default' for what stack {other} of the project holds there (both deploy "
        "to it: top-level setting `cluster`); nothing written:",
        "  [node-port] " + _node_port_message(mine, theirs, "coordinator_infer_node_port", 31015, 30000),
        "  [node-port] " + _node_port_message(mine, theirs, "coordinator_obs_node_port", 31017, 30001),
        "  [node-port] " + _node_port_message(mine, theirs, "controller_observability_node_port", 31027, 30002),
        "  [shared-namespace] " + _namespace_message(theirs, mine, stack),
        "",
    ])
    assert not (tmp_path / stack).exists()


def test_a_broken_stack_file_elsewhere_is_named_and_blocks_no_other_stack(tmp_path: Path) -> None:
    broken = stack_values("dev")
    broken["motor_deploy_config"]["p_pod_npu_num"] = 0
    project = project_with_stacks(tmp_path, {"alpha": stack_values("dev"), "broken": broken})
    assert check_cluster_clashes(project, load_stack_config(project, "alpha")) == [
        f"stack broken ({project / 'stacks' / 'Pulumi.broken.yaml'}) was not checked for what its cluster allocates "
        "once (NodePorts, namespaces): its stack file is refused: stack 'broken': 2 problems, the first: "
        "motor_deploy_config.p_pod_npu_num: 0 is below 1, the least this field takes; write 1 or more"
    ]


def test_two_yuanrong_owners_meet_on_their_nodes_worker_port(tmp_path: Path) -> None:
    project = project_with_stacks(tmp_path, {"yr-1": stack_values("yuanrong"), "yr-2": stack_values("yuanrong")})
    fleet = build_fleet(offline_facts(project))
    assert fleet_report.problem_lines(fleet.problems) == [
        "Problems: 1",
        "  [host-port] yr-2 -> yr-1: kv_cache_store_config.port: organization/motor-kvpool/yr-2 binds port 31501 on "
        "its nodes, which organization/motor-kvpool/yr-1 binds too (kv_cache_store_config.port) in cluster "
        "'default', and their nodeSelectors do not keep them apart (affinity and taints are not read: checked "
        "conservatively); the second pod cannot start on a shared node. Write 31502, or give one of them a "
        "nodeSelector the other's nodes do not carry.",
    ]


# --- footprints: the rules on their own ----------------------------------------------------------------------


def _footprint(name: str, namespace: str, **fields) -> Footprint:
    return Footprint(name, fields.pop("cluster", "default"), namespace, True, fields.pop("node_ports", {}), **fields)


def test_disjoint_node_selectors_keep_host_ports_apart() -> None:
    worker = "kv_cache_store_config.port"
    a = _footprint("a", "a", host_ports=(HostPort(31501, worker, {"pool": "x"}),))
    b = _footprint("b", "b", host_ports=(HostPort(31501, worker, {"pool": "y"}),))
    c = _footprint("c", "c", host_ports=(HostPort(31501, worker, {}),))  # no selector: any node, a's among them
    assert [(clash.first, clash.second, clash.free) for clash in clashes([a, b, c])] == [("a", "c", 31502),
                                                                                       ("b", "c", 31503)]


def test_a_host_port_another_stack_asks_for_as_node_port() -> None:
    a = _footprint("a", "a", node_ports={31501: "motor_deploy_config.coordinator_infer_node_port"})
    b = _footprint("b", "b", host_ports=(HostPort(31501, "kv_cache_store_config.port", {"pool": "y"}),))
    [clash] = clashes([a, b])
    assert (clash.kind, clash.first, clash.second, clash.field, clash.value, clash.free) == (
        "host-port", "a", "b", "kv_cache_store_config.port", 31501, 31502)
    assert "kube-proxy takes that port's traffic on every node" in clash.message


def test_free_node_ports_skip_every_port_of_the_cluster_and_each_other() -> None:
    infer = "motor_deploy_config.coordinator_infer_node_port"
    a = _footprint("a", "a", node_ports={30000: infer, 30002: "motor_deploy_config.coordinator_obs_node_port"})
    b = _footprint("b", "b", node_ports={30000: infer}, host_ports=(HostPort(30001, "x", {"pool": "z"}),))
    c = _footprint("c", "c", node_ports={30000: infer})
    assert [(clash.first, clash.second, clash.free) for clash in clashes([a, b, c])] == [
        ("a", "b", 30003), ("a", "c", 30004), ("b", "c", 30005)]


def test_an_object_outside_two_different_namespaces_is_named_as_our_bug() -> None:
    role = ("kube-system", "Role", "reader")
    a = _footprint("org/p/a", "a", objects=frozenset({role}))
    b = _footprint("org/p/b", "b", objects=frozenset({role}))
    [clash] = clashes([a, b])
    assert clash.message == (
        "Role kube-system/reader: org/p/a and org/p/b both render it in cluster 'default' though their namespaces "
        "differ ('a', 'b'); the second `pulumi up` is refused or takes it over. motor-kvpool names every object "
        "outside a stack's namespace after that namespace, so this is its bug: report it; until it is fixed, deploy "
        "b to another cluster (top-level setting cluster)."
    )


def test_stacks_of_other_clusters_never_clash() -> None:
    infer = {31015: "motor_deploy_config.coordinator_infer_node_port"}
    assert clashes([_footprint("a", "ns", node_ports=infer), _footprint("b", "ns", node_ports=infer, cluster="lab")]) == []


def test_the_cluster_stays_out_of_motors_user_config() -> None:
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"] = "lab-1"
    texts = {f"motor-kvpool:{key}": value if isinstance(value, str) else json.dumps(value)
             for key, value in values.items()}
    settings = settings_from_config(texts, set(), "dev")
    assert settings.cluster == "lab-1" and "cluster" not in settings.user_config()


# --- kvpool import picks free values -------------------------------------------------------------------------


def test_a_second_deploy_py_pair_imported_gets_free_node_ports_and_namespace(tmp_path: Path) -> None:
    """A deploy.py user's pair keeps its explicit NodePorts and job_id where nothing in the project holds them; the
    same pair imported again gets the free values the clashes name, each said in a note, and then previews clean."""
    project = project_copy(tmp_path)
    service = plain_pd()
    service["motor_deploy_config"].update(DEPLOY_PY_NODE_PORTS, job_id="mindie-motor")
    user_config, env = write_pair(tmp_path / "src", service)
    _, first = import_pair(user_config, env, "first", project / "stacks")
    assert not [note for note in first.notes if "free value" in note] and NODE_PORT_NOTE not in first.notes
    target, second = import_pair(user_config, env, "second", project / "stacks")
    assert [note for note in second.notes if "free value" in note] == [
        "motor_deploy_config.coordinator_infer_node_port 31015 became 30000: stack first of the project holds 31015 "
        "in cluster 'default' (node-port); a free value picked",
        "motor_deploy_config.coordinator_obs_node_port 31017 became 30001: stack first of the project holds 31017 in "
        "cluster 'default' (node-port); a free value picked",
        "motor_deploy_config.controller_observability_node_port 31027 became 30002: stack first of the project holds "
        "31027 in cluster 'default' (node-port); a free value picked",
        "motor_deploy_config.job_id 'mindie-motor' became 'second': stack first of the project holds 'mindie-motor' in "
        "cluster 'default' (shared-namespace); a free value picked",
    ]
    written = yaml.safe_load(target.read_text())["config"]["motor-kvpool:motor_deploy_config"]
    assert (written["job_id"], written["coordinator_infer_node_port"]) == ("second", 30000)
    for stack in ("first", "second"):
        check_cluster_clashes(project, load_stack_config(project, stack))


def test_two_of_motors_examples_imported_as_they_are_share_one_cluster(motor_examples: Path, tmp_path: Path) -> None:
    """Every Motor example carries deploy.py's job_id mindie-motor (and no NodePort)."""
    project = project_copy(tmp_path)
    folder = motor_examples / "vllm"
    for stack in ("first", "second"):
        _, conversion = import_pair(folder / "user_config.json", folder / "env.json", stack, project / "stacks", FILL)
    assert NODE_PORT_NOTE in conversion.notes  # deploy.py's templates served NodePorts; the stack asks for none
    assert conversion.notes[-1] == (
        "motor_deploy_config.job_id 'mindie-motor' became 'second': stack first of the project holds 'mindie-motor' "
        "in cluster 'default' (shared-namespace); a free value picked"
    )
    assert build_fleet(offline_facts(project)).problems == ()


def test_a_cluster_name_that_is_not_one_line_is_refused_naming_the_key() -> None:
    values = stack_values("dev")
    values["cluster"] = "prod cluster"
    texts = {f"motor-kvpool:{key}": value if isinstance(value, str) else json.dumps(value) for key, value in values.items()}
    with pytest.raises(SettingsError) as raised:
        settings_from_config(texts, set(), "dev")
    assert raised.value.problems == [
        "cluster: 'prod cluster' is not a cluster name: one line of letters, digits and -_.:@/, starting with a letter "
        "or digit, e.g. your kubeconfig context's name"
    ]
