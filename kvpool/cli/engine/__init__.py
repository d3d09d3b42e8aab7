"""Stand-in for the Pulumi CLI and engine: what `pulumi preview` does before any provider or policy runs.

- stack_config, stack_yaml: Pulumi.yaml and Pulumi.<stack>.yaml read as the CLI reads them (Go's yaml.v3) into the
  config strings the program sees; proven by tests/e2e/test_stack_file_yaml.py against `pulumi config --json`.
- mock_engine: runs the program under the SDK's mock monitor and records resources and outputs; proven by
  tests/e2e/test_preview_and_up.py (`pulumi preview` lists what the offline preview lists).
- stack_references: other stacks' outputs, offline; proven by tests/e2e/test_stack_reference.py.
- provider_naming, property_values: the Kubernetes provider's auto-naming and the engine's property encoding, as the
  policy pack receives them; proven by tests/e2e/test_policy_pack_engine.py.
- stack_schema: the stack file's JSON schema for editors, generated from the settings models.
"""
