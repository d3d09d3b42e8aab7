"""KVStore, memcache backend: MetaService command, conf, ports, POD_IP, and the engines' LocalService conf."""

from __future__ import annotations

import pytest

from kvpool.cli.engine.mock_engine import ProgramError
from tests.program_runs import env_of, render, stack_values

FQDN = "mindie-motor-kvs-master.svc.svc.cluster.local"


def memcache(**store) -> dict:
    values = stack_values("dev")
    values["kv_cache_store_config"].update(store)
    return values


def test_meta_service_binds_pod_ip_on_the_configured_ports():
    rendered = render(memcache(port=51000, config_store_port=51001, metrics_port=51002))
    meta_conf = rendered.get("ConfigMap", "mindie-motor-kv-store-meta-conf")["data"]["mmc-meta.conf.template"]
    assert meta_conf == (
        "ock.mmc.meta_service_url = tcp://${POD_IP}:51000\n"
        "ock.mmc.meta_service.config_store_url = tcp://${POD_IP}:51001\n"
        "ock.mmc.meta_service.metrics_url = http://${POD_IP}:51002\n"
        "ock.mmc.meta.ha.enable = false\n"
        "ock.mmc.log_level = info\n"
        "ock.mmc.log_output_target = screen\n"
    )
    meta = rendered.container("Deployment", "mindie-motor-kv-store", "memcache-meta-service")
    assert meta["command"] == [
        "/bin/sh", "-c",
        'sed "s|\\${POD_IP}|${POD_IP}|g" /etc/memcache/mmc-meta.conf.template > /tmp/mmc-meta.conf && '
        "exec python3 -c 'from memcache_hybrid import MetaService; MetaService.main()'",
    ]
    assert env_of(meta) == {
        "POD_IP": {"fieldRef": {"fieldPath": "status.podIP"}},  # seed FAQ 4
        "MMC_META_CONFIG_PATH": "/tmp/mmc-meta.conf",
    }
    assert [(p["name"], p["containerPort"]) for p in meta["ports"]] == [
        ("meta", 51000), ("config-store", 51001), ("metrics", 51002)
    ]
    assert meta["readinessProbe"] == {"tcpSocket": {"port": "meta"}, "periodSeconds": 5}
    assert meta["livenessProbe"] == {"tcpSocket": {"port": "metrics"}, "periodSeconds": 10, "failureThreshold": 3}
    service_ports = rendered.get("Service", "mindie-motor-kvs-master")["spec"]["ports"]
    assert [(p["name"], p["port"]) for p in service_ports] == [("meta", 51000), ("config-store", 51001), ("metrics", 51002)]


def test_local_service_conf_carries_the_configured_ports_not_deploy_pys_defaults():
    rendered = render(memcache(port=51000, config_store_port=51001, metrics_port=51002))
    conf = rendered.get("ConfigMap", "motor-config")["data"]["kv_store_backends.memcache.mmc-local.conf"]
    assert conf.splitlines()[:2] == [
        f"ock.mmc.meta_service_url = tcp://{FQDN}:51000",
        f"ock.mmc.local_service.config_store_url = tcp://{FQDN}:51001",
    ]
    assert "ock.mmc.local_service.protocol = device_rdma" in conf  # 800I_A2


def test_engines_read_the_writable_copy_motors_scripts_make_of_the_conf():
    """Motor's sync_mmc_local_config copies motor-config's conf to CONFIG_PATH, a real and writable file that its
    node manager rewrites in place (tests/conformance runs both on what is rendered here)."""
    rendered = render(memcache())
    engine = rendered.container("Deployment", "vllm-d0", "vllm")
    env = env_of(engine)
    assert (env["KVS_MASTER_SERVICE"], env["KV_STORE_BACKEND"]) == (FQDN, "memcache")
    assert env["MMC_LOCAL_CONFIG_PATH"] == "/usr/local/Ascend/pyMotor/conf/mmc-local.conf"
    assert env["MMC_LOCAL_SERVICE_MODE"] == "inprocess"
    assert [m for m in engine["volumeMounts"] if m["name"] == "kv-client"] == []
    assert ("ConfigMap", "mindie-motor-kv-client") not in rendered.objects


