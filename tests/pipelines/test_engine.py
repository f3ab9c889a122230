"""The engine: context flow, groups, branches, policies, deadlines, cancellation, traces."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard.pipelines import PipelineRun
from plugyard.yard import Yard

from .plugins import Gate


def doc(*flow: Any, capability: str = "TOOL", **fields: Any) -> dict[str, Any]:
    return {"name": "t", "capabilities": [{"capability": capability, "flow": list(flow)}], **fields}


def run(
    yard: Yard, document: dict[str, Any], data: dict[str, Any] | None = None, **kw: Any
) -> PipelineRun:
    return asyncio.run(yard.pipelines.run(document, data or {}, **kw))


def group(*children: Any, **fields: Any) -> dict[str, Any]:
    return {"children": list(children), **fields}


def entries(result: PipelineRun, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


# ------------------------------------------------------------------ the context


def test_a_stage_reads_context_paths_and_writes_its_output_key(yard: Yard) -> None:
    stage = {"plugin": "t-echo", "input": {"value": "user.name"}, "output": "said"}
    result = run(yard, doc(stage), {"user": {"name": "Ada"}})
    assert result.ok
    assert result.context["said"] == {"echo": "Ada"}


def test_without_input_parameters_are_taken_by_name_and_objects_merge(yard: Yard) -> None:
    result = run(yard, doc("t-model", capability="MODEL"), {"question": "hi"})
    assert result.context == {"question": "hi", "answer": "HI"}


def test_output_picks_fields_and_dollar_merges(yard: Yard) -> None:
    picks = {
        "plugin": "t-echo",
        "params": {"value": {"a": 1}},
        "output": {"x": "echo.a", "$": "echo"},
    }
    result = run(yard, doc(picks))
    assert result.context == {"x": 1, "a": 1}


def test_constants_are_overridden_by_the_input_mapping(yard: Yard) -> None:
    stage = {"plugin": "t-echo", "params": {"value": "constant"}, "input": {"value": "v"}}
    assert run(yard, doc(stage), {"v": "mapped"}).context["echo"] == "mapped"
    assert run(yard, doc(stage), {}).context["echo"] == "constant"


def test_a_plugin_changing_its_parameters_changes_nothing_of_the_run(yard: Yard) -> None:
    stage = {"plugin": "t-mutate", "output": "counted"}
    result = run(yard, doc(stage, stage), {"items": [1, 2]})
    assert result.context["items"] == [1, 2]
    assert result.context["counted"] == {"count": 3}


def test_the_run_works_on_a_copy_of_its_input(yard: Yard) -> None:
    data = {"items": [1]}
    run(yard, doc({"plugin": "t-echo", "output": "items"}), data)
    assert data == {"items": [1]}


# ------------------------------------------------------------------ conditions


def test_a_false_condition_skips_the_group(yard: Yard) -> None:
    when = {"plugin": "condition-expression", "params": {"expression": "n > 5"}}
    result = run(yard, doc(group({"plugin": "t-echo", "output": "ran"}, condition=when)), {"n": 1})
    assert result.ok
    assert "ran" not in result.context
    assert entries(result, "group")[0].status == "skipped"
    assert [e.kind for e in result.trace] == ["capability", "group", "condition"]


def test_a_true_condition_runs_the_group_and_the_whole_context_reaches_it(yard: Yard) -> None:
    when = {"plugin": "condition-expression", "params": {"expression": "user.tier == 'gold'"}}
    body = group({"plugin": "t-echo", "output": "ran"}, condition=when)
    assert "ran" in run(yard, doc(body), {"user": {"tier": "gold"}}).context


def test_else_runs_when_the_condition_is_false(yard: Yard) -> None:
    body = group(
        {"plugin": "t-echo", "params": {"value": "then"}, "output": "went"},
        condition={"plugin": "t-if", "input": {"value": "flag"}},
        **{"else": [{"plugin": "t-echo", "params": {"value": "else"}, "output": "went"}]},
    )
    assert run(yard, doc(body), {"flag": False}).context["went"] == {"echo": "else"}
    assert run(yard, doc(body), {"flag": True}).context["went"] == {"echo": "then"}


def test_an_olo_branch_answer_picks_then_on_zero(yard: Yard) -> None:
    then = {"plugin": "t-echo", "output": "then"}
    assert "then" in run(yard, doc(group(then, condition="t-branch")), {"pick": 0}).context
    assert "then" not in run(yard, doc(group(then, condition="t-branch")), {"pick": 1}).context


def test_a_condition_answering_no_truth_value_fails_with_invalid_output(yard: Yard) -> None:
    result = run(yard, doc(group("t-echo", condition="t-bad-if")))
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "invalid_output"
    assert entries(result, "condition")[0].error == {
        "code": "invalid_output",
        "message": entries(result, "condition")[0].error["message"],  # type: ignore[index]
    }


# ------------------------------------------------------------------ iterators and branches


def test_an_iterator_runs_the_children_once_per_item_and_collects_what_they_wrote(
    yard: Yard,
) -> None:
    iterator = {"plugin": "iterator-batch", "input": {"items": "xs"}, "params": {"batch_size": 2}}
    body = group(
        {"plugin": "t-echo", "input": {"value": "chunk"}, "output": "seen"},
        iterator=iterator,
        item_key="chunk",
        output="seen_all",
    )
    result = run(yard, doc(body), {"xs": [1, 2, 3]})
    assert result.context["seen_all"] == [{"seen": {"echo": [1, 2]}}, {"seen": {"echo": [3]}}]
    assert "seen" not in result.context and "chunk" not in result.context
    assert [e.position for e in entries(result, "iteration")] == [0, 1]


def test_async_branches_run_concurrently_and_the_join_merges_them(yard: Yard, gate: Gate) -> None:
    gate.reset(barrier=3)
    meet = [{"plugin": "t-meet", "params": {"tag": t}, "output": t} for t in ("a", "b", "c")]
    join = {"plugin": "join-merge", "output": {"$": "result"}}
    body = group(*meet, mode="ASYNC", fork="fork-copy", join=join)
    result = run(yard, doc(body), {"q": 1}, timeout_ms=5000)
    assert result.ok, result.error
    assert result.context == {"q": 1, "a": {"met": "a"}, "b": {"met": "b"}, "c": {"met": "c"}}
    assert [e.position for e in entries(result, "branch")] == [0, 1, 2]


def test_a_fork_may_hand_each_branch_a_value_under_item_key(yard: Yard) -> None:
    branches = [{"plugin": "t-echo", "input": {"value": "n"}, "output": "got"}] * 2
    join = {"plugin": "join-merge", "params": {"strategy": "list"}, "output": {"got_all": "result"}}
    body = group(*branches, mode="ASYNC", fork="t-fork", join=join, item_key="n")
    result = run(yard, doc(body))
    assert result.context["got_all"] == [{"got": {"echo": 0}}, {"got": {"echo": 1}}]


def test_branches_never_see_each_others_writes(yard: Yard) -> None:
    first = {"plugin": "t-echo", "params": {"value": 1}, "output": "shared"}
    second = {"plugin": "t-echo", "input": {"value": "shared"}, "output": "seen"}
    join = {"plugin": "join-merge", "params": {"strategy": "list"}, "output": "outs"}
    result = run(yard, doc(group(first, second, mode="ASYNC", fork="fork-copy", join=join)))
    assert result.context["outs"]["result"][1] == {"seen": {"echo": None}}


def test_first_success_cancels_the_other_branches(yard: Yard, gate: Gate) -> None:
    gate.reset(expected=1)
    body = group(
        {"plugin": "t-block", "params": {"tag": "slow"}},
        {"plugin": "t-echo", "params": {"value": "fast"}},
        mode="ASYNC",
        fork="fork-copy",
        join={"plugin": "join-merge", "output": {"$": "result"}},
        completion="first_success",
    )
    result = run(yard, doc(body))
    assert result.ok
    assert result.context["echo"] == "fast"
    assert [e.status for e in entries(result, "branch")] == ["cancelled", "success"]


def test_a_failed_branch_fails_the_group_after_all_branches_settle(yard: Yard) -> None:
    body = group("t-fail", {"plugin": "t-echo", "output": "other"}, mode="ASYNC",
                 fork="fork-copy", join="join-merge")  # fmt: skip
    result = run(yard, doc(body))
    assert result.status == "error"
    assert result.error is not None and result.error["code"] == "plugin_error"
    assert [e.status for e in entries(result, "branch")] == ["error", "success"]
    assert entries(result, "join") == []


# ------------------------------------------------------------------ failure policies


def test_stop_ends_the_run_and_keeps_the_trace(yard: Yard) -> None:
    result = run(yard, doc({"plugin": "t-echo", "output": "before"}, "t-fail", "t-echo"))
    assert result.status == "error"
    assert result.error == {
        "code": "plugin_error",
        "message": result.error["message"],  # type: ignore[index]
        "path": "/capabilities/0/flow/1",
    }
    assert [e.status for e in entries(result, "stage")] == ["success", "error"]
    assert "before" in result.context
    stored = yard.pipelines.trace(result.run_id)
    assert stored.status == "error" and len(stored.trace) == len(result.trace)


def test_skip_goes_on_without_the_failed_stage(yard: Yard) -> None:
    result = run(yard, doc("t-fail", {"plugin": "t-echo", "output": "after"}, on_error="skip"))
    assert result.ok
    assert "after" in result.context
    assert entries(result, "stage")[0].note == "skipped by policy"


def test_fallback_calls_the_named_plugin_in_place(yard: Yard) -> None:
    stage = {"plugin": "t-fail", "on_error": "fallback", "fallback": "t-echo", "output": "got"}
    result = run(yard, doc(stage))
    assert result.ok
    assert result.context["got"] == {"echo": None}
    assert [e.kind for e in result.trace] == ["capability", "stage", "fallback"]
    assert result.trace[2].parent == result.trace[1].seq


def test_the_pipeline_fallback_applies_to_every_stage(yard: Yard) -> None:
    result = run(yard, doc("t-fail", on_error="fallback", fallback="observer-passthrough"),
                 {"payload": "p"})  # fmt: skip
    assert result.ok
    assert result.context["payload"] == "p"


def test_a_group_that_skips_on_error_puts_the_context_back(yard: Yard) -> None:
    body = group({"plugin": "t-echo", "output": "partial"}, "t-fail", on_error="skip")
    result = run(yard, doc(body, {"plugin": "t-echo", "output": "after"}))
    assert result.ok
    assert "partial" not in result.context and "after" in result.context
    assert entries(result, "group")[0].note == "skipped by policy"


# ------------------------------------------------------------------ deadlines and cancellation


def test_the_pipeline_deadline_ends_a_run_with_status_timeout(yard: Yard, gate: Gate) -> None:
    gate.reset(expected=1)
    result = run(yard, doc({"plugin": "t-block"}, timeout_ms=50))
    assert result.status == "timeout"
    assert result.error is not None and result.error["code"] == "timeout"
    assert entries(result, "stage")[0].status == "timeout"


def test_a_group_timeout_is_a_failure_its_policy_handles(yard: Yard, gate: Gate) -> None:
    gate.reset(expected=1)
    body = group("t-block", timeout_ms=30, on_error="skip")
    result = run(yard, doc(body, {"plugin": "t-echo", "output": "after"}))
    assert result.ok
    assert entries(result, "group")[0].status == "timeout"
    assert "after" in result.context


def test_cancelling_a_run_cancels_every_branch_and_keeps_the_trace(yard: Yard, gate: Gate) -> None:
    gate.reset(expected=3)
    blocks = [{"plugin": "t-block", "params": {"tag": t}} for t in ("a", "b", "c")]
    body = group(*blocks, mode="ASYNC", fork="fork-copy", join="join-merge")

    async def scenario() -> None:
        task = asyncio.create_task(yard.pipelines.run(doc(body), {}, request_id="cancel-me"))
        await gate.all_started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
    assert sorted(gate.cancelled) == ["a", "b", "c"]
    stored = yard.pipelines.runs("t", limit=1)[0]
    assert stored.status == "cancelled" and stored.request_id == "cancel-me"
    assert {e.status for e in stored.trace if e.kind in {"branch", "stage"}} == {"cancelled"}


# ------------------------------------------------------------------ runs stay apart


def test_every_stage_is_an_executor_call_with_the_runs_request_id_and_subject(yard: Yard) -> None:
    result = run(
        yard,
        doc("t-echo", group("t-echo")),
        subject="alice",
        roles=("reader",),
        request_id="req-77",
    )
    assert yard.governance is not None
    events = [e for e in yard.governance.audit if e.request_id == "req-77"]
    assert result.request_id == "req-77" and len(events) == 2
    assert {e.subject for e in events} == {"alice"}


def test_concurrent_runs_share_nothing(yard: Yard, gate: Gate) -> None:
    gate.reset(barrier=2)
    document = doc({"plugin": "t-meet", "input": {"tag": "who"}, "output": "met"})

    async def both() -> list[PipelineRun]:
        runs = [yard.pipelines.run(document, {"who": w}) for w in ("x", "y")]
        return list(await asyncio.gather(*runs))

    first, second = asyncio.run(both())
    assert first.context == {"who": "x", "met": {"met": "x"}}
    assert second.context == {"who": "y", "met": {"met": "y"}}
    assert first.run_id != second.run_id
    assert {e.seq for e in first.trace} == {e.seq for e in second.trace}


def test_a_sub_pipeline_runs_in_place_on_the_same_context(yard: Yard) -> None:
    document = doc({"pipeline": "inner"})
    document["pipelines"] = {
        "inner": {"capabilities": [{"capability": "MODEL", "flow": ["t-model"]}]}
    }
    result = run(yard, document, {"question": "q"})
    assert result.context["answer"] == "Q"
    assert [e.kind for e in result.trace][:3] == ["capability", "pipeline", "capability"]
