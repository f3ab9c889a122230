"""The yard itself: it opens the store, syncs the registry, and composes the
collaborators that own the rest, each built on first use.

Callers know one object (``yard.call``, ``yard.search``, ``yard.executor``…); each
concern lives in its own collaborator, and the yard answers for them under their own
names (:class:`plugyard.deferred.forward`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from plugyard.deferred import built, forward, part
from plugyard.registry.memory import FolderMemory
from plugyard.registry.registry import Registry
from plugyard.registry.sources import PluginSource
from plugyard.registry.sync import SyncReport, sync_on_start
from plugyard.runtimes.base import CallContext
from plugyard.store.folders import SqlFolderMarks
from plugyard.store.store import Store
from plugyard.telemetry import configure as configure_telemetry
from plugyard.types import Caller
from plugyard.yard.execution import Execution
from plugyard.yard.externals import Externals
from plugyard.yard.finding import Finding
from plugyard.yard.flows import Flows
from plugyard.yard.governing import Governing
from plugyard.yard.management import Management
from plugyard.yard.network import Network
from plugyard.yard.runtimes import kill_all, runtimes_for
from plugyard.yard.settings import Settings
from plugyard.yard.start import Checked, check_context, plugin_sources

# The rest is imported where it is first needed: a command that lists plugins must not
# load the server, MCP, discovery or governance stacks (see plugyard.deferred).
if TYPE_CHECKING:
    from plugyard.discovery.learning import Outcome
    from plugyard.execution.result import Result
    from plugyard.llm import ChatModel
    from plugyard.store.keys import SqlKeyRepository


class Yard:
    """A running plugyard: store, registry, runtimes and executor, built once.

    ``from_settings`` opens the store and syncs the registry; the rest — the executor
    with its policy and governance, the HTTP, MCP and subprocess runtimes, health checks,
    discovery, pipelines — is built on first use, once (:mod:`plugyard.deferred`), by
    the collaborator that owns it."""

    def __init__(self, settings: Settings, store: Store, registry: Registry) -> None:
        self.settings = settings
        self.store = store
        self.registry = registry
        # Each collaborator is given the ones it builds on, lowest first.
        self.network = Network(settings, registry)
        self.runtimes = runtimes_for(settings, store, registry, self.network)
        self.finding = Finding(settings, store, registry)
        self.governing = Governing(settings, store, registry, self.network, self.finding)
        self.execution = Execution(settings, store, registry, self.runtimes, self.governing)
        self.externals = Externals(settings, registry, self.runtimes, self.network,
                                   self.governing)  # fmt: skip
        self.flows = Flows(store, registry, self.execution, self.finding, self.governing,
                           lambda: self.llm, settings.model_rate_per_minute,
                           reasoning_model=settings.llm is not None)  # fmt: skip
        self.management = Management(settings, registry, self.runtimes, self.execution,
                                     self.governing)  # fmt: skip
        self.sources: Sequence[PluginSource] = ()
        self.report = SyncReport()

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Yard:
        settings = settings or Settings.from_env()
        configure_telemetry(settings.telemetry)  # before the executor reads it
        store = Store.open(settings.database)
        registry = Registry.over(store)
        yard = cls(settings, store, registry)
        memory = FolderMemory(SqlFolderMarks(store), registry, context=check_context(settings))
        checks = yard.runtimes.lazy
        yard.sources = tuple(Checked(s, checks) for s in plugin_sources(settings, memory))
        yard.report = sync_on_start(registry, yard.sources, memory=memory)
        return yard

    # what the collaborators hold, under the names callers know ---------------------------

    outbound = forward("network", Network.outbound)
    health = forward("network", Network.health)

    discovery = forward("finding", Finding.discovery)
    search = forward("finding", Finding.search)
    tools_for = forward("finding", Finding.tools_for)
    learn_from_call = forward("finding", Finding.learn_from_call)

    policy = forward("governing", Governing.policy)
    governance = forward("governing", Governing.governance)
    knowledge = forward("governing", Governing.knowledge)
    rights = forward("governing", Governing.rights)
    sight = forward("governing", Governing.sight)
    shows = forward("governing", Governing.shows)
    visible = forward("governing", Governing.visible)

    executor = forward("execution", Execution.executor)
    add_step = forward("execution", Execution.add_step)
    backend = forward("execution", Execution.backend)
    fanout = forward("execution", Execution.fanout)

    register_external = forward("externals", Externals.register_external)
    sync_external_file = forward("externals", Externals.sync_external_file)
    unregister_external = forward("externals", Externals.unregister_external)
    mcp_tool_pins = forward("externals", Externals.mcp_tool_pins)
    approve_mcp_tool = forward("externals", Externals.approve_mcp_tool)

    router = forward("flows", Flows.router)
    chat = forward("flows", Flows.chat)
    model_gate = forward("flows", Flows.model_gate)
    ask = forward("flows", Flows.ask)
    reasoning = forward("flows", Flows.reasoning)
    reason = forward("flows", Flows.reason)
    pipelines = forward("flows", Flows.pipelines)

    admin = forward("management", Management.admin)
    packages = forward("management", Management.packages)
    feeds = forward("management", Management.feeds)

    # ----------------------------------------------------------------------------------

    @part
    def llm(self) -> ChatModel:
        """The chat model (docs/llm.md); nothing loads or connects until its first call.
        A model server is reached under the outbound guard, so one on loopback needs an
        ``outbound_allow`` entry."""
        from plugyard.llm import llm_from_spec

        s = self.settings
        return llm_from_spec(
            s.llm,
            api_key=s.llm_api_key,
            ollama_url=s.ollama_url,
            socket_factory=self.outbound.guard.socket_factory,
        )

    @property
    def keys(self) -> SqlKeyRepository:
        """The service's API keys (hashed) and their subjects."""
        from plugyard.store.keys import SqlKeyRepository

        return SqlKeyRepository(self.store)

    async def call(
        self,
        plugin_id: str,
        operation: str | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        timeout_ms: int | None = None,
        debug: bool = False,
        search_id: str | None = None,
    ) -> Result:
        """Call one operation through the executor.

        The application that embeds plugyard is trusted to say who calls: ``subject``
        and ``roles`` are taken as given (a server takes them from the API key). A call
        with neither is the application's own and holds the ``admin`` role; a call for
        a subject holds only the roles given here and those the policy lists for it.
        ``search_id`` (from :meth:`search`): when the call succeeds, discovery learns
        that the search's request was answered by this operation (docs/discovery.md)."""
        from plugyard.execution.executor import CallRequest, new_request_id

        context = CallContext(
            request_id=new_request_id(),
            subject=subject,
            roles=Caller.of(subject, roles).roles,
            debug=debug,
        )
        request = CallRequest(plugin_id, operation, dict(params or {}), context, timeout_ms)
        result = await self.executor.call(request)
        if search_id is not None and subject is not None and result.ran_ok:
            self.learn_from_call(search_id, subject, plugin_id, result.operation or operation)
        return result

    def feedback(
        self,
        search_id: str,
        plugin_id: str,
        operation: str | None = None,
        *,
        helpful: bool = True,
        subject: str | None = None,
        roles: Sequence[str] = (),
    ) -> Outcome:
        """Whether ``plugin_id`` (``operation``) answered the request of a search by
        ``subject`` (docs/discovery.md, "Feedback"); a plugin the subject may not call
        is ``plugin_not_found``."""
        return self.discovery.feedback(
            search_id, plugin_id, operation, helpful=helpful, subject=subject,
            can_see=self.rights(subject, roles),
        )  # fmt: skip

    def close(self) -> None:
        """Stop what was started; a part never built is not built to be stopped."""
        kill_all(self.runtimes)
        discovery = built(self.finding, "discovery")
        if discovery is not None:
            discovery.close()
        backend = built(self.execution, "backend")
        if backend is not None:
            backend.close()
        knowledge = built(self.governing, "knowledge")
        if knowledge is not None:  # its extraction workers
            knowledge.close()
        # The audit step writes to the governance's chain (a bare yard audits nothing).
        governance = built(self.governing, "governance")
        stop_audit = getattr(getattr(governance, "audit", None), "close", None)
        if stop_audit is not None:  # events waiting for their group commit are written first
            stop_audit()
        self.store.close()

    def __enter__(self) -> Yard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
