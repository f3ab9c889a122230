"""One yard for the routing tests: the bundled plugins plus the test plugins, the
starter policy (admin: everything; reader: read operations only), the hashing embedder,
and the scripted fake model on loopback."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from plugyard.discovery.query import Filters, Match
from plugyard.llm import OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply
from plugyard.manifest.exporters.functions import GENERIC_OPERATIONS
from plugyard.registry.model import RegisteredPlugin
from plugyard.routing import Router
from plugyard.runtimes.python import InProcessRuntime, definition_of
from plugyard.yard import Settings, Yard

from .plugins import ALL, FETCHED, NOTES, SIDE_EFFECTS


@pytest.fixture(scope="session")
def yard() -> Iterator[Yard]:
    with Yard.from_settings(Settings(database=":memory:", embedder="hashing")) as opened:
        runtime = opened.runtimes["python"]
        assert isinstance(runtime, InProcessRuntime)
        for code in ALL:
            definition = definition_of(code)
            assert definition is not None
            runtime.provide(code)
            opened.registry.register(RegisteredPlugin.of(definition.descriptor, "code"))
        yield opened


@pytest.fixture(autouse=True)
def _clean() -> None:
    SIDE_EFFECTS.clear()
    FETCHED.clear()
    NOTES.clear()


def everything(yard: Yard, first: Sequence[str] = ()) -> Callable[..., list[Match]]:
    """A search that finds every plugin the caller may see, ``first`` ahead: retrieval
    at its most generous, so only rights and approvals stand between an injected
    instruction and a side effect."""

    def search(query: str, k: int, filters: Filters) -> list[Match]:
        plugins = sorted(yard.registry.list(), key=lambda p: (p.id not in first, p.id))
        seen = [p for p in plugins if p.available and yard.visible(p, filters.can_see)]
        return [Match(p, None, 1.0, "test") for p in seen][:k]

    return search


def router(yard: Yard, first: Sequence[str] = ()) -> Router:
    return Router(
        yard.executor,
        everything(yard, first),
        yard.rights,
        lambda: yard.llm,
        governance=yard.governance,
    )


def model(fake: FakeModelServer) -> OpenAIChatModel:
    return OpenAIChatModel(fake.base_url, "fake", retry=RetryPolicy(attempts=1))


def tool_name(plugin: str, operation: str) -> str:
    """The tool name an operation is offered under (the exporter's, when no other
    offered tool takes it)."""
    return plugin if operation in GENERIC_OPERATIONS else f"{plugin}__{operation}"


def choose(plugin: str, operation: str, **arguments: Any) -> Reply:
    """The model calls one operation, as a server that writes native tool calls does."""
    return Reply.tool_call(tool_name(plugin, operation), arguments)


def calls(*made: tuple[str, str, dict[str, Any]]) -> Reply:
    """The model calls several operations in one answer."""
    return Reply(tool_calls=tuple(
        {"id": f"call_{n}", "type": "function", "function": {
            "name": tool_name(plugin, operation), "arguments": json.dumps(arguments)}}
        for n, (plugin, operation, arguments) in enumerate(made)
    ), finish_reason="tool_calls")  # fmt: skip


def said(body: dict[str, Any]) -> str:
    """Everything a request to the model holds, its tool messages included."""
    return "\n".join(str(m.get("content") or "") for m in body["messages"])
