"""Offline tooling of motor-kvpool: what `pulumi preview` shows, without the Pulumi CLI or a cluster.

Command line (in a project's folder, or with --project-dir)::

    python -m kvpool preview --stack dev
        # run __main__.py under the SDK's mocks with the merged config of stacks/Pulumi.dev.yaml,
        # print the resource tree, run the project's policies/ pack, else motor-kvpool's (as `pulumi preview
        # --policy-pack`),
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
    python -m kvpool fleet [--json] [--svg F] [--png F] [--check-destroy --stack S]   # owners, consumers, problems
    python -m kvpool diff --live live out --stack dev   # drift: the cluster's objects (kubectl get -o yaml) vs a preview
    python -m kvpool size --stack dev --lifetime 10   # the smallest pool that keeps a block 10 s
    python -m kvpool stack-schema [--check]   # the stack files' JSON Schema for editors, beside them
    python -m kvpool policy-pack-dir   # the folder of motor-kvpool's policy pack, for `pulumi preview --policy-pack`
    python -m kvpool component-package DIR   # the component package for Pulumi programs in other languages

Exit codes, the same in every command (kvpool/cli/commands/exit_codes.py): 0 ok, 1 refused input (or fleet's
problems), 2 internal error, 3 a mandatory policy violation, 4 has changes (diff --exit-code, stack-schema --check);
why, on stderr.

From Python::

    from kvpool.cli.preview import preview
    result = preview(Path("."), "dev", Path("out"))   # -> PreviewResult(run, validation, manifest_files, ...)
    result.run.resource("kubernetes:core/v1:Namespace", "demo").inputs
    from kvpool.cli.policy_host.runner import run_policy_pack
    from kvpool.policies import PACK_DIR
    from kvpool.cli.engine.stack_config import load_stack_config
    report = run_policy_pack(PACK_DIR, result.run, load_stack_config(Path("."), "dev"))
    report.violations, report.mandatory, report.policies   # -> Violation(policy_name, enforcement_level, ...)

Groups, each named by the real part it stands in for (its __init__ names the test that compares them):
- preview (this folder): the preview as a library, the one path every command takes;
- engine/: the Pulumi CLI and engine (stack files, the mock monitor, stack references, the engine's encodings);
- policy_host/: the CLI as a policy-pack host (the pack's process over the analyzer gRPC protocol);
- apiserver/: kube-apiserver's own checks (decoding, validation, NodePorts, server-side apply);
- views/: what a preview's objects are and what a change does (manifests, blast radius, base and consumer previews,
  the importer, live objects);
- fleet/: owners, consumers and their problems across stacks;
- commands/: the command line, one module per subcommand (exit_codes.py: what each exit code means; options.py:
  the options they share, `--stack` among them).
A group may import engine/ and those listed before it; views/ and fleet/ read previews; only commands/ parses
arguments.
"""
