"""The composition root: ``Yard.from_settings()`` builds everything, and nothing else does.

A yard opens the store (SQLite by default, PostgreSQL when ``PLUGYARD_DATABASE_URL``
says so), syncs the registry from its sources (the bundled plugins, plugin folders, a
catalog file, allowlisted entry points, and externals already in the store), lets each
runtime check and refine what it will run — only what changed since the last start
(:mod:`plugyard.registry.memory`) — and wires the executor, the one call path, when it
is first used.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from plugyard import __version__
from plugyard.builtins import BUILTINS_DIR
from plugyard.deferred import DeferredRuntime, Runtimes, built, part
from plugyard.discovery.query import CanSee, Filters, Matches, allow_all
from plugyard.errors import PlugyardError, RegistryError
from plugyard.manifest.model import Operation
from plugyard.policy.base import Subject
from plugyard.policy.sight import Sight
from plugyard.registry.intake import read_plugins
from plugyard.registry.memory import FolderMemory
from plugyard.registry.model import RegisteredPlugin, RegistryEvent
from plugyard.registry.packages.source import PackageSource
from plugyard.registry.registry import Registry
from plugyard.registry.sources import FolderSource, PluginSource, SourceResult
from plugyard.registry.sync import SyncReport, sync_on_start
from plugyard.runtimes.base import CallContext, Runtime, Target
from plugyard.runtimes.python.runtime import InProcessRuntime
from plugyard.store.folders import SqlFolderMarks
from plugyard.store.home import data_home
from plugyard.store.store import Store
from plugyard.store.urls import DATABASE_URL_ENV

# The rest is imported where it is first needed: a command that lists plugins must not
# load the server, MCP, discovery or governance stacks (see plugyard.deferred).
if TYPE_CHECKING:
    from plugyard.discovery.learning import Outcome
    from plugyard.discovery.service import DiscoveryService
    from plugyard.execution.admin import Administration
    from plugyard.execution.backend import Caller, ExecutionBackend
    from plugyard.execution.executor import Executor
    from plugyard.execution.governance import Governance
    from plugyard.execution.result import Result
    from plugyard.feeds.scheduler import FeedScheduler
    from plugyard.kb.service import KnowledgeBase
    from plugyard.llm import ChatModel
    from plugyard.pipelines.service import PipelineService
    from plugyard.policy.book import PolicyBook
    from plugyard.reasoning import Reasoned, ReasoningService
    from plugyard.reasoning.trace import OnEvent
    from plugyard.registry.packages import PackageManager
    from plugyard.routing import Answer, Router
    from plugyard.routing.chat import ChatFlow
    from plugyard.runtimes.http import HealthChecker
    from plugyard.runtimes.mcp import McpPluginRuntime
    from plugyard.runtimes.outbound import OutboundClient
    from plugyard.store.keys import SqlKeyRepository
    from plugyard.store.mcp_pins import ToolPin


@dataclass(frozen=True)
class Settings:
    """Everything a yard is built from; :meth:`from_env` reads ``PLUGYARD_*``."""

    # A URL or a SQLite path; None → PLUGYARD_DATABASE_URL, else plugyard.db in the data
    # folder (plugyard.store.home: PLUGYARD_HOME, else ~/.local/share/plugyard).
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
    # Discovery learning from accepted calls and feedback (docs/discovery.md, "Memory"):
    # PLUGYARD_DISCOVERY_LEARNING=off stops it; the rest bound what it keeps.
    discovery_learning: bool = True
    discovery_learning_per_subject: int = 20
    discovery_learning_quorum: int = 3
    discovery_learning_keep: int = 1000
    discovery_learning_days: float = 365.0
    # Governance (docs/governance.md): a policy file applied at start (else the stored
    # policy, else none: allow all); governed=False drops the durable audit and the rest.
    policy_file: Path | None = None
    governed: bool = True
    # Installed plugin packages (docs/packages.md); None → PLUGYARD_PACKAGES_DIR, else a
    # ``packages`` folder beside the SQLite file (in the data folder by default).
    packages_dir: Path | None = None
    # HomeClaw's file of external registrations (registry/external_file.py); None →
    # PLUGYARD_EXTERNAL_PLUGINS_FILE, else external_plugins.json beside the packages.
    external_plugins_file: Path | None = None
    # The chat model flows use (docs/llm.md): embedded | openai:<url>:<model> |
    # ollama:<model>; None → PLUGYARD_LLM, else embedded.
    llm: str | None = None
    llm_api_key: str | None = None  # for openai:…; else OPENAI_API_KEY
    # Identity providers behind Shu's host.auth (docs/shu.md): a YAML file of OAuth2
    # token endpoints; None → PLUGYARD_AUTH_PROVIDERS, else none.
    auth_providers: Path | None = None
    # Per-plugin virtual environments for packages with a requirements.txt (docs/shu.md):
    # off unless PLUGYARD_PLUGIN_VENVS=1; wheels from PLUGYARD_VENV_WHEELS (a folder) or
    # PLUGYARD_VENV_INDEX_URL, never from anywhere else.
    plugin_venvs: bool = False
    venv_index_url: str | None = None
    venv_wheels: Path | None = None
    # Where fan-out runs (docs/scaling.md#ray): local (asyncio here) | ray:local |
    # ray://host:port — pipeline branches and iterations, feed runs and heavy operations.
    execution: str = "local"
    execution_connect_timeout_s: float = 10.0

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
            discovery_learning=env.get("PLUGYARD_DISCOVERY_LEARNING", "on").lower()
            not in {"0", "off", "false", "no"},
            discovery_learning_per_subject=int(
                env.get("PLUGYARD_DISCOVERY_LEARNING_PER_SUBJECT", "20")
            ),
            discovery_learning_quorum=int(env.get("PLUGYARD_DISCOVERY_LEARNING_QUORUM", "3")),
            discovery_learning_keep=int(env.get("PLUGYARD_DISCOVERY_LEARNING_KEEP", "1000")),
            discovery_learning_days=float(env.get("PLUGYARD_DISCOVERY_LEARNING_DAYS", "365")),
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
            auth_providers=Path(env["PLUGYARD_AUTH_PROVIDERS"])
            if env.get("PLUGYARD_AUTH_PROVIDERS")
            else None,
            plugin_venvs=env.get("PLUGYARD_PLUGIN_VENVS", "0") in {"1", "true", "yes"},
            venv_index_url=env.get("PLUGYARD_VENV_INDEX_URL"),
            venv_wheels=Path(env["PLUGYARD_VENV_WHEELS"])
            if env.get("PLUGYARD_VENV_WHEELS")
            else None,
            execution=env.get("PLUGYARD_EXECUTION") or "local",
            execution_connect_timeout_s=float(
                env.get("PLUGYARD_EXECUTION_CONNECT_TIMEOUT_S") or 10.0
            ),
        )
        return replace(base, **{k: v for k, v in overrides.items() if v is not None})


_log = logging.getLogger("plugyard.yard")


@dataclass(frozen=True)
class _Teacher:
    """The routing flow's way to let discovery learn (routing.retrieve.Teacher)."""

    yard: Yard

    def search(self, query: str, k: int, filters: Filters, subject: str) -> Matches:
        return self.yard.search(query, k, filters, subject=subject)

    def accepted(self, search_id: str, subject: str, plugin_id: str, operation: str) -> None:
        self.yard.learn_from_call(search_id, subject, plugin_id, operation)


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