def test_standalone_local_service_on_a3(tmp_path):
    values = memcache()
    values["motor_deploy_config"]["hardware_type"] = "800I_A3"
    rendered = render(values)
    conf = rendered.get("ConfigMap", "motor-config")["data"]["kv_store_backends.memcache.mmc-local.conf"]
    assert "ock.mmc.local_service.protocol = device_sdma" in conf
    assert "ock.mmc.local_service.dram.size = 0GB" in conf
    assert env_of(rendered.container("Deployment", "vllm-p0", "vllm"))["MMC_LOCAL_SERVICE_MODE"] == "standalone"


FIXTURES = "tests/fixtures/memcache"


def test_users_local_conf_is_merged_and_our_keys_win():
    conf = f"{FIXTURES}/tuned-mmc-local.conf"
    rendered = render(memcache(local_service_conf=conf))
    text = rendered.get("ConfigMap", "motor-config")["data"]["kv_store_backends.memcache.mmc-local.conf"]
    assert "ock.mmc.local_service.dram.size = 40GB" in text
    assert text.count("ock.mmc.meta_service_url") == 1
    # seed 000 (line 142) keeps the DRAM size in this file, but Motor 8919e55's node manager rewrites it
    assert [line for line in rendered.run.log_messages if "dram.size" in line] == [
        f"warning: kv_cache_store_config.local_service_conf: ock.mmc.local_service.dram.size = 40GB in {conf} does not "
        "hold: Motor's node manager rewrites it when the pod starts (LocalService.prepare: dram_size split over the "
        "pod's ranks, else a share of 80 % of the node's free memory); set kv_cache_store_config.dram_size, per "
        "engine pod, instead"
    ]


def test_users_local_conf_that_contradicts_the_store_is_refused():
    conf = f"{FIXTURES}/contradicting-mmc-local.conf"
    with pytest.raises(ProgramError) as caught:
        render(memcache(local_service_conf=conf))
    assert str(caught.value) == (
        f"kv_cache_store_config.local_service_conf: ock.mmc.meta_service_url in {conf} differs from the store's "
        f"'tcp://{FQDN}:50088'. Remove these keys from the file: motor-kvpool sets them from the store's Service and "
        f"ports."
    )


def test_a_malformed_local_conf_is_refused_without_quoting_the_file():
    conf = f"{FIXTURES}/malformed-mmc-local.conf"
    with pytest.raises(ProgramError) as caught:
        render(memcache(local_service_conf=conf))
    assert str(caught.value) == (
        f"kv_cache_store_config.local_service_conf: {conf}:2: expected `key = value` with a MemCache option name"
    )


@pytest.mark.parametrize("path", ["/proc/self/environ", "/etc/passwd", "../../etc/passwd", "tests/../../x.conf"])
def test_a_local_conf_outside_the_project_is_refused(path):
    with pytest.raises(ProgramError) as caught:
        render(memcache(local_service_conf=path))
    message = str(caught.value)
    assert message.startswith(f"kv_cache_store_config.local_service_conf: {path} resolves to "), message
    assert ", outside the project folder " in message and "root:" not in message


def test_a_symlink_in_the_project_that_leads_out_is_refused(tmp_path):
    from tests.program_runs import PROJECT_DIR

    relative = f"out/hostile-{tmp_path.name}.conf"  # out/ is git-ignored; the name is this run's own
    link = PROJECT_DIR / relative
    link.parent.mkdir(exist_ok=True)
    link.symlink_to("/proc/self/environ")
    try:
        with pytest.raises(ProgramError) as caught:
            render(memcache(local_service_conf=relative))
    finally:
        link.unlink()
    assert str(caught.value).startswith(f"kv_cache_store_config.local_service_conf: {relative} resolves to /proc/")
