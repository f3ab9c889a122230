"""Plugins that live outside the yard: HTTP plugins registered over the API (mirrored
to HomeClaw's file) and the tools of MCP servers, pinned until approved.

Both are untrusted by construction, so each is checked under the outbound guard
before it is stored, and every approval is audited when the yard is governed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from plugyard.deferred import Runtimes
from plugyard.errors import PlugyardError, RegistryError
from plugyard.registry.intake import read_plugins
from plugyard.registry.model import RegisteredPlugin, RegistryEvent
from plugyard.registry.registry import Registry
from plugyard.yard.governing import Governing
from plugyard.yard.network import Network
from plugyard.yard.runtimes import mcp_runtime
from plugyard.yard.settings import Settings, external_plugins_path
from plugyard.yard.start import check

if TYPE_CHECKING:
    from plugyard.store.mcp_pins import ToolPin

_log = logging.getLogger("plugyard.yard")


class Externals:
    """Registrations of external HTTP plugins, and the pins of MCP tools."""

    def __init__(
        self,
        settings: Settings,
        registry: Registry,
        runtimes: Runtimes,
        network: Network,
        governing: Governing,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.runtimes = runtimes
        self.network = network
        self.governing = governing

    async def register_external(self, data: Any) -> tuple[RegistryEvent, ...]:
        """Register the http plugins of a registration body (HomeClaw, or any dialect):
        all are checked — runtime, URLs under the outbound guard — before any is stored.
        Registering an id again replaces it; an id held by a non-external plugin is
        ``duplicate_plugin``."""
        from plugyard.runtimes.http import check_registration

        read = read_plugins(data)
        await check_registration([d for d, _ in read], self.network.outbound.guard)
        plugins = []
        for descriptor, dialect in read:
            held = self.registry.find(descriptor.id)
            if held is not None and held.source != "external":
                raise RegistryError(
                    f"plugin id {descriptor.id!r} belongs to a {held.source} plugin",
                    code="duplicate_plugin",
                )
            plugin = RegisteredPlugin.of(descriptor, "external", trust="untrusted", dialect=dialect)
            plugins.append(check(plugin, self.runtimes))
        events = self.registry.register_many(plugins, replace=True)
        if events:
            self._mirror_external()
        return events

    async def sync_external_file(self) -> tuple[RegistryEvent, ...]:
        """HomeClaw's persistence (registry/external_file.py): register what the file
        holds and the store lacks, each body under the API's checks (one refused body is
        logged and skipped), then write the file again from the store."""
        from plugyard.registry import external_file

        path = external_plugins_path(self.settings)
        if path is None:
            return ()
        events: list[RegistryEvent] = []
        for index, body in enumerate(external_file.read_bodies(path)):
            try:
                events.extend(await self.register_external(body))
            except PlugyardError as exc:
                _log.warning("%s: registration #%d refused: %s: %s",
                             path, index, exc.code, exc.message)  # fmt: skip
        self._mirror_external()
        return tuple(events)

    def _mirror_external(self) -> None:
        path = external_plugins_path(self.settings)
        if path is not None:
            external = [p for p in self.registry.list() if p.source == "external"]
            if external or path.exists():  # no file appears until there is something
                from plugyard.registry import external_file

                external_file.write(path, external)

    def mcp_tool_pins(self, plugin_id: str | None = None) -> list[ToolPin]:
        """The pinned and last seen definition hash of every MCP tool (docs/mcp.md)."""
        return mcp_runtime(self.runtimes).tool_pins(plugin_id)

    def approve_mcp_tool(self, plugin_id: str, tool: str, *, by: str | None = None) -> ToolPin:
        """Trust the definition an MCP tool shows now, re-enabling a changed tool
        (``operation_not_found`` when the tool was never seen). Audited when governed."""
        from plugyard.execution.executor import new_request_id

        pin = mcp_runtime(self.runtimes).approve(plugin_id, tool, by)
        if pin is None:
            raise PlugyardError(
                f"no MCP tool {tool!r} was seen for plugin {plugin_id!r}",
                code="operation_not_found",
            )
        governance = self.governing.governance
        if governance is not None:
            governance.audit.append(
                "mcp_tool", status="approved", subject=by, request_id=new_request_id(),
                plugin_id=plugin_id, operation=tool, approver=by,
                detail={"hash": pin.pinned_hash},
            )  # fmt: skip
        return pin

    def unregister_external(self, plugin_id: str) -> RegistryEvent | None:
        """Remove an external plugin (``plugin_not_found``; others: ``permission_denied``)."""
        held = self.registry.require(plugin_id)
        if held.source != "external":
            raise PlugyardError(
                f"plugin {plugin_id!r} comes from a {held.source} source, not a registration",
                code="permission_denied",
            )
        event = self.registry.unregister(plugin_id)
        self._mirror_external()
        return event
