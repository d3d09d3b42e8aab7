"""The Pulumi components a service is made of: KVStore (kv_store/), EnginePool, UCMStorage, ControlPlane, KVConductor
and ServiceSet (workloads.py). Each takes typed arguments built from the settings (kvpool.internal.service_args)."""
