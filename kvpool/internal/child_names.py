"""The Pulumi names of a component's children: `<component>-<Kubernetes name>`, so that two components of one type
in one program (two services' KVStores, two UCMStorages in two namespaces) never share a URN. The Kubernetes names
stay as they are: they are per namespace, and they are what Motor expects.

A child's Pulumi name used to be its Kubernetes name alone. The component named as kvpool.program names a service's
only one (`default`) carries that old name as an alias, so a stack from before keeps its objects on upgrade. Only
that one does: two resources aliasing one old URN fail the update (the engine's "Duplicate resource alias")."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi


@dataclass(frozen=True)
class ChildNames:
    component: str  # the component's own Pulumi name
    default: str  # the name kvpool.program gives it

    def name(self, kube_name: str) -> str:
        return f"{self.component}-{kube_name}"

    def opts(self, kube_name: str, opts: pulumi.ResourceOptions, was_at_root: bool = False) -> pulumi.ResourceOptions:
        """`opts` with, for the default-named component, the child's old name as an alias (`was_at_root`: also at
        the stack's root, where it was before the component existed)."""
        if self.component != self.default:
            return opts
        old = [pulumi.Alias(name=kube_name)]
        if was_at_root:
            old.append(pulumi.Alias(name=kube_name, parent=pulumi.ROOT_STACK_RESOURCE))
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(aliases=old))
