"""The Pulumi names of a component's children: `<component>-<Kubernetes name>`, so that two components of one type
in one program (two services' KVStores, two UCMStorages in two namespaces) never share a URN. The Kubernetes names
stay as they are: they are per namespace, and they are what Motor expects.

A child's Pulumi name used to be its Kubernetes name alone. The component named as kvpool.program names a service's
only one (`default`) carries that old name as an alias, so a stack from before keeps its objects on upgrade. So does
a component that was itself renamed from `default` and carries that name as its own alias (`renamed_from`): the
parts of the component package's kvpool:index:Service, named `<service>-<part>` since the Service passes its name to
kvpool.program.build, were named as the Python program's before (0.3.0 and earlier). The engine multiplies a
child's aliases by its parent's, so such a child's old URN, its Kubernetes name under the old-named part, is among
them.

Two resources aliasing one old URN fail an update only when the old URN is in the stack's state (the engine checks
aliases against the resources it found by them): two Services in a new stack, or added one after the other, both
alias the same old URNs and go up. A stack from before upgrades with its one Service first; a second Service is
added in a later update, when no resource of the stack has an old URN any more. Programs that build several services
through kvpool.program.build name all but one (`name`) and those alias nothing: their default-named one still has
its parts' current URNs, which an alias of theirs would claim. On the real engine: tests/e2e/test_child_name_aliases.py
(the upgrade, the refused second Service in it, the second Service after it) and tests/e2e/test_component_package.py
(two Services in a new stack)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class ChildNames:
    component: str  # the component's own Pulumi name
    default: str  # the name kvpool.program gives it
    renamed: bool = False  # the component was named `default` before (its own alias says so: `of`)

    @classmethod
    def of(cls, component: str, default: str, opts: pulumi.ResourceOptions | None) -> ChildNames:
        """The names of the children of the component named `component` with options `opts`: renamed when `opts`
        alias it to `default` (renamed_from)."""
        aliases = (opts.aliases or []) if opts is not None else []
        return cls(component, default, any(isinstance(a, pulumi.Alias) and a.name == default for a in aliases))

    def name(self, kube_name: str) -> str:
        return f"{self.component}-{kube_name}"

    def opts(self, kube_name: str, opts: pulumi.ResourceOptions, was_at_root: bool = False) -> pulumi.ResourceOptions:
        """`opts` with, for the default-named or renamed component, the child's old name as an alias (`was_at_root`:
        also at the stack's root, where it was before the component existed)."""
        if self.component != self.default and not self.renamed:
            return opts
        old = [pulumi.Alias(name=kube_name)]
        if was_at_root:
            old.append(pulumi.Alias(name=kube_name, parent=pulumi.ROOT_STACK_RESOURCE))
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=old))


def renamed_from(old: str | None, opts: pulumi.ResourceOptions | None) -> pulumi.ResourceOptions | None:
    """`opts` with, when `old` is given, the name a resource had before as an alias under the same parent."""
    if old is None:
        return opts
    return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=[pulumi.Alias(name=old)]))
