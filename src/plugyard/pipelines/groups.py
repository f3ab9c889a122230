"""Groups: a condition, an iterator, and SYNC steps or ASYNC branches (fork → join).

- The condition runs first; false skips the group (or runs its ``else``).
- The iterator runs once; the body then runs once per item, each iteration on its own
  shallow copy of the context with the item under ``item_key``. What each iteration
  wrote is collected, in order, under the group's ``output`` key (``iterations``).
- An ASYNC body asks the fork for one input per branch (each child is a branch), runs
  the branches concurrently — each on its own context — and hands what each branch
  wrote to the join, whose output flows back into the context. ``completion`` says
  when the branches are done: ``all`` (every branch), ``first_success`` or
  ``first_failure`` (the others are cancelled). A group read in engine mode may name no
  fork or join: then, as in OLO's engine, every branch starts from the whole context and
  what the branches wrote is merged into it in branch order (the last wins).
- Inside a branch or an iteration every call goes to the run's fan-out caller
  (``FANNED`` says a call is there), which may run it on another machine.
- A group that times out, or in which a failure stops, ends the run unless its
  ``on_error`` is ``skip``; then the context is put back as it was before the group.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any

from plugyard.pipelines import control
from plugyard.pipelines.paths import delta
from plugyard.pipelines.plan import Call, Group, Step
from plugyard.pipelines.signals import DeadlineExceeded, Skipped, Stopped
from plugyard.pipelines.trace import Kind, Span, Status, Trace

Outcome = dict[str, Any] | Stopped | None

#: True inside an ASYNC branch or an iteration (a task of a branch copies it).
FANNED: ContextVar[bool] = ContextVar("plugyard_pipeline_fanned", default=False)


class GroupRunner:
    """The group half of a run; the run supplies calls and steps."""

    trace: Trace

    async def call(
        self,
        call: Call,
        values: dict[str, Any],
        parent: int,
        kind: Kind,
        extra: Mapping[str, Any] | None = None,
        read: Callable[[Any], Any] | None = None,
    ) -> Any:
        raise NotImplementedError

    async def steps(self, steps: tuple[Step, ...], values: dict[str, Any], parent: int) -> None:
        raise NotImplementedError

    async def step(self, step: Step, values: dict[str, Any], parent: int) -> None:
        raise NotImplementedError

    def expired(self) -> bool:
        raise NotImplementedError

    def _ended(self) -> Status:
        return "timeout" if self.expired() else "cancelled"

    async def group(self, group: Group, values: dict[str, Any], parent: int) -> None:
        span = self.trace.open("group", group.pointer, group.node_id, parent)
        before = dict(values) if group.on_error == "skip" else None
        seconds = group.timeout_ms / 1000 if group.timeout_ms else None
        try:
            async with asyncio.timeout(seconds):
                ran = await self.body(group, values, span.seq)
        except TimeoutError:
            message = f"the group did not finish within {group.timeout_ms} ms"
            self.group_failed(
                group, span, values, before, Stopped("timeout", message, group.pointer)
            )
            return
        except Stopped as stop:
            self.group_failed(group, span, values, before, stop)
            return
        except Skipped:
            self.trace.close(span, "skipped", note="a control plugin failed; skipped by policy")
            return
        except asyncio.CancelledError:
            self.trace.close(span, self._ended())
            raise
        notes = {"skipped": "condition false", "else": "condition false: else ran"}
        status: Status = "skipped" if ran == "skipped" else "success"
        self.trace.close(span, status, note=notes.get(ran or ""))

    def group_failed(
        self,
        group: Group,
        span: Span,
        values: dict[str, Any],
        before: dict[str, Any] | None,
        stop: Stopped,
    ) -> None:
        status: Status = "timeout" if stop.info["code"] == "timeout" else "error"
        if before is None:
            self.trace.close(span, status, error=stop.info)
            raise stop
        values.clear()
        values.update(before)
        self.trace.close(span, status, error=stop.info, note="skipped by policy")

    async def body(self, group: Group, values: dict[str, Any], parent: int) -> str | None:
        condition = group.condition
        if condition is not None and not await self.call(
            condition, values, parent, "condition", read=control.truth
        ):
            if not group.otherwise:
                return "skipped"
            await self.steps(group.otherwise, values, parent)
            return "else"
        if group.iterator is None:
            await self.inner(group, values, parent)
            return None
        found = await self.call(group.iterator, values, parent, "iterator", read=control.items)
        results = []
        for index, item in enumerate(found):
            label = f"{group.node_id}[{index}]"
            span = self.trace.open("iteration", group.pointer, label, parent, index=index)
            local = {**values, group.item_key: item}
            fanned = FANNED.set(True)
            try:
                await self.inner(group, local, span.seq)
            except Stopped as stop:
                self.trace.close(span, "error", error=stop.info)
                raise
            except asyncio.CancelledError:
                self.trace.close(span, self._ended())
                raise
            finally:
                FANNED.reset(fanned)
            changes = delta(values, local)
            changes.pop(group.item_key, None)
            self.trace.close(span, "success", output_bytes=control.size(changes))
            results.append(changes)
        values[group.output] = results
        return None

    async def inner(self, group: Group, values: dict[str, Any], parent: int) -> None:
        if group.mode == "SYNC":
            await self.steps(group.children, values, parent)
        else:
            await self.fan(group, values, parent)

    async def fan(self, group: Group, values: dict[str, Any], parent: int) -> None:
        names = [child.node_id for child in group.children]
        count = len(names)
        inputs: list[Any]
        if group.fork is None:
            inputs = [control.copy(values) for _ in range(count)]
        else:
            extra = control.fork_extra(group.fork, names)
            inputs = await self.call(
                group.fork,
                values,
                parent,
                "fork",
                extra,
                lambda data: control.branches(data, count),
            )
        outcomes: list[Outcome] = [None] * count

        async def branch(index: int) -> None:
            child = group.children[index]
            start = control.branch_context(inputs[index], values, group.item_key)
            local = dict(start)
            span = self.trace.open("branch", child.pointer, names[index], parent, index=index)
            FANNED.set(True)  # this task's own copy of the context
            try:
                await self.step(child, local, span.seq)
            except Stopped as stop:
                outcomes[index] = stop
            except DeadlineExceeded:
                late = "the pipeline's deadline passed"
                outcomes[index] = Stopped("timeout", late, child.pointer)
            except asyncio.CancelledError:
                self.trace.close(span, self._ended())
                raise
            except Exception as exc:  # a bug must not tear the other branches down
                outcomes[index] = Stopped("internal_error", repr(exc), child.pointer)
            else:
                outcomes[index] = delta(start, local)
                self.trace.close(span, "success", output_bytes=control.size(outcomes[index]))
                return
            failure = outcomes[index]
            assert isinstance(failure, Stopped)
            self.trace.close(span, "error", error=failure.info)

        async with asyncio.TaskGroup() as tasks:
            running = {tasks.create_task(branch(i)): i for i in range(count)}
            if group.completion != "all":
                await _settle(group.completion, running, outcomes)
        failures = [o for o in outcomes if isinstance(o, Stopped)]
        outputs = [o for o in outcomes if isinstance(o, dict)]
        if failures and (group.completion != "first_success" or not outputs):
            raise failures[0]
        if group.join is None:
            for output in outputs:
                values.update(output)
            return
        await self.call(group.join, values, parent, "join", {"branches": outputs})


async def _settle(
    completion: str, running: dict[asyncio.Task[None], int], outcomes: list[Outcome]
) -> None:
    """Wait until one branch decides the group, then cancel the others."""
    wanted = dict if completion == "first_success" else Stopped
    pending: set[asyncio.Task[None]] = set(running)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        if any(isinstance(outcomes[running[task]], wanted) for task in done):
            for task in pending:
                task.cancel()
            return