class Yard:
    """A running plugyard: store, registry, runtimes and executor, built once.

    ``from_settings`` opens the store and syncs the registry; the rest — the executor
    with its policy and governance, the HTTP, MCP and subprocess runtimes, health checks,
    discovery, pipelines — is built on first use, once (:mod:`plugyard.deferred`)."""

    def __init__(self, settings: Settings, store: Store, registry: Registry) -> None:
        self.settings = settings
        self.store = store
        self.registry = registry
        self.runtimes = Runtimes({
            # In-process plugins are the hot path: no indirection on their calls.
            "python": InProcessRuntime(),
            "http": DeferredRuntime("http", self._http_runtime),
            "mcp": DeferredRuntime("mcp", self._mcp_runtime),
            "subprocess": DeferredRuntime("subprocess", self._subprocess_runtime),
        })  # fmt: skip
        self.sources: Sequence[PluginSource] = ()
        self.report = SyncReport()

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> Yard:
        settings = settings or Settings.from_env()
        store = Store.open(settings.database)
        registry = Registry.over(store)
        yard = cls(settings, store, registry)
        memory = FolderMemory(SqlFolderMarks(store), registry, context=_check_context(settings))
        checks = yard.runtimes.lazy
        yard.sources = tuple(_Checked(s, checks) for s in _sources(settings, memory))
        yard.report = sync_on_start(registry, yard.sources, memory=memory)
        return yard

    # parts built on first use ---------------------------------------------------------

    @part
    def policy(self) -> PolicyBook | None:
        """The policy in force (``None`` when not governed); a policy file given in the
        settings is applied when this is first read."""
        if not self.settings.governed:
            return None
        from plugyard.policy.book import PolicyBook, facts_from
        from plugyard.store.policies import SqlPolicyRepository

        return PolicyBook(SqlPolicyRepository(self.store), facts=facts_from(self.registry.find),
                          file=self.settings.policy_file)  # fmt: skip

    @part
    def governance(self) -> Governance | None:
        policy = self.policy
        if policy is None:
            return None
        from plugyard.execution.governance import Governance

        governance = Governance.over(
            self.store,
            http_client=self.outbound,
            egress=_egress(policy),
            approval_ttl_s=lambda: policy.approval_settings().ttl_s,
            kb=self.knowledge,
        )
        if self.settings.auth_providers is not None and governance.identities is not None:
            from plugyard.auth.config import providers_from_file

            vault = governance.vault
            for provider in providers_from_file(
                self.settings.auth_providers, lambda name: vault.resolve(name, None, "system")
            ):
                governance.identities.providers.register(provider)
        return governance

    @part
    def knowledge(self) -> KnowledgeBase:
        """The knowledge base behind Shu's host.kb, host.query and host.ocr (docs/shu.md),
        embedding with discovery's embedder (loaded on the first ingestion or search)."""
        from plugyard.kb.extraction import TextExtractor
        from plugyard.kb.ocr import TesseractEngine
        from plugyard.kb.service import KnowledgeBase
        from plugyard.store.kb import SqlKbRepository

        extractor = TextExtractor(TesseractEngine())
        return KnowledgeBase(SqlKbRepository(self.store), lambda: self.discovery.embedder,
                             extractor)  # fmt: skip

    @part
    def executor(self) -> Executor:
        """The one call path."""
        from plugyard.execution.executor import Executor, Limits

        governance, limits = self.governance, Limits(self.settings.default_timeout_ms)
        executor = Executor(self.registry, self.runtimes.lazy, limits=limits,
                            policy=self.policy, audit=governance.audit if governance else None,
                            governance=governance)  # fmt: skip
        if self.backend is not None:
            executor.offload = self.backend  # heavy operations run there
        return executor

    @part
    def backend(self) -> ExecutionBackend | None:
        """The execution backend fan-out runs on (docs/scaling.md#ray); ``None`` for
        ``local``: the executor itself, on this event loop."""
        from plugyard.execution.backend import BackendSpec

        spec = BackendSpec.parse(self.settings.execution)
        if not spec.remote:
            return None
        from plugyard.execution.ray_backend import RayBackend, WorkerSpec

        url = self.store.engine.url
        if url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:"):
            raise PlugyardError("a Ray worker cannot open an in-memory database: "
                                "give the yard a SQLite file or a PostgreSQL URL",
                                code="execution_backend_unavailable")  # fmt: skip
        # The worker builds its yard on the same database (the URL with its password: the
        # worker must log in too) and runs everything itself. It reads the registry and
        # the policy this yard keeps there, never its sources or policy file again.
        database = url.render_as_string(hide_password=False)
        worker_settings = replace(self.settings, database=database, execution="local",
                                  policy_file=None)  # fmt: skip
        # One yard per worker process for equal settings, however many callers share them.
        key = hashlib.sha256(repr(worker_settings).encode()).hexdigest()
        governance = self.governance
        return RayBackend(
            spec.address,
            WorkerSpec(key, functools.partial(worker_executor, worker_settings)),
            connect_timeout_s=self.settings.execution_connect_timeout_s,
            default_timeout_ms=self.settings.default_timeout_ms,
            audit=governance.audit if governance is not None else None,
        )

    def fanout(self) -> Caller:
        """What fan-out calls go to: the backend, else the executor."""
        return self.backend if self.backend is not None else self.executor

    @part
    def outbound(self) -> OutboundClient:
        """The HTTP client every outbound request goes through (under the guard)."""
        from plugyard.runtimes.outbound import OutboundClient, OutboundGuard

        return OutboundClient(OutboundGuard.of(self.settings.outbound_allow))

    @part
    def health(self) -> HealthChecker | None:
        """Health checks of external HTTP plugins (run by the server)."""
        from plugyard.runtimes.http import HealthChecker

        s = self.settings
        return HealthChecker(self.registry, self.outbound, threshold=s.health_threshold,
                             interval_s=s.health_interval_s)  # fmt: skip

    def _http_runtime(self) -> Runtime:
        from plugyard.runtimes.http import HttpPluginRuntime

        return HttpPluginRuntime(self.outbound)

    def _mcp_runtime(self) -> Runtime:
        from plugyard.runtimes.mcp import McpPluginRuntime
        from plugyard.store.mcp_pins import SqlPinRepository

        runtime = McpPluginRuntime(SqlPinRepository(self.store), self.outbound.guard)
        runtime.tools_changed = self._mcp_tools_changed
        return runtime

    def _subprocess_runtime(self) -> Runtime:
        from plugyard.runtimes.subprocess import SubprocessPluginRuntime, SubprocessSettings

        return SubprocessPluginRuntime(SubprocessSettings(allow=self.settings.subprocess_allow))

    # ----------------------------------------------------------------------------------

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
        from plugyard.store.keys import ADMIN_ROLE

        if roles is None:
            roles = (ADMIN_ROLE,) if subject is None else ()
        context = CallContext(
            request_id=new_request_id(), subject=subject, roles=tuple(roles), debug=debug
        )
        request = CallRequest(plugin_id, operation, dict(params or {}), context, timeout_ms)
        result = await self.executor.call(request)
        if search_id is not None and subject is not None and result.ran_ok:
            self.learn_from_call(search_id, subject, plugin_id, result.operation or operation)
        return result

    def learn_from_call(
        self, search_id: str, subject: str, plugin_id: str, operation: str | None
    ) -> None:
        """A call by ``subject`` that named ``search_id`` succeeded: let discovery
        remember the search's request for that operation (every call surface ends
        here)."""
        discovery = built(self, "discovery")
        if discovery is None:
            return  # no search ran in this process, so no search id can be known
        try:
            discovery.accepted(search_id, subject, plugin_id, operation)
        except PlugyardError as exc:
            # The call succeeded; failing to learn from it must not fail it.
            _log.warning("discovery did not learn from a call: %s", exc)

    @part
    def discovery(self) -> DiscoveryService:
        """Plugin search. The model loads when this is first read, and the index is
        built on the first search (or rebuild); from then on it follows the registry."""
        from plugyard.discovery.choose import embedder_from_spec
        from plugyard.discovery.learning import Learning, LearningSettings
        from plugyard.discovery.pgvector import dense_source_for, vectors_for
        from plugyard.discovery.remembered import SqlRememberedRepository
        from plugyard.discovery.service import DiscoveryService

        s = self.settings
        embedder = embedder_from_spec(s.embedder, api_key=s.embedder_api_key,
                                      ollama_url=s.ollama_url)  # fmt: skip
        learning = Learning(
            embedder,
            SqlRememberedRepository(self.store, embedder.dim),
            LearningSettings(
                enabled=s.discovery_learning,
                per_subject=s.discovery_learning_per_subject,
                quorum=s.discovery_learning_quorum,
                keep=s.discovery_learning_keep,
                days=s.discovery_learning_days,
            ),
        )
        vectors = vectors_for(self.store, embedder.dim)
        source = dense_source_for(vectors, embedder.identity)
        return DiscoveryService(self.registry, embedder, vectors, learning, dense_source=source)

    def search(
        self,
        query: str,
        k: int = 5,
        filters: Filters | None = None,
        *,
        subject: str | None = None,
    ) -> Matches:
        """The ``k`` plugins that best match ``query`` (docs/discovery.md), with the
        ``search_id`` that a call or :meth:`feedback` by ``subject`` names."""
        return self.discovery.search(query, k, filters, subject=subject)

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

    def sight(self, subject: str | None, roles: Sequence[str] = ()) -> Sight | None:
        """What ``subject`` may call under the policy in force, for listings that ask
        about every plugin of the registry (``Sight.shows`` is :meth:`visible` under
        :meth:`rights`, without a Casbin question per plugin); ``None`` without
        governance, where everything shows."""
        book = self.policy
        return None if book is None else book.sight(Subject(subject, tuple(roles)))

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
    def keys(self) -> SqlKeyRepository:
        """The service's API keys (hashed) and their subjects."""
        from plugyard.store.keys import SqlKeyRepository

        return SqlKeyRepository(self.store)

    async def register_external(self, data: Any) -> tuple[RegistryEvent, ...]:
        """Register the http plugins of a registration body (HomeClaw, or any dialect):
        all are checked — runtime, URLs under the outbound guard — before any is stored.
        Registering an id again replaces it; an id held by a non-external plugin is
        ``duplicate_plugin``."""
        from plugyard.runtimes.http import check_registration

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
        return self._mcp().tool_pins(plugin_id)

    def _mcp(self) -> McpPluginRuntime:
        from plugyard.runtimes.mcp import McpPluginRuntime

        runtime = self.runtimes["mcp"]
        assert isinstance(runtime, McpPluginRuntime)
        return runtime

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
        from plugyard.execution.executor import new_request_id

        pin = self._mcp().approve(plugin_id, tool, by)
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

    @part
    def router(self) -> Router:
        """The routing flow (docs/routing.md); the model is built on its first question."""
        from plugyard.routing import Router

        return Router(self.executor, self.search, self.rights, lambda: self.llm,
                      teacher=_Teacher(self))  # fmt: skip

    @part
    def chat(self) -> ChatFlow:
        """The OpenAI-compatible chat flow (docs/openai.md): a conversation answered by
        the model with the tools the caller may call, run through the executor."""
        from plugyard.routing.chat import ChatFlow

        return ChatFlow(self.executor, self.search, self.rights, lambda: self.llm)

    async def ask(self, message: str, **options: Any) -> Answer:
        """Route ``message`` to the operations the caller may call and answer it:
        ``subject``, ``roles``, ``k``, ``max_steps``, ``llm``… as ``Router.ask``."""
        return await self.router.ask(message, **options)

    @part
    def reasoning(self) -> ReasoningService:
        """Reasoning flows over the MRP-VM families: sessions, sources and the DS027
        records in the store, the chat model for LLM-backed plugins, discovery's embedder
        for KB plugins that retrieve by meaning (docs/reasoning.md)."""
        from plugyard.reasoning import ReasoningService
        from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
        from plugyard.store.keys import ADMIN_ROLE

        return ReasoningService(
            self.executor, self.registry, SqlSessionStore(self.store),
            SqlOutcomeStore(self.store), model=lambda: self.llm,
            embed=lambda texts: self.discovery.embedder.embed(texts),
            application_roles=(ADMIN_ROLE,),
        )  # fmt: skip

    async def reason(
        self,
        prompt: str,
        *,
        session: str | None = None,
        sources: Any = (),
        pins: Mapping[str, str] | None = None,
        budget: int | None = None,
        subject: str | None = None,
        roles: Sequence[str] | None = None,
        on_event: OnEvent | None = None,
    ) -> Reasoned:
        """Answer ``prompt`` with the family plugins, ordered by a planner, and record the
        DS027 outcome (docs/reasoning.md). ``sources``: ``{name: text}`` staged for this
        turn; ``pins``: ``{stage: plugin}``; ``budget``: the LLM calls it may make. Who
        calls is as for :meth:`call`."""
        from plugyard.reasoning.context import Caller
        from plugyard.store.keys import ADMIN_ROLE

        if roles is None:
            roles = (ADMIN_ROLE,) if subject is None else ()
        return await self.reasoning.reason(
            prompt, session=session, sources=sources, pins=pins, budget=budget,
            caller=Caller(subject, tuple(roles)), on_event=on_event,
        )  # fmt: skip

    @part
    def pipelines(self) -> PipelineService:
        """Store, validate and run pipelines; read their traces (docs/pipelines.md)."""
        from plugyard.pipelines.service import PipelineService
        from plugyard.pipelines.store_sql import SqlPipelineStore

        return PipelineService(self.registry, self.executor, SqlPipelineStore(self.store),
                               fanout=self.fanout())  # fmt: skip

    @part
    def admin(self) -> Administration:
        """Policy, approvals, actions, secrets and the audit log (docs/governance.md)."""
        from plugyard.execution.admin import Administration

        governance, policy = self.governance, self.policy
        if governance is None or policy is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        return Administration(governance, policy, self.executor, self.registry.list)

    @part
    def packages(self) -> PackageManager:
        """Install, list and remove plugin packages (docs/packages.md)."""
        from plugyard.registry.packages import Installer, PackageManager
        from plugyard.runtimes.python.guard import scan_folder

        root = packages_root(self.settings)
        if root is None:
            raise PlugyardError("this yard has no packages folder (Settings.packages_dir)",
                                code="capability_unavailable")  # fmt: skip
        from plugyard.registry.packages.venvs import VenvPolicy

        s = self.settings
        venvs = VenvPolicy(s.plugin_venvs, s.venv_index_url, s.venv_wheels)
        installer = Installer(root, scan=scan_folder, venvs=venvs)
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

    @part
    def feeds(self) -> FeedScheduler:
        """Scheduled operations, run as their owner (docs/governance.md#feeds)."""
        from plugyard.feeds.scheduler import FeedScheduler

        governance = self.governance
        if governance is None:
            raise PlugyardError("this yard is not governed (Settings.governed)",
                                code="capability_unavailable")  # fmt: skip
        return FeedScheduler(self.executor, governance.feeds, governance.kv, self.registry,
                             runner=self.fanout())  # fmt: skip

    def close(self) -> None:
        """Stop what was started; a part never built is not built to be stopped."""
        for runtime in self.runtimes.built():
            kill_all = getattr(runtime, "kill_all", None)
            if kill_all is not None:  # subprocess workers (their trees) die with the yard
                kill_all()
        discovery = built(self, "discovery")
        if discovery is not None:
            discovery.close()
        backend = built(self, "backend")
        if backend is not None:
            backend.close()
        # The executor's audit is the governance's when governed; either may exist alone.
        owner = built(self, "executor") or built(self, "governance")
        stop_audit = getattr(getattr(owner, "audit", None), "close", None)
        if stop_audit is not None:  # events waiting for their group commit are written first
            stop_audit()
        self.store.close()

    def __enter__(self) -> Yard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_worker_yards: list[Yard] = []


