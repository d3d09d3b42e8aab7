"""KVStore, mooncake backend: the exact master flags, ports, probes, client config and the standalone store's pod."""

from __future__ import annotations

import json

from tests.program_runs import env_of, render, stack_values

FQDN = "mindie-motor-kvs-master.svc.svc.cluster.local"


def mooncake(**store) -> dict:
    values = stack_values("mooncake-layerwise")
    values["motor_deploy_config"]["deploy_mode"] = "multi_deployment"
    values["kv_cache_store_config"].update(store)
    return values


def test_master_flags_come_from_the_config():
    rendered = render(mooncake(port=50100, metrics_port=9100, eviction_high_watermark_ratio=0.8, eviction_ratio=0.15,
                              default_kv_lease_ttl=12000, client_ttl=30))
    master = rendered.container("Deployment", "mindie-motor-kv-store", "mooncake-master")
    assert master["command"] == ["mooncake_master"]
    assert master["args"] == [
        "--rpc_port=50100",
        "--rpc_address=$(POD_IP)",
        "--metrics_port=9100",
        "--eviction_high_watermark_ratio=0.8",
        "--eviction_ratio=0.15",
        "--default_kv_lease_ttl=12000",
        "--client_ttl=30",
        "--logtostderr",
    ]
    assert master["ports"] == [
        {"name": "rpc", "containerPort": 50100, "protocol": "TCP"},
        {"name": "metrics", "containerPort": 9100, "protocol": "TCP"},
    ]
    assert master["readinessProbe"] == {"tcpSocket": {"port": "rpc"}, "periodSeconds": 5}
    assert master["livenessProbe"] == {
        "httpGet": {"path": "/health", "port": "metrics"}, "periodSeconds": 10, "failureThreshold": 3
    }
    assert master["resources"] == {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}}
    assert master["env"] == [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}]


def test_service_keeps_deploy_pys_names_and_ports():
    rendered = render(mooncake())
    service = rendered.get("Service", "mindie-motor-kvs-master")
    assert service["spec"] == {
        "type": "ClusterIP",
        "selector": {"app": "mindie-motor-kv-store"},
        "ports": [
            {"name": "rpc", "port": 50088, "targetPort": 50088, "protocol": "TCP"},
            {"name": "metrics", "port": 9003, "targetPort": 9003, "protocol": "TCP"},
        ],
    }
    deployment = rendered.get("Deployment", "mindie-motor-kv-store")
    assert deployment["spec"]["replicas"] == 1
    assert deployment["spec"]["template"]["spec"]["automountServiceAccountToken"] is False


def test_engine_client_config_points_at_the_service():
    rendered = render(mooncake())
    client = json.loads(rendered.get("ConfigMap", "mindie-motor-kv-client")["data"]["mooncake.json"])
    assert client == {
        "metadata_server": "P2PHANDSHAKE",
        "protocol": "ascend",
        "device_name": "",
        "master_server_address": f"{FQDN}:50088",
        "global_segment_size": "29GB",
        "local_buffer_size": "1GB",
    }
    endpoint = rendered.run.outputs["kv_store"]
    assert endpoint["engine_env"] == {
        "KVS_MASTER_SERVICE": FQDN,
        "KV_STORE_BACKEND": "mooncake",
        "MOONCAKE_CONFIG_PATH": "/etc/motor-kvpool/kv-client/mooncake.json",
    }
    assert (endpoint["host"], endpoint["port"], endpoint["metrics_port"]) == (FQDN, 50088, 9003)


