"""Offline tooling of motor-kvpool: what `pulumi preview` shows, without the Pulumi CLI or a cluster.

Command line (from the repository root)::

    python -m kvpool preview --stack dev
        # run __main__.py under the SDK's mocks with the merged config of stacks/Pulumi.dev.yaml,
        # print the resource tree, validate every manifest (Kubernetes 1.30, strict), write out/dev/
    python -m kvpool preview --stack dev --out build/preview --k8s-version 1.31
    python -m kvpool preview --stack dev --project-dir tests/fixtures/programs/kv-demo
    python -m kvpool --debug preview --stack dev   # show the traceback of an internal error

Exit codes: 0 clean, 1 invalid input or program error (message on stderr), 2 internal error.

From Python::

    from kvpool.preview import preview
    result = preview(Path("."), "dev", Path("out"))   # -> PreviewResult(run, validation, manifest_files, ...)
    result.run.resource("kubernetes:core/v1:Namespace", "demo").inputs

Modules: stack_config (Pulumi.yaml + stack file -> config strings), mock_engine (run a program, record
resources and outputs), manifests (build, validate, write), preview (the command), cli (argument parsing).
"""
