"""Validation before anything runs: a document and the registry → a plan, or faults.

Every fault is collected, never only the first, each with a stable code and the JSON
pointer of its node (see docs/pipelines.md, "Faults"). The placement rules are the OLO
seed's; the per-plugin checks live in :mod:`plugyard.pipelines.placement`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugyard.errors import Problem
from plugyard.manifest.model import Role
from plugyard.manifest.palette import UNDEFINED
from plugyard.pipelines.loading import Dialect, Loaded, Mode, load
from plugyard.pipelines.model import (
    CallModel,
    DocumentModel,
    GroupModel,
    PipelineModel,
    PipelineRefModel,
)
from plugyard.pipelines.paths import DISCARD, MERGE, WHOLE, Output, compile_path
from plugyard.pipelines.placement import Catalog, Resolver, Site
from plugyard.pipelines.plan import Call, Capability, Group, PipelinePlan, Plan, Ref, Step

#: Deeper nesting than this is refused (OLO's own default is 5).
MAX_GROUP_DEPTH = 32
TOP = "main"
_SLOTS: tuple[tuple[str, Role], ...] = (
    ("condition", "CONDITION"), ("iterator", "ITERATOR"), ("fork", "FORK"), ("join", "JOIN"),
)  # fmt: skip


@dataclass(frozen=True)
class Validation:
    """What validation found: a plan when there is no fault."""

    plan: Plan | None
    faults: tuple[Problem, ...]
    warnings: tuple[Problem, ...]
    dialect: Dialect
    document: DocumentModel | None = None
    #: Checked as OLO's engine checks (placement faults are warnings).
    engine: bool = False

    @property
    def ok(self) -> bool:
        return not self.faults

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "dialect": self.dialect,
            "mode": "engine" if self.engine else "strict",
            "pipelines": sorted(self.plan.pipelines) if self.plan else [],
            "faults": [_fault(p) for p in self.faults],
            "warnings": [_fault(p) for p in self.warnings],
        }


def _fault(problem: Problem) -> dict[str, str]:
    return {"code": problem.code, "path": problem.pointer, "message": problem.message}


def validate(
    source: str | bytes | Mapping[str, Any] | Loaded, catalog: Catalog, mode: Mode = "strict"
) -> Validation:
    """Validate a pipeline document (text, data, or already loaded) against ``catalog``.

    In engine mode (``engine``, or ``auto`` for an OLO engine config) placement faults
    are warnings and an ASYNC group that names no fork or join gets the built-in ones,
    as OLO's engine does; a document already loaded keeps the mode it was loaded in.
    """
    loaded = source if isinstance(source, Loaded) else load(source, mode)
    if loaded.document is None:
        return Validation(
            None, loaded.faults, loaded.warnings, loaded.dialect, engine=loaded.engine
        )
    checker = _Checker(loaded.document, Resolver(catalog), loaded.engine)
    plan = checker.run()
    faults = (*loaded.faults, *(_moved(p, loaded) for p in checker.faults))
    warnings = (*loaded.warnings, *(_moved(p, loaded) for p in checker.warnings))
    return Validation(
        None if faults else plan,
        tuple(faults),
        tuple(warnings),
        loaded.dialect,
        loaded.document,
        loaded.engine,
    )


def _moved(problem: Problem, loaded: Loaded) -> Problem:
    return Problem(problem.code, loaded.origin(problem.pointer), problem.message)


class _Checker:
    def __init__(self, document: DocumentModel, resolver: Resolver, engine: bool = False) -> None:
        self.document = document
        self.engine = engine
        self.site = Site(resolver, engine)
        self.faults = self.site.faults
        self.warnings = self.site.warnings
        self.edges: dict[str, list[tuple[str, str]]] = {}
        self.ids: set[str] = set()

    def fault(self, code: str, pointer: str, message: str) -> None:
        self.faults.append(Problem(code, pointer, message))

    def run(self) -> Plan:
        doc = self.document
        sources: list[tuple[str, PipelineModel, str]] = []
        top = doc.name or TOP
        if doc.capabilities is not None:
            sources.append((top, doc, ""))
            if top in doc.pipelines:
                self.fault("duplicate_pipeline", "/name", f"a named pipeline is also {top!r}")
        sources.extend((n, p, f"/pipelines/{n}") for n, p in doc.pipelines.items())
        if not sources:
            self.fault("empty_pipeline", "", "the document holds no pipeline")
        names = {name for name, _, _ in sources}
        plans = {name: self.pipeline(name, model, base) for name, model, base in sources}
        for refs in self.edges.values():
            for target, pointer in refs:
                if target not in names:
                    self.fault("unknown_pipeline", pointer, f"no pipeline {target!r} here")
        self.cycles()
        entry = doc.entry
        if entry is not None and entry not in names:
            self.fault("unknown_pipeline", "/entry", f"no pipeline {entry!r} here")
        if entry is None:
            if doc.capabilities is not None:
                entry = top
            elif "default" in names or len(names) == 1:
                entry = "default" if "default" in names else next(iter(names))
        return Plan(plans, entry)

    def cycles(self) -> None:
        """Sub-pipeline references must not loop; each loop is reported once."""
        done: set[str] = set()
        reported: set[str] = set()

        def visit(name: str, path: list[str]) -> None:
            if name in done:
                return
            for target, pointer in self.edges.get(name, ()):
                if target in path:
                    loop = " → ".join([*path[path.index(target) :], target])
                    if pointer not in reported:
                        reported.add(pointer)
                        self.fault("pipeline_cycle", pointer, f"pipelines call each other: {loop}")
                else:
                    visit(target, [*path, target])
            done.add(name)

        for name in list(self.edges):
            visit(name, [name])

    # ------------------------------------------------------------------ pipelines

    def pipeline(self, name: str, model: PipelineModel, base: str) -> PipelinePlan:
        self.name = name
        self.ids = set()
        self.policy = model.on_error
        self.fallback = model.fallback
        if not model.capabilities:
            self.fault("empty_pipeline", f"{base}/capabilities", "a pipeline needs a capability")
        if model.on_error == "fallback" and model.fallback is None:
            self.fault("fallback_missing", f"{base}/on_error", "on_error: fallback names none")
        if model.fallback is not None:
            every = tuple(c.capability for c in model.capabilities)
            self.site.pipeline_fallback(model.fallback, f"{base}/fallback", every)
        capabilities = []
        for index, block in enumerate(model.capabilities):
            here = f"{base}/capabilities/{index}"
            if block.capability in {"ALL", UNDEFINED}:
                self.fault("reserved_capability", f"{here}/capability", f"{block.capability!r}")
            steps = tuple(
                self.node(node, f"{here}/flow/{i}", block.capability, False, 0)
                for i, node in enumerate(block.flow)
            )
            capabilities.append(Capability(block.capability, here, steps))
        return PipelinePlan(name, base, model.timeout_ms, tuple(capabilities))

    # ------------------------------------------------------------------ nodes

    def node(self, node: Any, pointer: str, capability: str, inside: bool, depth: int) -> Step:
        if isinstance(node, str):
            bare = CallModel(plugin=node)
            return self.call(bare, pointer, "CAPABILITY_STAGE", capability, inside, bare=True)
        if isinstance(node, CallModel):
            self.claim(node.id, pointer)
            return self.call(node, pointer, "CAPABILITY_STAGE", capability, inside)
        if isinstance(node, PipelineRefModel):
            self.claim(node.id, pointer)
            self.edges.setdefault(self.name, []).append((node.pipeline, f"{pointer}/pipeline"))
            return Ref(pointer, node.id or node.pipeline, node.pipeline)
        assert isinstance(node, GroupModel)
        self.claim(node.id, pointer)
        return self.group(node, pointer, capability, depth + 1)

    def claim(self, node_id: str | None, pointer: str) -> None:
        if node_id is None:
            return
        if node_id in self.ids:
            self.fault("duplicate_node_id", f"{pointer}/id", f"{node_id!r} is used twice")
        self.ids.add(node_id)

    def group(self, model: GroupModel, pointer: str, capability: str, depth: int) -> Group:
        if depth > MAX_GROUP_DEPTH:
            self.fault("too_deep", pointer, f"groups nest deeper than {MAX_GROUP_DEPTH}")
        slots: dict[str, Call | None] = {}
        for name, role in _SLOTS:
            slot = getattr(model, name)
            here = f"{pointer}/{name}"
            if isinstance(slot, list):
                if len(slot) != 1:
                    self.fault("slot_repeated", here, f"a group has at most one {role}")
                slot, here = (slot[0], f"{here}/0") if slot else (None, here)
            if slot is not None and name in {"fork", "join"} and model.mode == "SYNC":
                self.fault("slot_not_allowed", here, f"only an ASYNC group has a {name}")
            bare = isinstance(slot, str)
            if isinstance(slot, str):
                slot = CallModel(plugin=slot)
            slots[name] = self.call(slot, here, role, capability, True, bare) if slot else None
        if model.mode == "ASYNC":
            for name, code in (("fork", "missing_fork"), ("join", "missing_join")):
                # OLO's engine forks every branch from the whole context and joins
                # them last-wins; engine mode does the same (groups.py)
                if slots[name] is None and not self.engine:
                    self.fault(code, pointer, f"an ASYNC group needs a {name} plugin")
            if not model.children:
                self.fault("empty_group", f"{pointer}/children", "an ASYNC group needs branches")
        elif not model.children and not model.else_:
            self.warnings.append(Problem("empty_group", pointer, "the group runs nothing"))
        children = tuple(
            self.node(c, f"{pointer}/children/{i}", capability, True, depth)
            for i, c in enumerate(model.children)
        )
        otherwise = tuple(
            self.node(c, f"{pointer}/else/{i}", capability, True, depth)
            for i, c in enumerate(model.else_)
        )
        return Group(
            pointer,
            model.id or "group",
            model.mode,
            slots["condition"],
            slots["iterator"],
            slots["fork"],
            slots["join"],
            children,
            otherwise,
            model.completion,
            model.timeout_ms,
            model.on_error or ("skip" if self.policy == "skip" else "stop"),
            model.item_key,
            model.output or "iterations",
        )

    def call(
        self,
        model: CallModel,
        pointer: str,
        role: Role,
        capability: str,
        inside: bool,
        bare: bool = False,
    ) -> Call:
        plugin_pointer = pointer if bare else f"{pointer}/plugin"
        found = self.site.check(model, plugin_pointer, pointer, role, capability, inside)
        inputs = []
        for param, text in model.input.items():
            try:
                inputs.append((param, compile_path(text)))
            except ValueError as exc:
                self.fault("invalid_path", f"{pointer}/input/{param}", str(exc))
        output = self.output(model, pointer, role)
        on_error = model.on_error or self.policy
        fallback_id = model.fallback
        if fallback_id is None and on_error == "fallback" and role == "CAPABILITY_STAGE":
            fallback_id = self.fallback  # the pipeline's; checked once, at its own place
        if on_error == "fallback" and fallback_id is None:
            if model.on_error == "fallback":
                self.fault("fallback_missing", f"{pointer}/on_error", "no fallback plugin named")
            on_error = "stop"  # a control plugin never inherits the pipeline's fallback
        fallback = None
        if fallback_id is not None and on_error == "fallback":
            twin = model.model_copy(update={"plugin": fallback_id, "operation": None})
            quiet = model.fallback is None
            here = f"{pointer}/fallback"
            with self.site.quiet(quiet):
                resolved = self.site.check(twin, here, here, role, capability, inside)
            fallback = self.build(twin, here, role, resolved, inputs, output, "stop", None)
        return self.build(model, pointer, role, found, inputs, output, on_error, fallback)

    def build(
        self,
        model: CallModel,
        pointer: str,
        role: Role,
        found: tuple[str, str | None, frozenset[str]] | None,
        inputs: list[tuple[str, tuple[str, ...]]],
        output: Output,
        on_error: Any,
        fallback: Call | None,
    ) -> Call:
        plugin_id, operation, declared = found or (model.plugin, model.operation, frozenset())
        return Call(
            pointer,
            model.id or model.plugin,
            plugin_id,
            operation,
            role,
            dict(model.params),
            tuple(inputs),
            not model.input,
            declared,
            output,
            on_error,
            fallback,
            model.timeout_ms,
        )

    def output(self, model: CallModel, pointer: str, role: Role) -> Output:
        if model.output is None:
            return MERGE if role in {"CAPABILITY_STAGE", "JOIN"} else DISCARD
        if isinstance(model.output, str):
            return Output(key=model.output)
        picks = []
        for key, text in model.output.items():
            try:
                picks.append((key, compile_path(text)))
            except ValueError as exc:
                self.fault("invalid_path", f"{pointer}/output/{key}", str(exc))
        if not picks:
            self.fault("invalid_value", f"{pointer}/output", "an output mapping picks nothing")
        return Output(picks=tuple(picks)) if picks else MERGE


__all__ = ["WHOLE", "Validation", "validate"]