def test_standalone_mode_leaves_the_segment_to_the_store_process_motor_starts_in_the_engine_container():
    """The newer Motor's node manager starts mooncake_store_service in the engine container from user_config.json's
    kv_cache_store_config and writes its config beside $MOONCAKE_CONFIG_PATH (docs/standalone-store.md): the pod
    has no other container, and that folder is writable."""
    rendered = render(mooncake(store_mode="standalone", global_segment_size="8GB", store_http_port=0))
    files = rendered.get("ConfigMap", "mindie-motor-kv-client")["data"]
    assert list(files) == ["mooncake.json"]
    assert json.loads(files["mooncake.json"]) == {
        "metadata_server": "P2PHANDSHAKE", "protocol": "ascend", "device_name": "",
        "master_server_address": f"{FQDN}:50088", "global_segment_size": 0, "local_buffer_size": "1GB",
    }
    spec = rendered.get("Deployment", "vllm-p0")["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["containers"]] == ["vllm"]
    assert {"name": "kv-client-dir", "emptyDir": {}} in spec["volumes"]
    mounts = [m for m in spec["containers"][0]["volumeMounts"] if m["mountPath"].startswith("/etc/motor-kvpool")]
    assert mounts == [
        {"name": "kv-client-dir", "mountPath": "/etc/motor-kvpool/kv-client"},
        {"name": "kv-client", "mountPath": "/etc/motor-kvpool/kv-client/mooncake.json", "subPath": "mooncake.json",
         "readOnly": True},
    ]
    env = env_of(spec["containers"][0])
    assert (env["KVS_MASTER_SERVICE"], env["KV_STORE_BACKEND"]) == (FQDN, "mooncake")
    user_config = json.loads(rendered.get("ConfigMap", "motor-config")["data"]["user_config.json"])
    store = user_config["kv_cache_store_config"]
    assert {key: store[key] for key in ("backend", "store_mode", "protocol", "global_segment_size", "store_http_port",
                                        "port", "metadata_server", "device_name")} == {
        "backend": "mooncake", "store_mode": "standalone", "protocol": "ascend", "global_segment_size": "8GB",
        "store_http_port": 0, "port": 50088, "metadata_server": "P2PHANDSHAKE", "device_name": "",
    }
    assert rendered.run.outputs["kv_store"]["standalone_store"] is True


def test_embedded_mode_mounts_the_client_file_alone():
    spec = render(mooncake()).get("Deployment", "vllm-p0")["spec"]["template"]["spec"]
    assert "kv-client-dir" not in [v["name"] for v in spec["volumes"]]


def test_ha_renders_etcd_and_the_oplog():
    rendered = render(mooncake(ha={"master_replicas": 2, "etcd": {"replicas": 3}}))
    master = rendered.container("Deployment", "mindie-motor-kv-store", "mooncake-master")
    endpoints = ";".join(
        f"mindie-motor-kv-store-etcd-{i}.mindie-motor-kv-store-etcd-peers.svc.svc.cluster.local:2379" for i in range(3)
    )
    assert master["args"][-4:] == [
        "--enable_ha=true", "--ha_backend_type=etcd", f"--etcd_endpoints={endpoints}", "--enable_oplog=true",
    ]
    assert rendered.get("Deployment", "mindie-motor-kv-store")["spec"]["replicas"] == 2
    assert rendered.get("StatefulSet", "mindie-motor-kv-store-etcd")["spec"]["replicas"] == 3
    client = json.loads(rendered.get("ConfigMap", "mindie-motor-kv-client")["data"]["mooncake.json"])
    assert client["master_server_address"] == f"etcd://{endpoints}"


def test_ha_etcd_container_ports_are_the_ones_its_peer_service_forwards_to():
    rendered = render(mooncake(ha={"etcd": {"replicas": 3, "port": 2479, "peer_port": 2480}}))
    etcd = rendered.container("StatefulSet", "mindie-motor-kv-store-etcd", "etcd")
    assert etcd["ports"] == [
        {"name": "client", "containerPort": 2479, "protocol": "TCP"},
        {"name": "peer", "containerPort": 2480, "protocol": "TCP"},
    ]
    assert rendered.get("Service", "mindie-motor-kv-store-etcd-peers")["spec"]["ports"] == [
        {"name": "client", "port": 2479, "targetPort": 2479, "protocol": "TCP"},
        {"name": "peer", "port": 2480, "targetPort": 2480, "protocol": "TCP"},
    ]


ENGINES = {"podSelector": {"matchLabels": {"motor-kvpool.io/kv-client": "true"}}}
SCRAPERS = {"podSelector": {"matchLabels": {"motor-kvpool.io/metrics-scraper": "true"}}}


def test_network_policy_admits_engine_pods_to_rpc_and_only_scrapers_to_metrics():
    policy = render(mooncake()).get("NetworkPolicy", "mindie-motor-kv-store")
    assert policy["spec"] == {
        "podSelector": {"matchLabels": {"app": "mindie-motor-kv-store"}},
        "policyTypes": ["Ingress"],
        "ingress": [
            {"from": [ENGINES], "ports": [{"port": 50088, "protocol": "TCP"}]},
            {"from": [SCRAPERS], "ports": [{"port": 9003, "protocol": "TCP"}]},
        ],
    }


def test_metrics_scraper_namespaces_are_admitted_to_the_metrics_port_only():
    policy = render(mooncake(metrics_scraper_namespaces=["monitoring"])).get("NetworkPolicy", "mindie-motor-kv-store")
    assert policy["spec"]["ingress"][1] == {
        "from": [SCRAPERS, {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}],
        "ports": [{"port": 9003, "protocol": "TCP"}],
    }
    assert policy["spec"]["ingress"][0]["from"] == [ENGINES]


def test_allowed_consumers_coordinators_are_admitted_to_the_metrics_port():
    """Each consumer's coordinator fetches the owner's /metrics (Motor's metrics_collector.py), as the owner's does."""
    policy = render(mooncake(allowed_consumers=["service-b"])).get("NetworkPolicy", "mindie-motor-kv-store")
    consumer = {"kubernetes.io/metadata.name": "service-b"}
    assert policy["spec"]["ingress"][1] == {
        "from": [SCRAPERS, {"namespaceSelector": {"matchLabels": consumer}, **SCRAPERS}],
        "ports": [{"port": 9003, "protocol": "TCP"}],
    }
    assert policy["spec"]["ingress"][0]["from"] == [ENGINES, {"namespaceSelector": {"matchLabels": consumer}, **ENGINES}]


def test_ha_etcd_admits_engines_and_masters_to_the_client_port_and_only_members_to_the_peer_port():
    rendered = render(mooncake(ha={"master_replicas": 2, "etcd": {"replicas": 3}}))
    policy = rendered.get("NetworkPolicy", "mindie-motor-kv-store-etcd")
    etcd = {"podSelector": {"matchLabels": {"app": "mindie-motor-kv-store-etcd"}}}
    masters = {"podSelector": {"matchLabels": {"app": "mindie-motor-kv-store"}}}
    assert policy["spec"]["ingress"] == [
        {"from": [ENGINES, etcd, masters], "ports": [{"port": 2379, "protocol": "TCP"}]},
        {"from": [etcd], "ports": [{"port": 2380, "protocol": "TCP"}]},
    ]


def test_protect_and_retain_reach_every_store_object():
    rendered = render(mooncake(protect=True, retain_on_delete=True, ha={"master_replicas": 2}))
    store_objects = [r for r in rendered.run.resources if "kvpool:index:KVStore" in r.urn and r.custom]
    assert len(store_objects) == 6
    assert all(r.protect and r.retain_on_delete for r in store_objects)
    engines = [r for r in rendered.run.resources if r.name == "prefill-vllm-p0"]
    assert [r.protect for r in engines] == [False]


def test_labels_annotations_and_node_selector():
    values = mooncake(additional_labels={"team": "infer"}, additional_annotations={"owner": "platform"})
    values["motor_deploy_config"]["kv_pool_node_selector"] = {"pool": "kv"}
    deployment = render(values).get("Deployment", "mindie-motor-kv-store")
    assert deployment["metadata"]["labels"]["team"] == "infer"
    assert deployment["metadata"]["annotations"] == {"owner": "platform"}
    assert deployment["spec"]["template"]["spec"]["nodeSelector"] == {"pool": "kv"}


def test_service_monitor_is_optional():
    assert ("ServiceMonitor", "mindie-motor-kv-store") not in render(mooncake()).objects
    monitor = render(mooncake(service_monitor=True)).get("ServiceMonitor", "mindie-motor-kv-store")
    assert monitor["spec"]["endpoints"] == [{"port": "metrics", "path": "/metrics", "interval": "30s"}]


def test_same_config_renders_the_same_objects():
    assert render(mooncake()).objects == render(mooncake()).objects
