"""The OLO seed's placement rules, applied to one call site of a pipeline.

- A CAPABILITY_STAGE plugin stands only under a capability it lists, or anywhere when
  it lists ``ALL``. One that lists none (*Undefined*) stays available, as the seed
  asks, but only inside a group: at a capability's root it would claim a capability it
  never named.
- CONDITION, ITERATOR, FORK and JOIN plugins stand only in their own group slot.
- ``only_inside_group`` plugins never stand at a capability's root.

Plugins are looked up by id and, for OLO configs, by the class name OLO calls them by.

In engine mode (the seed: the engine *optionally* validates placement) a broken
placement rule is a warning naming the plugin, the capability and the rule; an unknown
plugin, a missing operation and a plugin in the wrong role stay faults, since the call
could not be made at all.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from plugyard.errors import Problem
from plugyard.manifest.model import Operation, Role
from plugyard.pipelines.model import CallModel
from plugyard.registry.model import RegisteredPlugin

_SLOT_OF = {"CONDITION": "condition", "ITERATOR": "iterator", "FORK": "fork", "JOIN": "join"}
Found = tuple[str, str | None, frozenset[str]]


class Catalog(Protocol):
    """Where pipelines find plugins (the registry, or a test double)."""

    def find(self, plugin_id: str) -> RegisteredPlugin | None: ...

    def list(self, family: str | None = None) -> tuple[RegisteredPlugin, ...]: ...


class Resolver:
    """Plugins by id, then by class name; suggestions for names that match nothing."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        self._by_class: dict[str, RegisteredPlugin] | None = None

    def find(self, name: str) -> RegisteredPlugin | None:
        found = self.catalog.find(name)
        if found is not None:
            return found
        if self._by_class is None:
            self._by_class = {
                p.descriptor.runtime.entrypoint: p
                for p in self.catalog.list()
                if p.descriptor.runtime.kind == "python" and p.descriptor.runtime.entrypoint
            }
        return self._by_class.get(name)

    def similar(self, name: str) -> list[str]:
        ids = [p.id for p in self.catalog.list()]
        return difflib.get_close_matches(name, ids, n=3, cutoff=0.6)


class Site:
    """Checks call sites, collecting faults and warnings."""

    def __init__(self, resolver: Resolver, engine: bool = False) -> None:
        self.resolver = resolver
        self.engine = engine
        self.faults: list[Problem] = []
        self.warnings: list[Problem] = []

    def placement(self, rule: str, pointer: str, message: str, pid: str, capability: str) -> None:
        """A broken placement rule: a fault, or in engine mode a warning."""
        if self.engine:
            note = f"{pid} under {capability} breaks the placement rule {rule}: {message}"
            self.warnings.append(Problem(rule, pointer, f"{note} (engine mode runs it)"))
        else:
            self.fault(rule, pointer, message)

    @contextmanager
    def quiet(self, on: bool) -> Iterator[None]:
        """Check without reporting (a fallback already judged at its own place)."""
        if not on:
            yield
            return
        faults, warnings = self.faults, self.warnings
        self.faults, self.warnings = [], []
        try:
            yield
        finally:
            self.faults, self.warnings = faults, warnings

    def fault(self, code: str, pointer: str, message: str) -> None:
        self.faults.append(Problem(code, pointer, message))

    def lookup(self, name: str, pointer: str) -> RegisteredPlugin | None:
        plugin = self.resolver.find(name)
        if plugin is None:
            near = self.resolver.similar(name)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            self.fault("unknown_plugin", pointer, f"no plugin {name!r} is registered{hint}")
        elif not plugin.available:
            reason = plugin.unavailable_reason or "unavailable"
            self.warnings.append(Problem("plugin_unavailable", pointer, reason))
        return plugin

    def check(
        self,
        model: CallModel,
        plugin_pointer: str,
        pointer: str,
        role: Role,
        capability: str,
        inside: bool,
    ) -> Found | None:
        plugin = self.lookup(model.plugin, plugin_pointer)
        if plugin is None:
            return None
        placement = plugin.descriptor.placement
        pid = plugin.id
        if placement.role != role:
            where = (
                f"it fills a group's {_SLOT_OF[placement.role]} slot"
                if placement.role in _SLOT_OF
                else "it is a stage"
            )
            self.fault(
                "role_misplaced",
                plugin_pointer,
                f"{pid} is a {placement.role} plugin, not a {role}: {where}",
            )
        elif role == "CAPABILITY_STAGE":
            if placement.capabilities and not placement.allows(capability):
                listed = ", ".join(placement.capabilities)
                self.placement(
                    "capability_not_allowed",
                    plugin_pointer,
                    f"{pid} stands under {listed}, not under {capability}",
                    pid,
                    capability,
                )
            elif not placement.capabilities and not inside:
                self.placement(
                    "undefined_outside_group",
                    plugin_pointer,
                    f"{pid} lists no capability (Undefined): it may stand only inside a group",
                    pid,
                    capability,
                )
        if placement.only_inside_group and not inside:
            message = f"{pid} may stand only inside a group"
            self.placement("only_inside_group", plugin_pointer, message, pid, capability)
        operation = self.operation(plugin, model.operation, pointer)
        if operation is None:
            return None
        properties = operation.parameters.get("properties")
        declared = frozenset(properties) if isinstance(properties, dict) else frozenset()
        return pid, operation.id, declared

    def operation(
        self, plugin: RegisteredPlugin, name: str | None, pointer: str
    ) -> Operation | None:
        operations = plugin.descriptor.operations
        if name is None:
            if len(operations) == 1:
                return operations[0]
            names = ", ".join(op.id for op in operations) or "none"
            self.fault(
                "unknown_operation",
                pointer,
                f"{plugin.id} has {len(operations)} operations ({names}): name one",
            )
            return None
        wanted = name.lower().replace("-", "_").replace(" ", "_")
        for op in operations:
            if op.id == name or op.id.lower() == wanted:
                return op
        names = ", ".join(op.id for op in operations)
        self.fault("unknown_operation", f"{pointer}/operation", f"{plugin.id} has only {names}")
        return None

    def pipeline_fallback(self, name: str, pointer: str, capabilities: tuple[str, ...]) -> None:
        """The pipeline's fallback may replace any stage: it must stand everywhere."""
        plugin = self.lookup(name, pointer)
        if plugin is None:
            return
        placement = plugin.descriptor.placement
        if placement.role != "CAPABILITY_STAGE":
            self.fault("role_misplaced", pointer, f"{plugin.id} is a {placement.role} plugin")
            return
        missing = [c for c in capabilities if not placement.allows(c)]
        if missing:
            self.fault(
                "capability_not_allowed",
                pointer,
                f"the pipeline's fallback must stand under every capability; "
                f"{plugin.id} does not under {', '.join(missing)}",
            )
        if placement.only_inside_group:
            self.fault("only_inside_group", pointer, f"{plugin.id} may stand only inside a group")
        self.operation(plugin, None, pointer)