def worker_executor(settings: Settings) -> Executor:
    """The executor of an execution backend's worker (execution.ray_worker): a yard on
    the caller's database that follows the registry and policy changes other processes
    make, as a replica does. Built once per worker process and database.

    It syncs no source: the replicas did, and the registry in the store says where each
    plugin's code is (a worker missing a plugin folder must not unregister it for the
    whole fleet). Plugins handed to a replica's runtime as code objects do not exist
    here."""
    from plugyard.store.watch import ChangeWatcher

    store = Store.open(settings.database)
    yard = Yard(settings, store, Registry.over(store))
    policy = yard.policy
    watcher = ChangeWatcher.over(store, {
        "plugins": yard.registry.refresh_ids,
        "policies": lambda _subjects: policy.refresh() if policy is not None else None,
    })  # fmt: skip
    yard.registry.load()  # after the watcher's first position: nothing falls between
    watcher.start()
    _worker_yards.append(yard)  # lives as long as the worker process
    return yard.executor


def _sources(settings: Settings, memory: FolderMemory | None = None) -> list[PluginSource]:
    sources: list[PluginSource] = []
    if settings.builtins:
        sources.append(FolderSource(BUILTINS_DIR, trust="trusted", kind="builtin", memory=memory))
    sources.extend(
        FolderSource(path, trust="trusted", memory=memory) for path in settings.plugin_dirs
    )
    if settings.catalog is not None:
        from plugyard.registry.catalog import CatalogSource

        sources.append(CatalogSource(settings.catalog, memory=memory))
    if settings.entrypoints:
        from plugyard.registry.entrypoints import EntryPointSource

        sources.append(EntryPointSource.of(settings.entrypoints))
    packages = packages_root(settings)
    if packages is not None:
        sources.append(PackageSource(packages))
    return sources


def packages_root(settings: Settings) -> Path | None:
    """Where installed packages live: beside a SQLite file, in the data folder for a
    server database; ``None`` for an in-memory store without a setting."""
    if settings.packages_dir is not None:
        return settings.packages_dir
    # The store's own rule (Store.open): no setting → the variable → the data folder.
    database = settings.database or os.environ.get(DATABASE_URL_ENV)
    if database is None:
        return data_home() / "packages"
    if database.startswith("sqlite:"):
        database = database.partition(":///")[2] or ":memory:"
    elif "://" in database:
        return data_home() / "packages"
    if database in ("", ":memory:"):
        return None
    return Path(database).expanduser().parent / "packages"


def _check_context(settings: Settings) -> str:
    """What a runtime's verdict on an unchanged plugin folder also depends on: a change
    here has every folder read and checked again (registry.memory)."""
    return "|".join((__version__, sys.version, sys.executable, *sorted(settings.subprocess_allow)))


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
