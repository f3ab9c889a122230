"""One yard for the routing tests: the bundled plugins plus the test plugins, the
starter policy (admin: everything; reader: read operations only), the hashing embedder,
and the scripted fake model on loopback."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from plugyard.discovery.query import Filters, Match
from plugyard.llm import OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply
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


def choose(plugin: str, operation: str, final: bool = True, **arguments: Any) -> Reply:
    return Reply.json(
        {"plugin": plugin, "operation": operation, "arguments": arguments, "final": final}
    )


def user_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][-1]["content"])


def judging(fits: Callable[[str, str], bool], then: Callable[[dict[str, Any]], Reply]
            ) -> Callable[[dict[str, Any]], Reply]:  # fmt: skip
    """A script for the scored method: each yes/no question answered "yes" when
    ``fits(tool line, whole question)``, else "no"; any other request by ``then``."""

    def script(body: dict[str, Any]) -> Reply:
        if not body.get("logprobs"):
            return then(body)
        question = user_prompt(body)
        tool = question.split("Tool: ", 1)[1].split("\n", 1)[0]
        yes = fits(tool, question)
        return Reply.scored({"yes": -0.05, "no": -3.0} if yes else {"yes": -3.0, "no": -0.05})

    return script
