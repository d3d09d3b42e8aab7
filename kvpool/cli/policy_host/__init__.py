"""Stand-in for the Pulumi CLI as a policy-pack host (`pulumi preview --policy-pack kvpool/policies`): the pack runs
in its own process and is spoken to over the real analyzer gRPC protocol.

- runner: one run's resources through the pack, as the CLI sends them; pack_process: the pack's process and its
  handshake; analyzer_messages: the protocol's messages; pack_config: the CLI's reconciliation of
  `--policy-pack-config` with the pack's own schema.
- Proven against the real CLI by tests/e2e/test_policy_pack_engine.py (every example stack) and
  tests/e2e/test_policy_cases_engine.py (every policy case: same policy, level, resource and message).
"""
