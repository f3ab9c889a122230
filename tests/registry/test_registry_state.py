"""Whatever happens — refusals, store failures, listeners that raise — the registry and its
store agree after every call (a Hypothesis state machine over many call sequences)."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from plugyard.errors import PlugyardError
from plugyard.registry.model import RegisteredPlugin, RegistryEvent, SourceKind
from plugyard.registry.registry import Registry
from plugyard.registry.rows import to_row
from plugyard.store.plugins import PluginRepository
from plugyard.store.store import Store

from .conftest import plugin
from .helpers import FlakyRepository, assert_in_step

ids = st.sampled_from(["a", "b", "c"])
versions = st.sampled_from(["1.0", "1.5", "2.0", None])
sources: st.SearchStrategy[SourceKind] = st.sampled_from(["folder", "external", "catalog"])
families = st.sampled_from(["tool", "kb"])


@st.composite
def plugins(draw: st.DrawFn) -> RegisteredPlugin:
    source = draw(sources)
    return plugin(
        draw(ids),
        source=source,
        version=draw(versions),
        family=draw(families),
        description=draw(st.sampled_from(["one", "two"])),
    )


def failure_of(action: Callable[[], object]) -> str | None:
    """The error code ``action`` raised, or ``None``."""
    try:
        action()
    except PlugyardError as exc:
        return exc.code
    return None


class RegistryMachine(RuleBasedStateMachine):
    """Base: subclasses choose the repository."""

    repository: PluginRepository

    @initialize()
    def build(self) -> None:
        self.registry = Registry(self.repository)
        self.events: list[RegistryEvent] = []
        self.registry.subscribe(self.events.append)
        self.registry.subscribe(self._sometimes_raise)

    def _sometimes_raise(self, event: RegistryEvent) -> None:
        if event.plugin_id == "b":
            raise RuntimeError("a listener with a bug")

    @rule(candidate=plugins(), replace_=st.booleans())
    def register(self, candidate: RegisteredPlugin, replace_: bool) -> None:
        before = self.registry.find(candidate.id)
        try:
            event = self.registry.register(candidate, replace=replace_)
        except PlugyardError as exc:
            refused: str | None = exc.code
        else:
            refused = None
        if refused is not None:
            assert refused in {"duplicate_plugin", "version_conflict", "store_error"}
            assert self.registry.find(candidate.id) == before
            return
        assert self.registry.find(candidate.id) == candidate
        if event is None:
            assert before is not None and to_row(before).same_entry(to_row(candidate))
        else:
            assert event.previous == before

    @rule(batch=st.lists(plugins(), min_size=1, max_size=3))
    def register_many(self, batch: list[RegisteredPlugin]) -> None:
        snapshot = self.registry.list()
        try:
            self.registry.register_many(batch)
        except PlugyardError:
            assert self.registry.list() == snapshot

    @rule(plugin_id=ids)
    def unregister(self, plugin_id: str) -> None:
        failed = failure_of(lambda: self.registry.unregister(plugin_id))
        if failed is not None:
            assert failed == "store_error"
            return
        assert self.registry.find(plugin_id) is None

    @rule(plugin_id=ids, available=st.booleans())
    def availability(self, plugin_id: str, available: bool) -> None:
        reason = None if available else "down"
        failed = failure_of(lambda: self.registry.set_availability(plugin_id, available, reason))
        if failed is not None:
            assert failed in {"plugin_not_found", "store_error"}
            return
        found = self.registry.find(plugin_id)
        assert found is not None and found.available == available

    @invariant()
    def in_step(self) -> None:
        if hasattr(self, "registry"):
            assert_in_step(self.registry)


class MemoryMachine(RegistryMachine):
    def __init__(self) -> None:
        super().__init__()
        self.flaky = FlakyRepository()
        self.repository = self.flaky

    @rule(broken=st.booleans())
    def store_health(self, broken: bool) -> None:
        self.flaky.broken = broken


class SqliteMachine(RegistryMachine):
    def __init__(self) -> None:
        super().__init__()
        self.store = Store.open(":memory:")
        self.repository = self.store.plugins

    def teardown(self) -> None:
        self.store.close()


TestMemoryRegistry = MemoryMachine.TestCase
TestMemoryRegistry.settings = settings(max_examples=60, stateful_step_count=25, deadline=None)
TestSqliteRegistry = SqliteMachine.TestCase
TestSqliteRegistry.settings = settings(max_examples=20, stateful_step_count=20, deadline=None)
