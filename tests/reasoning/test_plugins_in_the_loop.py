"""Real plugins in the loop: the bundled offline ones on a fresh yard, an MRP-VM wrapper
subprocess, and MRP-VM's own published descriptors (descriptor-only)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from plugyard.discovery.embedders import HashingEmbedder
from plugyard.llm import OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply
from plugyard.reasoning.service import ReasoningService
from plugyard.reasoning.store_sql import SqlOutcomeStore, SqlSessionStore
from plugyard.store.keys import ADMIN_ROLE
from plugyard.yard import Settings, Yard

HERE = Path(__file__).resolve().parent
MRP_FIXTURES = HERE.parent / "manifest" / "fixtures" / "mrp"
ATLAS = (
    "# France\n\nParis is the capital of France. The Seine flows through Paris.\n\n"
    "# Tanzania\n\nZanzibar is an archipelago off Tanzania. Zanzibar exports cloves."
)


def test_the_bundled_plugins_answer_offline_with_citations(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    with Yard.from_settings(settings) as yard:

        async def turns() -> tuple:
            session = await yard.reasoning.create_session()
            await yard.reasoning.add_source(session.id, "atlas.md", ATLAS)
            # A budget of no model call: the offline plugins alone.
            first = await yard.reason("What does Zanzibar export?", session=session.id, budget=0)
            second = await yard.reason(
                "Which river flows through Paris?", session=session.id, budget=0
            )
            return first, second

        first, second = asyncio.run(turns())
    assert first.status == "answered" and "cloves" in (first.answer or "")
    assert first.citations and first.citations[0]["title"] == "Tanzania"
    assert "Seine" in (second.answer or "")
    stages = {(s.stage, s.plugin_id) for s in first.record.stages}
    assert ("seed-detector", "sd-rules") in stages and ("validation", "val-grounded") in stages
    assert first.llm_calls == 0  # no model was needed, nor asked
    assert first.record.planner_plugin_id == "plan-learning"


def test_a_question_without_context_is_no_context_offline(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    with Yard.from_settings(settings) as yard:
        answer = asyncio.run(yard.reason("Who painted the ceiling of the Sistine Chapel?"))
    assert answer.status == "no-context" and answer.record.final_status == "success"
    assert answer.llm_calls == 0  # gs-llm had no evidence: it made no call


def test_an_mrp_wrapper_subprocess_runs_as_a_kb_stage(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    shutil.copytree(HERE / "wrappers", plugins)
    settings = Settings(
        database=str(tmp_path / "y.db"), plugin_dirs=(plugins,), embedder="hashing", governed=False
    )
    with Yard.from_settings(settings) as yard:
        assert yard.registry.require("kb-wrapped").available
        answer = asyncio.run(yard.reason("What is a tort?", pins={"kb": "kb-wrapped"}, budget=0))
    assert answer.status == "answered" and "civil wrong" in (answer.answer or "")
    kb = [s for s in answer.record.stages if s.stage == "kb"]
    assert [(s.plugin_id, s.status, s.sufficient) for s in kb] == [("kb-wrapped", "success", True)]
    seen = next(e for e in answer.trace if e.data.get("pluginId") == "kb-wrapped")
    assert seen.data["status"] == "success"


def test_the_wrapper_gets_the_json_context_and_no_callbacks(tmp_path: Path) -> None:
    plugins = tmp_path / "plugins"
    shutil.copytree(HERE / "wrappers", plugins)
    settings = Settings(
        database=str(tmp_path / "y.db"), plugin_dirs=(plugins,), embedder="hashing", governed=False
    )
    with Yard.from_settings(settings) as yard:
        from plugyard.execution.executor import CallRequest
        from plugyard.runtimes.base import CallContext

        context = CallContext(
            request_id="r1", extra={"requestId": "r1", "parser": None}, callbacks={"llm": object()}
        )
        request = CallRequest("kb-wrapped", "retrieve", {"prompt": "tort"}, context)
        result = asyncio.run(yard.executor.call(request))
    seen = result.data["retrievalTrace"]["seen"]
    assert seen["requestId"] == "r1" and seen["parser"] is None and seen["llm"] is None


def test_mrp_vms_published_descriptors_are_listed_but_never_run(tmp_path: Path) -> None:
    plugins = tmp_path / "mrp"
    for name in ("kb-ledger", "gs-outline", "planner-thrifty", "val-facts"):
        shutil.copytree(MRP_FIXTURES / name, plugins / name)
    settings = Settings(
        database=str(tmp_path / "y.db"), plugin_dirs=(plugins,), embedder="hashing", governed=False
    )
    with Yard.from_settings(settings) as yard:
        ledger = yard.registry.require("kb-ledger")
        assert ledger.family == "kb" and not ledger.available
        answer = asyncio.run(
            yard.reason(
                "What is the ledger balance?", sources={"books": "The ledger balance is 40 euros."}
            )
        )
        pinned = asyncio.run(yard.reason("What is the ledger balance?", pins={"kb": "kb-ledger"}))
    ran = {s.plugin_id for s in answer.record.stages}
    assert not ran & {"kb-ledger", "gs-outline", "val-facts"}
    assert "planner-thrifty" not in answer.record.planner_attempts
    assert answer.status == "answered"
    assert pinned.status == "failure" and pinned.error is not None
    assert pinned.error.code == "plugin_unavailable"


EIFFEL = (
    "The Eiffel Tower is a wrought-iron tower in Paris. It was designed by the company of "
    "the engineer Gustave Eiffel.\n\nWork on the foundations started in 1887, and the tower "
    "was completed on 31 March 1889 for the World's Fair. It stands 330 metres (1,083 ft) "
    "high and was the world's highest structure for 41 years."
)
COMPOUND = "How tall is the Eiffel Tower and when was it finished?"


def test_a_compound_question_is_answered_part_by_part_offline(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    with Yard.from_settings(settings) as yard:
        answer = asyncio.run(yard.reason(COMPOUND, sources={"eiffel.md": EIFFEL}, budget=0))
    assert answer.status == "answered"
    text = answer.answer or ""
    assert "330 metres" in text and "31 March 1889" in text
    assert text.index("330 metres") < text.index("31 March 1889")  # in the question's order
    assert "wrought-iron" not in text
    cited = " ".join(str(c["text"]) for c in answer.citations)
    assert "330 metres" in cited and "31 March 1889" in cited
    assert sorted(c["index"] for c in answer.citations) == [1, 2]


def _service(yard: Yard, model: OpenAIChatModel) -> ReasoningService:
    return ReasoningService(
        yard.executor,
        yard.registry,
        SqlSessionStore(yard.store),
        SqlOutcomeStore(yard.store),
        model=lambda: model,
        embed=lambda texts: HashingEmbedder(64).embed(texts),
        application_roles=(ADMIN_ROLE,),
    )


def test_with_a_model_gs_llm_answers_first_and_cites_its_evidence(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    reply = Reply.json({"status": "answered", "answer": "31 March 1889", "citations": [2]})

    async def ask() -> Any:
        async with FakeModelServer([reply] * 4) as fake:
            model = OpenAIChatModel(fake.base_url, "fake", retry=RetryPolicy(attempts=1))
            with Yard.from_settings(settings) as yard:
                service = _service(yard, model)
                return await service.reason(
                    "When was the Eiffel Tower finished?",
                    sources={"eiffel.md": EIFFEL},
                    pins={"planner": "plan-static"},
                )

    answer = asyncio.run(ask())
    assert answer.status == "answered" and answer.answer.startswith("31 March 1889")
    solvers = [s.plugin_id for s in answer.record.stages if s.stage == "goal-solver"]
    assert solvers == ["gs-llm"]
    assert "completed on 31 March 1889" in answer.citations[0]["text"]


def test_a_model_answer_that_misses_the_question_backtracks_to_the_next_plan(
    tmp_path: Path,
) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), embedder="hashing")
    off_topic = Reply.json(
        {"status": "answered", "answer": "It is a wrought-iron tower.", "citations": [1]}
    )

    async def ask() -> Any:
        async with FakeModelServer([off_topic] * 4) as fake:
            model = OpenAIChatModel(fake.base_url, "fake", retry=RetryPolicy(attempts=1))
            with Yard.from_settings(settings) as yard:
                return await _service(yard, model).reason(
                    "When was the Eiffel Tower finished?",
                    sources={"eiffel.md": EIFFEL},
                    pins={"planner": "plan-static"},
                )

    answer = asyncio.run(ask())
    assert answer.status == "answered" and (answer.answer or "").startswith("31 March 1889")
    verdicts = [(s.plugin_id, s.status) for s in answer.record.stages if s.stage == "validation"]
    assert verdicts == [("val-grounded", "rejected"), ("val-grounded", "accepted")]
    solvers = [s.plugin_id for s in answer.record.stages if s.stage == "goal-solver"]
    assert solvers[0] == "gs-llm" and solvers[-1] == "gs-extractive"
