"""A plugin failing is recorded and isolated; a status outside its family's set is an
error; every stage call goes through the executor (and its audit)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest, Executor
from plugyard.execution.result import Result
from plugyard.manifest.load import load_file
from plugyard.reasoning.stages import family_status
from plugyard.registry.model import RegisteredPlugin
from plugyard.runtimes.subprocess import SubprocessPluginRuntime

from .lab import Lab, basic, planned, solved

JS_FIXTURES = Path(__file__).parents[1] / "runtimes" / "subprocess" / "fixtures" / "mrp"


def test_a_solver_answering_a_status_outside_its_family_is_an_error() -> None:
    lab = basic(Lab(), gs=("gs-odd", "gs-a"))
    lab.add("gs-odd", "gs", {"solve": {"status": "accepted", "error": None}})
    answer = lab.reason()
    assert answer.answer == "Paris."
    odd = next(e for e in answer.trace if e.data.get("pluginId") == "gs-odd")
    assert odd.data["status"] == "error"
    assert odd.data["error"]["code"] in ("output_validation_error", "invalid_output")


def test_a_wrapped_status_object_is_judged_by_its_own_status() -> None:
    inner = {"status": "needs-decomposition", "responseMarkdown": None}
    assert family_status(Result("success", inner), "goal-solver", "solve") == (
        "needs-decomposition",
        None,
    )
    status, error = family_status(Result("success", {"status": "rejected"}), "kb", "retrieve")
    assert status == "error" and error is not None and error.code == "invalid_output"


def test_a_hanging_solver_times_out_and_the_next_one_answers() -> None:
    lab = basic(Lab(), gs=("gs-slow", "gs-a"))

    async def hang(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        await asyncio.Event().wait()
        return solved()

    lab.add("gs-slow", "gs", {"solve": hang}, timeout_ms=50)
    answer = lab.reason()
    assert answer.answer == "Paris."
    slow = next(e for e in answer.trace if e.data.get("pluginId") == "gs-slow")
    assert slow.data["error"]["code"] == "timeout"


def test_every_plugin_crashing_still_ends_in_a_record() -> None:
    lab = basic(Lab())

    def boom(input: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("boom")

    lab.add("gs-a", "gs", {"solve": boom})
    answer = lab.reason()
    assert answer.status == "failure"
    assert answer.error is not None and answer.error.code == "stage_exhausted"
    assert lab.outcomes.get(answer.request_id) is not None


def test_stage_calls_go_through_the_executor() -> None:
    lab = basic(Lab())
    seen: list[str] = []
    real = lab.executor.call

    async def spy(request: CallRequest) -> Result:
        seen.append(f"{request.plugin_id}.{request.operation}")
        return await real(request)

    lab.executor.call = spy  # type: ignore[method-assign]
    lab.reason()
    assert seen == [
        "sd-a.detect_seeds",
        "plan-a.build_plan",
        "kb-a.retrieve",
        "gs-a.solve",
        "plan-a.record_outcome",
    ]
    assert [e.plugin_id for e in lab.audit] == [s.split(".")[0] for s in seen]


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_an_mrp_vm_javascript_solver_is_handed_the_members_mrp_vms_engine_names() -> None:
    """MRP-VM's own goal solvers read ``currentMessage`` and ``resolvedIntents``, not
    ``prompt``: the loop hands them those members."""
    lab = basic(Lab(), gs=())
    runtime = SubprocessPluginRuntime()
    lab.executor = Executor(lab.registry, {"python": lab.runtime, "subprocess": runtime})
    folder = JS_FIXTURES / "gs-echo-js"
    descriptor = load_file(folder / "plugin.json").plugins[0]
    lab.registry.register(RegisteredPlugin.of(descriptor, "folder", location=str(folder)))
    lab.add("plan-a", "plan", {"build_plan": planned(("kb-a",), ("gs-echo-js",))})
    try:
        answer = lab.reason("What is the capital of France?")
    finally:
        runtime.kill_all()
    assert answer.answer == "echo: What is the capital of France?", answer.error
