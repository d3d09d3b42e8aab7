"""Every default the seeds and deploy.py define, asserted on the loaded model."""

from __future__ import annotations

import pytest

from kvpool.settings.deploy import PvcStorage
from kvpool.settings.loader import load_from_pulumi_config
from kvpool.settings.store import MemcacheStoreConfig, MooncakeStoreConfig
from tests.service_configs import memcache_pool, mooncake_pool, plain_pd


def test_deploy_config_defaults():
    settings = load_from_pulumi_config(plain_pd(), "svc-a")
    deploy = settings.motor_deploy_config
    assert deploy.job_id == "svc-a"
    assert settings.namespace == "svc-a"
    assert deploy.deploy_mode == "infer_service_set"
    assert (deploy.p_instances_num, deploy.d_instances_num) == (1, 1)
    assert (deploy.single_p_instance_pod_num, deploy.single_d_instance_pod_num) == (1, 1)
    assert deploy.weight_mount_path == "/mnt/weight"
    assert deploy.dshm_size == "4Gi"
    assert deploy.storage == []
    # No NodePort unless asked (one cluster allocates each once; issue 34).
    assert (deploy.coordinator_infer_node_port, deploy.coordinator_obs_node_port) == (None, None)
    assert deploy.controller_observability_node_port is None
    assert settings.cluster == "default"
    assert settings.create_namespace is True


def test_no_pool_means_no_store():
    settings = load_from_pulumi_config(plain_pd(), "svc")
    assert settings.kv_store_wanted is False
    assert settings.kv_cache_store_config is None
    assert "kv_cache_store_config" not in settings.user_config()


def test_multiconnector_without_store_config_gets_the_default_memcache_store():
    service = memcache_pool()
    del service["kv_cache_store_config"]
    store = load_from_pulumi_config(service, "svc").kv_cache_store_config
    assert isinstance(store, MemcacheStoreConfig)


def test_memcache_defaults():
    service = memcache_pool()
    service["kv_cache_store_config"] = {}  # what Pulumi.yaml's `default: {}` hands a stack that omits the key
    store = load_from_pulumi_config(service, "svc").kv_cache_store_config
    assert store.model_dump() == {
        "target_stack": None,
        "additional_labels": {},
        "additional_annotations": {},
        "backend": "memcache",
        "port": 50088,
        "config_store_port": 50089,
        "metrics_port": 50090,
        "image": None,
        "resources": {"requests": {"cpu": "4", "memory": "2Gi"}, "limits": {"cpu": "8", "memory": "4Gi"}},
        "protect": False,
        "retain_on_delete": False,
        "service_monitor": False,
        "dashboards": False,
        "allowed_consumers": [],
        "metrics_scraper_namespaces": [],
        "local_service_mode": "inprocess",
        "local_service_conf": None,
        "dram_size": None,
    }


@pytest.mark.parametrize(
    ("hardware_type", "mode"),
    [("800I_A2", "inprocess"), ("800T_A2", "inprocess"), ("850-SuperPod-Atlas-8", "inprocess"),
     ("800I_A3", "standalone"), ("800T_A3", "standalone")],
)
def test_memcache_local_service_mode_follows_hardware(hardware_type, mode):
    store = load_from_pulumi_config(memcache_pool(hardware_type), "svc").kv_cache_store_config
    assert store.local_service_mode == mode


def test_backend_defaults_to_memcache_when_absent():
    service = memcache_pool()
    service["kv_cache_store_config"] = {"port": 50100}
    settings = load_from_pulumi_config(service, "svc")
    assert settings.kv_cache_store_config.backend == "memcache"
    assert settings.user_config()["kv_cache_store_config"]["backend"] == "memcache"


def test_mooncake_defaults():
    store = load_from_pulumi_config(mooncake_pool(), "svc").kv_cache_store_config
    assert isinstance(store, MooncakeStoreConfig)
    assert (store.metadata_server, store.protocol, store.device_name) == ("P2PHANDSHAKE", "ascend", "")
    assert (store.global_segment_size, store.local_buffer_size) == ("1GB", "1GB")
    assert (store.port, store.metrics_port, store.store_http_port) == (50088, 9003, 0)
    assert store.default_kv_lease_ttl == 11000
    assert store.store_mode == "embedded"
    assert (store.client_ttl, store.ha) == (10, None)
    assert (store.eviction_high_watermark_ratio, store.eviction_ratio) == (0.7, 0.2)


def test_new_pvc_storage_defaults_and_mount_paths():
    service = plain_pd()
    service["motor_deploy_config"]["storage"] = [
        {"type": "pvc", "storage_class_name": "nfs-rwx"},
        {"type": "hostpath", "path": "/data/ucm", "mount_path": "/mnt/ucm"},
        {"type": "nfs", "server": "10.0.0.5", "path": "/export"},
    ]
    service["motor_deploy_config"]["host_path_roots"] = {"storage": ["/data/ucm"]}
    storage = load_from_pulumi_config(service, "svc").motor_deploy_config.storage
    assert isinstance(storage[0], PvcStorage)
    assert (storage[0].size, storage[0].access_mode, storage[0].mount_path) == ("200Gi", "ReadWriteMany", "/mnt/store-0")
    assert storage[1].mount_path == "/mnt/ucm"
    assert storage[2].mount_path == "/mnt/store-2"
    assert [entry.read_only for entry in storage] == [False, False, False]


def test_effective_user_config_keeps_unmodelled_engine_options_untouched():
    settings = load_from_pulumi_config(memcache_pool(), "svc")
    effective = settings.user_config()
    assert effective["version"] == "v2.0"
    assert effective["motor_deploy_config"]["deploy_mode"] == "infer_service_set"
    assert effective["motor_deploy_config"]["job_id"] == "svc"
    prefill = effective["motor_engine_prefill_config"]["engine_config"]
    assert prefill["max-model-len"] == 2048
    assert "data_parallel_size" not in prefill  # not invented when the user did not write it
    connectors = prefill["kv_transfer_config"]["kv_connector_extra_config"]["connectors"]
    assert connectors[0] == {"kv_connector": "MooncakeConnectorV1", "kv_role": "kv_producer", "kv_port": "30001"}
    assert "create_namespace" not in effective and "env" not in effective
