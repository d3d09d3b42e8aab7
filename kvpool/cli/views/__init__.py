"""Views of a preview: what its objects are and what a change to them does.

- manifests: build, schema-validate (kubernetes-validate, strict) and write the objects; live_objects: the
  cluster's objects (`kubectl get -o yaml`) for `diff --live`, proven by tests/e2e/test_drift.py.
- blast_radius, blast_radius_report: which workloads a change rolls or replaces, and its one-line summary; proven
  against the real engine's diff by tests/e2e/test_updates.py.
- base_preview: a git commit's preview in a temporary worktree; consumer_previews: an owner's change previewed on
  its consumers; importer: deploy.py's user_config.json and env.json into a stack file.
"""
