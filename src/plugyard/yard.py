"""The composition root: ``Yard.from_settings()`` builds everything, and nothing else does.

A yard opens the store (SQLite by default, PostgreSQL when ``PLUGYARD_DATABASE_URL``
says so), syncs the registry from its sources (the bundled plugins, plugin folders, a
catalog file, allowlisted entry points, and externals already in the store), lets each
runtime check and refine what it will run, and wires the executor — the one call path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from plugyard.builtins import BUILTINS_DIR
from plugyard.discovery.choose import embedder_from_spec
from plugyard.discovery.query import CanSee, Filters, Match, allow_all
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import SqlVectorRepository
from plugyard.errors import PlugyardError, RegistryError
from plugyard.execution.admin import Administration
from plugyard.execution.executor import CallRequest, Executor, Limits, new_request_id
from plugyard.execution.governance import Governance
from plugyard.execution.result import Result
from plugyard.feeds.scheduler import FeedScheduler
from plugyard.llm import ChatModel, llm_from_spec
from plugyard.manifest.model import Operation
from plugyard.pipelines.service import PipelineService
from plugyard.pipelines.store_sql import SqlPipelineStore
from plugyard.policy.base import Subject
from plugyard.policy.book import PolicyBook, facts_from
from plugyard.registry import external_file
from plugyard.registry.catalog import CatalogSource
from plugyard.registry.entrypoints import EntryPointSource
from plugyard.registry.intake import read_plugins
from plugyard.registry.model import RegisteredPlugin, RegistryEvent
from plugyard.registry.packages import Installer, PackageManager, PackageSource
from plugyard.registry.registry import Registry
from plugyard.registry.sources import FolderSource, PluginSource, SourceResult
from plugyard.registry.sync import SyncReport, sync_on_start
from plugyard.routing import Answer, Router
from plugyard.runtimes.base import CallContext, Runtime, Target
from plugyard.runtimes.http import HealthChecker, HttpPluginRuntime, check_registration
from plugyard.runtimes.mcp import McpPluginRuntime
from plugyard.runtimes.outbound import OutboundClient, OutboundGuard
from plugyard.runtimes.python.guard import scan_folder
from plugyard.runtimes.python.runtime import InProcessRuntime
from plugyard.runtimes.subprocess import SubprocessPluginRuntime, SubprocessSettings
from plugyard.store.keys import ADMIN_ROLE, SqlKeyRepository
from plugyard.store.mcp_pins import SqlPinRepository, ToolPin
from plugyard.store.policies import SqlPolicyRepository
from plugyard.store.store import Store


@dataclass(frozen=True)
class Settings:
    """Everything a yard is built from; :meth:`from_env` reads ``PLUGYARD_*``."""

    # A URL or a SQLite path; None → PLUGYARD_DATABASE_URL, else ./.plugyard/plugyard.db.
    database: str | None = None
    builtins: bool = True
    plugin_dirs: tuple[Path, ...] = ()
    catalog: Path | None = None
    entrypoints: tuple[str, ...] = ()  # allowlisted distributions or "dist:entry" names
    default_timeout_ms: int = 30_000
    # External HTTP plugins (docs/server.md): what the outbound guard lets through despite
    # its rules ("127.0.0.1:8765", "10.0.0.0/8"), and the health checks' hysteresis.
    outbound_allow: tuple[str, ...] = ()
    # Subprocess wrappers (docs/subprocess.md): executables allowed beside the running
    # Python interpreter and node (names on PATH or absolute paths).
    subprocess_allow: tuple[str, ...] = ()
    health_interval_s: float = 10.0
    health_threshold: int = 3
    # Discovery's embedder (docs/discovery.md): minilm | hashing | openai:<url>:<model> |
    # ollama:<model>; None → PLUGYARD_EMBEDDER, else minilm.
    embedder: str | None = None
    embedder_api_key: str | None = None  # for openai:…; else OPENAI_API_KEY
    ollama_url: str | None = None  # for ollama:…; else OLLAMA_HOST
    # Governance (docs/governance.md): a policy file applied at start (else the stored
    # policy, else none: allow all); governed=False drops the durable audit and the rest.
    policy_file: Path | None = None
    governed: bool = True
    # Installed plugin packages (docs/packages.md); None → PLUGYARD_PACKAGES_DIR, else a
    # ``packages`` folder beside the SQLite file (./.plugyard/packages by default).
    packages_dir: Path | None = None
    # HomeClaw's file of external registrations (registry/external_file.py); None →
    # PLUGYARD_EXTERNAL_PLUGINS_FILE, else external_plugins.json beside the packages.
    external_plugins_file: Path | None = None
    # The chat model flows use (docs/llm.md): embedded | openai:<url>:<model> |
    # ollama:<model>; None → PLUGYARD_LLM, else embedded.
    llm: str | None = None
    llm_api_key: str | None = None  # for openai:…; else OPENAI_API_KEY

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        env = os.environ if environ is None else environ
        dirs = tuple(Path(p) for p in env.get("PLUGYARD_PLUGIN_DIRS", "").split(os.pathsep) if p)
        allow = tuple(a for a in env.get("PLUGYARD_ENTRYPOINTS", "").split(",") if a)
        catalog = env.get("PLUGYARD_CATALOG")
        base = cls(
            database=env.get("PLUGYARD_DATABASE_URL"),
            builtins=env.get("PLUGYARD_BUILTINS", "1") not in {"0", "false", "no"},
            plugin_dirs=dirs,
            catalog=Path(catalog) if catalog else None,
            entrypoints=allow,
            outbound_allow=tuple(
                a for a in env.get("PLUGYARD_OUTBOUND_ALLOW", "").split(",") if a.strip()
            ),
            subprocess_allow=tuple(
                a for a in env.get("PLUGYARD_SUBPROCESS_ALLOW", "").split(",") if a.strip()
            ),
            embedder=env.get("PLUGYARD_EMBEDDER"),
            embedder_api_key=env.get("PLUGYARD_EMBEDDER_API_KEY") or env.get("OPENAI_API_KEY"),
            ollama_url=env.get("OLLAMA_HOST"),
            policy_file=Path(env["PLUGYARD_POLICY_FILE"])
            if env.get("PLUGYARD_POLICY_FILE")
            else None,
            packages_dir=Path(env["PLUGYARD_PACKAGES_DIR"])
            if env.get("PLUGYARD_PACKAGES_DIR")
            else None,
            external_plugins_file=Path(env["PLUGYARD_EXTERNAL_PLUGINS_FILE"])
            if env.get("PLUGYARD_EXTERNAL_PLUGINS_FILE")
            else None,
            llm=env.get("PLUGYARD_LLM"),
            llm_api_key=env.get("PLUGYARD_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


_log = logging.getLogger("plugyard.yard")


@dataclass(frozen=True)
class _Checked:
    """A source whose plugins the runtimes have checked (and refined from code) before
    they are registered, so a restart registers exactly what it registered before."""

    inner: PluginSource
    runtimes: Mapping[str, Runtime]

    @property
    def name(self) -> str:
        return self.inner.name

    def load(self) -> SourceResult:
        result = self.inner.load()
        checked = tuple(check(plugin, self.runtimes) for plugin in result.plugins)
        return replace(result, plugins=checked)


def check(plugin: RegisteredPlugin, runtimes: Mapping[str, Runtime]) -> RegisteredPlugin:
    """``plugin`` as its runtime sees it: refined from code, or unavailable with a reason."""
    runtime_spec = plugin.descriptor.runtime
    if runtime_spec.kind == "none":
        reason = runtime_spec.reason or "descriptor only: nothing to run"
        return replace(plugin, available=False, unavailable_reason=reason)
    runtime = runtimes.get(runtime_spec.kind)
    if runtime is None:
        return replace(
            plugin, available=False, unavailable_reason=f"no {runtime_spec.kind!r} runtime here"
        )
    target = Target(plugin.descriptor, plugin.location, plugin.trust, plugin.content_hash)
    problem = runtime.check(target)
    if problem is not None:
        return replace(plugin, available=False, unavailable_reason=problem)
    describe = getattr(runtime, "describe", None)
    refined = describe(target) if describe is not None else None
    if refined is None or refined == plugin.descriptor:
        return plugin
    return plugin.redescribed(refined)


@dataclass
class Yard:
    """A running plugyard: store, registry, runtimes and executor, built once."""

    settings: Settings
    store: Store
    registry: Registry
    runtimes: dict[str, Runtime]
    executor: Executor
    report: SyncReport
    sources: Sequence[PluginSource] = field(default_factory=tuple)
    _discovery: DiscoveryService | None = field(default=None, repr=False)
    health: HealthChecker | None = field(default=None, repr=False)
    policy: PolicyBook | None = field(default=None, repr=False)
    governance: Governance | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Yard:
        settings = settings or Settings.from_env()
        store = Store.open(settings.database)
        registry = Registry.over(store)
        outbound = OutboundClient(OutboundGuard.of(settings.outbound_allow))
        http = HttpPluginRuntime(outbound)
        runtimes: dict[str, Runtime] = {"python": InProcessRuntime(), "http": http}
        runtimes["mcp"] = McpPluginRuntime(SqlPinRepository(store), outbound.guard)
        runtimes["subprocess"] = SubprocessPluginRuntime(
            SubprocessSettings(allow=settings.subprocess_allow)
        )
        sources = [_Checked(s, runtimes) for s in _sources(settings)]
        report = sync_on_start(registry, sources)
        policy = governance = None
        if settings.governed:
            policy = PolicyBook(SqlPolicyRepository(store), facts=facts_from(registry.find),
                                file=settings.policy_file)  # fmt: skip
            governance = Governance.over(
                store,
                http_client=outbound,
                egress=_egress(policy),
                approval_ttl_s=lambda: policy.approval_settings().ttl_s,
            )
        executor = Executor(
            registry, runtimes, limits=Limits(default_timeout_ms=settings.default_timeout_ms),
            policy=policy, audit=governance.audit if governance else None, governance=governance,
        )  # fmt: skip
        yard = cls(settings, store, registry, runtimes, executor, report, tuple(sources))
        yard.policy, yard.governance = policy, governance
        yard.health = HealthChecker(registry, outbound, threshold=settings.health_threshold,
                                    interval_s=settings.health_interval_s)  # fmt: skip
        mcp = runtimes["mcp"]
        assert isinstance(mcp, McpPluginRuntime)
        mcp.tools_changed = yard._mcp_tools_changed
        return yard

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
    ) -> Result:
        """Call one operation through the executor.

        The application that embeds plugyard is trusted to say who calls: ``subject``
        and ``roles`` are taken as given (a server takes them from the API key). A call
        with neither is the application's own and holds the ``admin`` role; a call for
        a subject holds only the roles given here and those the policy lists for it."""
        if roles is None:
            roles = (ADMIN_ROLE,) if subject is None else ()
        context = CallContext(
            request_id=new_request_id(), subject=subject, roles=tuple(roles), debug=debug
        )
        request = CallRequest(plugin_id, operation, dict(params or {}), context, timeout_ms)
        return await self.executor.call(request)

    @property
    def discovery(self) -> DiscoveryService:
        """Plugin search. The model loads when this is first read, and the index is
        built on the first search (or rebuild); from then on it follows the registry."""
        if self._discovery is None:
            s = self.settings
            embedder = embedder_from_spec(
                s.embedder, api_key=s.embedder_api_key, ollama_url=s.ollama_url
            )
            self._discovery = DiscoveryService(
                self.registry, embedder, SqlVectorRepository(self.store)
            )
        return self._discovery

    def search(self, query: str, k: int = 5, filters: Filters | None = None) -> list[Match]:
        """The ``k`` plugins that best match ``query`` (docs/discovery.md)."""
        return self.discovery.search(query, k, filters)

    def rights(self, subject: str | None, roles: Sequence[str] = ()) -> CanSee:
        """What ``subject`` may see in searches and listings: the operations the policy
        lets it call (a plugin shows when one of its operations does). Without
        governance, everything."""
        book = self.policy
        if book is None:
            return allow_all
        who = Subject(subject, tuple(roles))

        def can_see(plugin_id: str, operation: str | None) -> bool:
            return operation is None or book.visible(who, plugin_id, operation)

        return can_see

    def visible(self, plugin: RegisteredPlugin, can_see: CanSee) -> bool:
        """Whether a listing shows ``plugin`` to a caller with ``can_see``."""
        ops = plugin.descriptor.operations
        return can_see(plugin.id, None) and (
            not ops or any(can_see(plugin.id, op.id) for op in ops)
        )

    def tools_for(
        self,
        query: str,
        k: int = 5,
        format: str = "openai",
        filters: Filters | None = None,
        *,
        strict: bool = False,
    ) -> list[dict[str, Any]]:
        """Function-calling definitions of the operations ``search`` finds; ``strict``
        gives OpenAI's strict-mode definitions (docs/tools.md)."""
        return self.discovery.tools_for(query, k, format, filters, strict=strict)

    @property
    def outbound(self) -> OutboundClient:
        """The HTTP client every outbound request goes through (under the guard)."""
        runtime = self.runtimes["http"]
        assert isinstance(runtime, HttpPluginRuntime)
        return runtime.client

    @property
    def keys(self) -> SqlKeyRepository:
        """The service's API keys (hashed) and their subjects."""
        return SqlKeyRepository(self.store)

    async def register_external(self, data: Any) -> tuple[RegistryEvent, ...]:
        """Register the http plugins of a registration body (HomeClaw, or any dialect):
        all are checked — runtime, URLs under the outbound guard — before any is stored.
        Registering an id again replaces it; an id held by a non-external plugin is
        ``duplicate_plugin``."""
        read = read_plugins(data)
        await check_registration([d for d, _ in read], self.outbound.guard)
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
                external_file.write(path, external)

    def mcp_tool_pins(self, plugin_id: str | None = None) -> list[ToolPin]:
        """The pinned and last seen definition hash of every MCP tool (docs/mcp.md)."""
        runtime = self.runtimes["mcp"]
        assert isinstance(runtime, McpPluginRuntime)
        return runtime.tool_pins(plugin_id)

    def _mcp_tools_changed(self, plugin_id: str, operations: tuple[Operation, ...]) -> None:
        """An MCP server added or dropped tools while connected: register the plugin
        again with them, so listings, search and calls see the new list at once."""
        held = self.registry.find(plugin_id)
        if held is None or held.descriptor.operations == operations:
            return
        refined = held.descriptor.model_copy(update={"operations": operations})
        self.registry.register(held.redescribed(refined), replace=True)

    def approve_mcp_tool(self, plugin_id: str, tool: str, *, by: str | None = None) -> ToolPin:
        """Trust the definition an MCP tool shows now, re-enabling a changed tool
        (``operation_not_found`` when the tool was never seen). Audited when governed."""
        runtime = self.runtimes["mcp"]
        assert isinstance(runtime, McpPluginRuntime)
        pin = runtime.approve(plugin_id, tool, by)
        if pin is None:
            raise PlugyardError(
                f"no MCP tool {tool!r} was seen for plugin {plugin_id!r}",
                code="operation_not_found",
            )
        if self.governance is not None:
            self.governance.audit.append(
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

    @cached_property
    def llm(self) -> ChatModel:
        """The chat model (docs/llm.md); nothing loads or connects until its first call.
        A model server is reached under the outbound guard, so one on loopback needs an
        ``outbound_allow`` entry."""
        s = self.settings
        return llm_from_spec(
            s.llm,
            api_key=s.llm_api_key,
            ollama_url=s.ollama_url,
            socket_factory=self.outbound.guard.socket_factory,
        )

    @cached_property
    def router(self) -> Router:
        """The routing flow (docs/routing.md); the model is built on its first question."""
        return Router(self.executor, self.search, self.rights, lambda: self.llm)

    async def ask(self, message: str, **options: Any) -> Answer:
        """Route ``message`` to the operations the caller may call and answer it:
        ``subject``, ``roles``, ``k``, ``max_steps``, ``llm``… as ``Router.ask``."""
        return await self.router.ask(message, **options)

    @cached_property
    def pipelines(self) -> PipelineService:
        """Store, validate and run pipelines; read their traces (docs/pipelines.md)."""
        return PipelineService(self.registry, self.executor, SqlPipelineStore(self.store))

    @cached_property
    def admin(self) -> Administration:
        """Policy, approvals, actions, secrets and the audit log (docs/governance.md)."""
        if self.governance is None or self.policy is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        return Administration(self.governance, self.policy, self.executor, self.registry.list)

    @cached_property
    def packages(self) -> PackageManager:
        """Install, list and remove plugin packages (docs/packages.md)."""
        root = packages_root(self.settings)
        if root is None:
            raise PlugyardError("this yard has no packages folder (Settings.packages_dir)",
                                code="capability_unavailable")  # fmt: skip
        installer = Installer(root, scan=scan_folder)
        installer.sweep()  # what a killed install, upgrade or removal left behind
        return PackageManager(
            installer, self.registry, lambda p: check(p, self.runtimes), self._forget
        )

    def _forget(self, plugin_id: str) -> None:
        """Every runtime lets go of ``plugin_id``: its workers stop, its code is dropped."""
        for runtime in self.runtimes.values():
            forget = getattr(runtime, "forget", None)
            if forget is not None:
                forget(plugin_id)

    @cached_property
    def feeds(self) -> FeedScheduler:
        """Scheduled operations, run as their owner (docs/governance.md#feeds)."""
        if self.governance is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        return FeedScheduler(
            self.executor, self.governance.feeds, self.governance.kv, self.registry
        )

    def close(self) -> None:
        for runtime in self.runtimes.values():
            kill_all = getattr(runtime, "kill_all", None)
            if kill_all is not None:  # subprocess workers (their trees) die with the yard
                kill_all()
        if self._discovery is not None:
            self._discovery.close()
        stop_audit = getattr(self.executor.audit, "close", None)
        if stop_audit is not None:  # events waiting for their group commit are written first
            stop_audit()
        self.store.close()

    def __enter__(self) -> Yard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _sources(settings: Settings) -> list[PluginSource]:
    sources: list[PluginSource] = []
    if settings.builtins:
        sources.append(FolderSource(BUILTINS_DIR, trust="trusted", kind="builtin"))
    sources.extend(FolderSource(path, trust="trusted") for path in settings.plugin_dirs)
    if settings.catalog is not None:
        sources.append(CatalogSource(settings.catalog))
    if settings.entrypoints:
        sources.append(EntryPointSource.of(settings.entrypoints))
    packages = packages_root(settings)
    if packages is not None:
        sources.append(PackageSource(packages))
    return sources


def packages_root(settings: Settings) -> Path | None:
    """Where installed packages live; ``None`` for an in-memory store without a setting."""
    if settings.packages_dir is not None:
        return settings.packages_dir
    database = settings.database
    if database is None:
        return Path(".plugyard") / "packages"
    if database.startswith("sqlite:"):
        database = database.partition(":///")[2] or ":memory:"
    elif "://" in database:
        return Path(".plugyard") / "packages"
    if database in ("", ":memory:"):
        return None
    return Path(database).parent / "packages"


def external_plugins_path(settings: Settings) -> Path | None:
    """Where external registrations are mirrored; ``None`` for an in-memory store
    without a setting."""
    if settings.external_plugins_file is not None:
        return settings.external_plugins_file
    packages = packages_root(settings)
    return None if packages is None else packages.parent / "external_plugins.json"


def _egress(policy: PolicyBook) -> Callable[[RegisteredPlugin], tuple[str, ...]]:
    """Each plugin's ``host.http`` allowlist, as the policy in force says."""

    def egress(plugin: RegisteredPlugin) -> tuple[str, ...]:
        asked = plugin.descriptor.config.get("egress")
        declared = tuple(h for h in asked if isinstance(h, str)) if isinstance(asked, list) else ()
        # What an untrusted manifest asks for is not granted by asking: until a loaded
        # policy lists its hosts, its host.http reaches nothing (Shu: "security review
        # needed before enabling host.http ... in untrusted plugins").
        return policy.egress(plugin.id, declared if plugin.trust == "trusted" else ())

    return egress
