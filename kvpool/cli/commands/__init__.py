"""The `kvpool` command line: cli parses the arguments and maps errors to exit codes (0 clean, 1 invalid input or a
mandatory violation, 2 a bug); one module per subcommand (preview_cmd, diff_cmd, import_cmd, settings_cmd,
fleet_cmd). No real part to stand in for; tests/e2e/test_user_path.py runs them as a user types them beside the
real CLI.
"""
