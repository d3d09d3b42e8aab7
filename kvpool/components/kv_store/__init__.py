"""The KV store: the component (component.py), its endpoint contract (endpoint.py), one module per backend.

Nothing is imported here, so that importing one module of the package (a backend, the endpoint) does not build the
whole component first."""
