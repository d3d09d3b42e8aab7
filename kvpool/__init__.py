"""motor-kvpool: MindIE Motor prefill/decode-disaggregated inference with a shared KV-cache pool on Kubernetes, as
Pulumi components. Nothing is imported here, so `import kvpool.settings` does not build the components first.

The public API (SemVer: CHANGELOG.md says what each release changes in it):
- kvpool.program: `build(settings)` builds one service's stack from its settings; `run()` reads them from the stack's
  configuration first (what a project's `__main__.py` calls);
- kvpool.settings: the typed settings (`ServiceSettings` and its sections) and their loading with every problem
  reported at once;
- kvpool.components: the Pulumi components KVStore, EnginePool, UCMStorage, ControlPlane, KVConductor and
  ServiceSet;
- kvpool.policies: the policy pack (`pulumi preview --policy-pack "$(kvpool policy-pack-dir)"`), its policies
  (`kvpool.policies.catalog.POLICIES`, for a team's own pack) and the rules they check (`kvpool.policies.rules`);
- kvpool.errors: the exceptions the above raise;
- kvpool.component_package: kvpool:index:Service for Pulumi programs in other languages (`kvpool component-package`);
- the `kvpool` command (kvpool.cli.commands.cli), the offline tooling, on any project that uses this package.
Everything under kvpool.internal and kvpool.cli (but the command line itself) may change in any release.
"""

__version__ = "0.3.0"
