"""Mirror of kube-apiserver's own checks on our manifests (what the OpenAPI schema cannot say): decoding into Go
types, validation, NodePort allocation, server-side apply's list keys.

- checks: whole manifests and each kind's dispatch; names: names, labels, annotations and keys; workloads: workloads
  and their pods; openapi: the server's OpenAPI definitions as kubernetes-validate bundles them, which checks and the
  strict schema check (kvpool/cli/views/manifests.py) share.
- Proven by tests/e2e/test_apiserver_differential.py: every example manifest, the hand-written corpus of
  tests/hostile and the property test's mutants go to the real kube-apiserver (server-side apply, dryRun=All), and
  the offline verdict must be the server's.
"""
