"""Test plugins, declared with the decorator: sleeping, failing, blocking, echoing."""

from __future__ import annotations

import asyncio
from typing import Any

from plugyard.runtimes.python import tool


class Gate:
    """What blocking plugins report, so tests wait on events instead of sleeping."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.cancelled: list[str] = []
        self.all_started = asyncio.Event()
        self.expected = 0
        self.barrier: asyncio.Barrier | None = None

    def reset(self, expected: int = 0, barrier: int = 0) -> None:
        self.__init__()  # type: ignore[misc]
        self.expected = expected
        self.barrier = asyncio.Barrier(barrier) if barrier else None


GATE = Gate()


@tool(id="t-echo", placement="ALL", inline=True)
def echo(value: Any = None) -> dict[str, Any]:
    """Answers what it was given."""
    return {"echo": value}


@tool(id="t-fail", placement="ALL", inline=True)
def fail(message: str = "boom") -> dict[str, Any]:
    """Always raises."""
    raise RuntimeError(message)


@tool(id="t-model", placement=["MODEL"], inline=True)
def model(question: str = "") -> dict[str, Any]:
    """A MODEL-only stage: the question, upper-cased."""
    return {"answer": question.upper()}


@tool(id="t-mutate", placement="ALL", inline=True)
def mutate(items: list[Any]) -> dict[str, Any]:
    """Changes the list it was given (a pipeline must not notice)."""
    items.append("intruder")
    return {"count": len(items)}


@tool(id="t-sleep", placement="ALL")
async def sleep(ms: int = 10) -> dict[str, Any]:
    """Sleeps, then answers how long."""
    await asyncio.sleep(ms / 1000)
    return {"slept": ms}


@tool(id="t-block", placement="ALL")
async def block(tag: str = "") -> dict[str, Any]:
    """Reports that it started and waits until it is cancelled."""
    GATE.started.append(tag)
    if len(GATE.started) >= GATE.expected:
        GATE.all_started.set()
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        GATE.cancelled.append(tag)
        raise
    return {}


@tool(id="t-meet", placement="ALL")
async def meet(tag: str = "") -> dict[str, Any]:
    """Waits at the gate's barrier: it finishes only if its partners run concurrently."""
    assert GATE.barrier is not None
    await GATE.barrier.wait()
    return {"met": tag}


@tool(id="t-if", role="CONDITION", inline=True)
def condition(value: Any = None) -> dict[str, Any]:
    """True when ``value`` is truthy."""
    return {"result": bool(value)}


@tool(id="t-branch", role="CONDITION", inline=True)
def branch(pick: int = 0) -> dict[str, Any]:
    """An OLO condition: answers a branch index (0 = then)."""
    return {"branch": pick}


@tool(id="t-bad-if", role="CONDITION", inline=True)
def bad_condition() -> dict[str, Any]:
    """A condition that answers no truth value."""
    return {"maybe": True}


@tool(id="t-fork", role="FORK", inline=True)
def fork(names: list[str]) -> dict[str, Any]:
    """One numbered input per branch (not objects: branches get them under item_key)."""
    return {"branches": list(range(len(names)))}


@tool(id="t-inside", placement="ALL", only_inside_group=True, inline=True)
def inside() -> dict[str, Any]:
    """May stand only inside a group."""
    return {"inside": True}


ALL = (
    echo,
    fail,
    model,
    mutate,
    sleep,
    block,
    meet,
    condition,
    branch,
    bad_condition,
    fork,
    inside,
)
