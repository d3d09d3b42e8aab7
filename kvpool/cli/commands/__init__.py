"""The `kvpool` command line: cli parses the arguments and maps errors to exit codes (exit_codes.py: 0 ok, 1 refused
input, 2 a bug, 3 a mandatory policy violation, 4 has changes); options.py declares the shared options (`--stack`);
one module per subcommand (preview_cmd, diff_cmd, import_cmd, settings_cmd, fleet_cmd, size_cmd, stack_schema_cmd,
policy_pack_cmd, component_package_cmd). No real part to stand in for; tests/e2e/test_user_path.py runs them as a
user types them beside the real CLI.
"""
