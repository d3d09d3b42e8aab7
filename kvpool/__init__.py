"""Offline tooling of motor-kvpool: what `pulumi preview` shows, without the Pulumi CLI or a cluster.

Command line (from the repository root)::

    python -m kvpool preview --stack dev
        # run __main__.py under the SDK's mocks with the merged config of stacks/Pulumi.dev.yaml,
        # print the resource tree, run the policy pack in policies/ (as `pulumi preview --policy-pack`),
        # validate every manifest (Kubernetes 1.30, strict), write out/dev/
    python -m kvpool preview --stack dev --policy-config policy-config.json   # pulumi's --policy-pack-config
    python -m kvpool preview --stack dev --no-policy
    python -m kvpool preview --stack dev --out build/preview --k8s-version 1.31
    python -m kvpool preview --stack dev --project-dir tests/fixtures/programs/kv-demo
    python -m kvpool preview --stack service-b   # previews service-a first: service-b uses its store
    python -m kvpool --debug preview --stack dev   # show the traceback of an internal error
    python -m kvpool import --config-dir ../infer_engines/vllm --stack svc --set motor_deploy_config.image_name=IMG
    python -m kvpool settings --stack dev [--section kv_cache_store_config]   # the settings in effect
    python -m kvpool diff --base HEAD --stack dev [--exit-code]   # what the working tree changes since HEAD
    python -m kvpool diff base out --stack dev   # between two previews already written
    python -m kvpool fleet [--json] [--svg F] [--png F] [--check-destroy STACK]   # owners, consumers, problems
    python -m kvpool diff --live live out --stack dev   # drift: the cluster's objects (kubectl get -o yaml) vs a preview

Exit codes: 0 clean (advisory policy violations included), 1 invalid input, program error or a mandatory policy
violation (message on stderr), 2 internal error.

From Python::

    from kvpool.preview import preview
    result = preview(Path("."), "dev", Path("out"))   # -> PreviewResult(run, validation, manifest_files, ...)
    result.run.resource("kubernetes:core/v1:Namespace", "demo").inputs
    from kvpool.policy_runner import run_policy_pack
    from kvpool.stack_config import load_stack_config
    report = run_policy_pack(Path("policies"), result.run, load_stack_config(Path("."), "dev"))
    report.violations, report.mandatory, report.policies   # -> Violation(policy_name, enforcement_level, ...)

Modules: cli (argument parsing, exit codes); one per subcommand: preview_cmd, diff_cmd, import_cmd, settings_cmd,
fleet_cmd;
preview (the preview as a library), stack_config (Pulumi.yaml + stack file -> config strings), stack_references
(resolve other stacks' outputs offline), mock_engine (run a program, record resources and outputs),
provider_naming (the provider's auto-naming, emulated), property_values (properties as the engine encodes them),
manifests (build, schema-validate, write), live_objects (the cluster's objects for diff --live), apiserver_checks (the API server's own validation on the manifests)
with apiserver_names (names, labels, annotations, keys) and apiserver_workloads (workloads and their pods),
policy_runner (run a policy pack over a run, as the CLI does, over its gRPC protocol) with policy_pack_process (the
pack's process) and analyzer_messages (the protocol's messages), policy_config (the CLI's policy config
reconciliation), blast_radius (which workloads a change rolls) with blast_radius_report (its text), base_preview (a git
commit's preview, in a temporary worktree), importer (deploy.py files -> a stack file), fleet (owners, consumers and
their problems) with fleet_offline (its source: the stack files and previews), fleet_report (table, JSON) and
fleet_graph (the picture), consumer_previews (an owner's change previewed on its consumers, for diff).
"""
