"""A validated pipeline, ready to run: frozen values with every name resolved.

Validation turns a document into a :class:`Plan`; the engine only ever runs plans, so a
pipeline that was not validated against the current registry cannot run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from plugyard.errors import PipelineError
from plugyard.manifest.model import Role
from plugyard.pipelines.paths import Output, Path

OnError = Literal["stop", "skip", "fallback"]


@dataclass(frozen=True, slots=True)
class Call:
    """One executor call: a stage, a control plugin of a group, or a fallback.

    ``declared`` are the operation's parameter names. With no ``inputs`` mapping, the
    parameters the context holds under the same names are passed (``by_name``), and a
    declared ``context`` parameter the context does not hold gets the whole context.
    """

    pointer: str
    node_id: str
    plugin_id: str
    operation: str | None
    role: Role
    params: Mapping[str, Any]
    inputs: tuple[tuple[str, Path], ...]
    by_name: bool
    declared: frozenset[str]
    output: Output
    on_error: OnError
    fallback: Call | None
    timeout_ms: int | None


@dataclass(frozen=True, slots=True)
class Group:
    pointer: str
    node_id: str
    mode: Literal["SYNC", "ASYNC"]
    condition: Call | None
    iterator: Call | None
    fork: Call | None
    join: Call | None
    children: tuple[Step, ...]
    otherwise: tuple[Step, ...]
    completion: Literal["all", "first_success", "first_failure"]
    timeout_ms: int | None
    on_error: Literal["stop", "skip"]
    item_key: str
    output: str


@dataclass(frozen=True, slots=True)
class Ref:
    """Runs the named pipeline of the same document in place."""

    pointer: str
    node_id: str
    pipeline: str


Step = Call | Group | Ref


@dataclass(frozen=True, slots=True)
class Capability:
    name: str
    pointer: str
    steps: tuple[Step, ...]


@dataclass(frozen=True, slots=True)
class PipelinePlan:
    name: str
    pointer: str
    timeout_ms: int | None
    capabilities: tuple[Capability, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """Every pipeline of one document; ``entry`` is the one a run starts with."""

    pipelines: Mapping[str, PipelinePlan]
    entry: str | None

    def pipeline(self, name: str | None = None) -> PipelinePlan:
        chosen = name or self.entry
        if chosen is None:
            names = ", ".join(sorted(self.pipelines))
            raise PipelineError(
                f"the document holds several pipelines ({names}): name one",
                code="pipeline_not_found",
            )
        found = self.pipelines.get(chosen)
        if found is None:
            raise PipelineError(f"no pipeline {chosen!r} here", code="pipeline_not_found")
        return found
