"""The bundled reasoning plugins: the rule-based and model-backed seed detectors, the
semantic KB, the extractive and model-backed goal solvers, the static planner."""

from __future__ import annotations

import asyncio
from typing import Any

from bundled_plugins import RUNTIME, plugin_target, run

from plugyard.discovery.embedders import HashingEmbedder
from plugyard.llm import OpenAIChatModel, RetryPolicy
from plugyard.llm.testing import FakeModelServer, Reply
from plugyard.reasoning.bridge import ModelBridge
from plugyard.reasoning.sop import admit, admit_units
from plugyard.runtimes.base import CallContext, Outcome

EMBED = HashingEmbedder(256)


def call(plugin_id: str, op: str, params: dict[str, Any], **callbacks: Any) -> Outcome:
    target = plugin_target(plugin_id)
    operation = (RUNTIME.describe(target) or target.descriptor).operation(op)
    assert operation is not None
    context = CallContext(request_id="t", session={"id": "s1"}, callbacks=callbacks)
    answer = asyncio.run(RUNTIME.invoke(target, operation, params, context, None))
    assert isinstance(answer, Outcome)
    return answer


# ------------------------------------------------------------------------ sd-rules


def test_sd_rules_splits_intents_from_statements_and_scopes_guidance() -> None:
    prompt = (
        "The contract was signed in 2020. Answer in one sentence. "
        "Is the contract clause still binding? Compare it with the 2018 statute."
    )
    data = run("sd-rules", "detect_seeds", prompt=prompt).data
    found = admit(data["intentCNL"], data["currentTurnContextCNL"])
    assert [(i["act"], i["topic"]) for i in found.intents] == [
        ("explain", "legal"),
        ("compare", "legal"),
    ]
    assert [u.text for u in found.units] == [
        "The contract was signed in 2020.",
        "Answer in one sentence.",
    ]
    assert [u.phases() for u in found.units] == [(), ("goalSolver",)]


def test_sd_rules_makes_one_intent_of_a_request_without_a_question() -> None:
    data = run("sd-rules", "detect_seeds", prompt="paris weather").data
    assert [i["text"] for i in admit(data["intentCNL"], None).intents] == ["paris weather"]


def test_sd_rules_normalises_sources_into_grouped_units() -> None:
    text = "# Cloves\n\nZanzibar exports cloves. It is an island.\n\n" + " ".join(
        f"Fact {n} is here." for n in range(12)
    )
    data = run(
        "sd-rules",
        "normalize_persistent_context",
        prompt="p",
        context=[{"text": text}],
        sourceId="src",
    ).data
    units = admit_units(data["contextCNL"])
    assert units[0].title == "Cloves" and units[0].text.startswith("Zanzibar exports cloves.")
    assert len(units) == 4  # the heading titles, then 12 sentences in groups of five


# ------------------------------------------------------------------------ model-backed


def bridge(fake: FakeModelServer, allowed: int = 2) -> ModelBridge:
    model = OpenAIChatModel(fake.base_url, "fake", retry=RetryPolicy(attempts=1))
    return ModelBridge(lambda: model, allowed, ("role",))


async def with_fake(replies: list[Reply], plugin_id: str, op: str, params: dict[str, Any]) -> Any:
    async with FakeModelServer(replies) as fake:
        target = plugin_target(plugin_id)
        operation = (RUNTIME.describe(target) or target.descriptor).operation(op)
        assert operation is not None
        context = CallContext(request_id="t", callbacks={"llm": bridge(fake)})
        answer = await RUNTIME.invoke(target, operation, params, context, None)
        return answer, fake.requests


def test_sd_llm_asks_once_and_retries_once_when_the_answer_holds_no_intent() -> None:
    good = {
        "intents": [{"act": "define", "text": "What is a tort?", "topic": "legal"}],
        "units": [{"title": "note", "text": "Torts are civil wrongs."}],
    }
    answer, requests = asyncio.run(
        with_fake(
            [Reply.json({"intents": [], "units": []}), Reply.json(good)],
            "sd-llm",
            "detect_seeds",
            {"prompt": "What is a tort? Torts are civil wrongs."},
        )
    )
    assert answer.status == "success" and len(requests) == 2
    assert answer.data["metadata"]["llmCalls"] == 2 and answer.cost["llm_calls"] == 2
    found = admit(answer.data["intentCNL"], answer.data["currentTurnContextCNL"])
    assert found.intents[0]["act"] == "define" and found.intents[0]["topic"] == "legal"
    assert [u.text for u in found.units] == ["Torts are civil wrongs."]


def test_sd_llm_without_a_model_is_unsupported() -> None:
    assert run("sd-llm", "detect_seeds", prompt="anything").status == "unsupported"


def test_gs_llm_answers_from_the_evidence_with_citations() -> None:
    evidence = [{"title": "Zanzibar", "sourceLink": "doc#1", "text": "Zanzibar exports cloves."}]
    reply = Reply.json({"status": "answered", "answer": "Cloves [1].", "citations": [1, 7]})
    answer, requests = asyncio.run(
        with_fake([reply], "gs-llm", "solve", {"prompt": "Exports?", "context": evidence})
    )
    assert answer.status == "success" and answer.data["responseMarkdown"] == "Cloves. [1]"
    assert answer.data["responseDocument"]["citations"] == [
        {
            "index": 1,
            "title": "Zanzibar",
            "sourceLink": "doc#1",
            "unitId": "",
            "text": "Zanzibar exports cloves.",
        }
    ]
    user = requests[0]["messages"][-1]["content"]
    assert "[1] Zanzibar: Zanzibar exports cloves." in user
    assert answer.cost["llm_calls"] == 1


EIFFEL = [
    {
        "title": "Eiffel Tower",
        "sourceLink": "eiffel.md",
        "text": "The Eiffel Tower is a wrought-iron tower in Paris. It was designed by the "
        "company of the engineer Gustave Eiffel.",
    },
    {
        "title": "Building it",
        "sourceLink": "eiffel.md",
        "text": "Work on the foundations started in 1887, and the tower was completed on "
        "31 March 1889 for the World's Fair. It stands 330 metres (1,083 ft) high.",
    },
]


def test_gs_llm_cites_the_sentence_its_answer_rests_on_when_the_model_cites_none() -> None:
    reply = Reply.json({"status": "answered", "answer": "31 March 1889", "citations": []})
    prompt = "When was the Eiffel Tower finished?"
    answer, requests = asyncio.run(
        with_fake([reply], "gs-llm", "solve", {"prompt": prompt, "context": EIFFEL})
    )
    cited = answer.data["responseDocument"]["citations"]
    assert [c["sourceLink"] for c in cited] == ["eiffel.md"]
    assert "completed on 31 March 1889" in cited[0]["text"]
    assert answer.data["responseMarkdown"] == "31 March 1889 [1]"
    user = requests[0]["messages"][-1]["content"]
    assert "Answer with the date" in user


def test_gs_llm_keeps_the_model_to_the_form_asked() -> None:
    reply = Reply.json({"status": "answered", "answer": "No, it is in Paris.", "citations": [1]})
    prompt = "Is the Eiffel Tower in London? Answer Yes or No."
    answer, _ = asyncio.run(
        with_fake([reply], "gs-llm", "solve", {"prompt": prompt, "context": EIFFEL})
    )
    assert answer.data["responseMarkdown"] == "No"
    assert "in Paris" in answer.data["responseDocument"]["citations"][0]["text"]


def test_gs_llm_without_evidence_makes_no_call() -> None:
    answer, requests = asyncio.run(with_fake([], "gs-llm", "solve", {"prompt": "Exports?"}))
    assert answer.status == "no-context" and requests == []


# ------------------------------------------------------------------------ kb-embed


def test_kb_embed_retrieves_by_meaning_from_offered_sources() -> None:
    units = [
        {"title": "spice", "text": "Zanzibar exports cloves and nutmeg."},
        {"title": "city", "text": "Paris lies on the Seine."},
    ]
    offered = call("kb-embed", "on_source_text", {"text": "t", "units": units}, embed=EMBED.embed)
    assert offered.status == "accepted"
    found = call(
        "kb-embed", "retrieve", {"prompt": "What does Zanzibar export?"}, embed=EMBED.embed
    )
    assert found.status == "success"
    assert found.data["resolvedIntents"][0]["units"][0]["title"] == "spice"


def test_kb_embed_without_an_embedder_is_unsupported() -> None:
    assert run("kb-embed", "retrieve", prompt="anything").status == "unsupported"


# ------------------------------------------------------------------------ gs-extractive


def test_gs_extractive_answers_with_cited_evidence_sentences() -> None:
    evidence = [
        {"title": "France", "sourceLink": "doc#fr", "text": "Paris is the capital of France."},
        {"title": "Italy", "sourceLink": "doc#it", "text": "Rome is the capital of Italy."},
    ]
    data = run(
        "gs-extractive", "solve", prompt="What is the capital of France?", context=evidence
    ).data
    assert data["status"] == "success"
    assert data["responseMarkdown"].startswith("Paris is the capital of France. [1]")
    assert data["responseDocument"]["citations"][0]["sourceLink"] == "doc#fr"


def test_gs_extractive_says_no_context_rather_than_guess() -> None:
    evidence = [{"text": "Rome is the capital of Italy."}]
    assert (
        run("gs-extractive", "solve", prompt="Who wrote Hamlet?", context=evidence).status
        == "no-context"
    )


def test_gs_extractive_asks_to_decompose_several_questions_at_the_root_only() -> None:
    prompt = "Who built it? When was it built?"
    root = run("gs-extractive", "solve", prompt=prompt).data
    assert root["status"] == "needs-decomposition"
    assert root["responseDocument"]["subtasks"] == ["Who built it?", "When was it built?"]
    assert run("gs-extractive", "solve", prompt=prompt, frameDepth=1).status == "no-context"


# ------------------------------------------------------------------------ plan-static


def candidate(plugin_id: str, confidence: float, **more: Any) -> dict[str, Any]:
    hints = {
        "confidenceWhenMatched": confidence,
        "relativeCost": 0.1,
        "supportedActs": more.pop("acts", []),
        "topicTags": more.pop("topics", []),
    }
    return {"id": plugin_id, "usesLLM": more.pop("llm", False), "plannerHints": hints, **more}


def test_plan_static_orders_by_matched_hints_and_rotates_rejected_solvers() -> None:
    candidates = {
        "kb": [candidate("kb-x", 0.9), candidate("kb-legal", 0.7, topics=["legal"])],
        "goalSolver": [candidate("gs-1", 0.8, acts=["explain"]), candidate("gs-2", 0.6)],
    }
    intents = [{"act": "explain", "topic": "legal"}]
    plan = run("plan-static", "build_plan", prompt="p", intents=intents, candidates=candidates).data
    assert plan["kbPluginOrder"] == ["kb-legal", "kb-x"]  # matched 0.7 beats unmatched 0.54
    assert plan["goalSolverOrder"] == ["gs-1", "gs-2"]
    again = run(
        "plan-static",
        "build_plan",
        prompt="p",
        intents=intents,
        candidates=candidates,
        previousAttempts=[{"outcome": "rejected", "goalSolver": "gs-1"}],
    ).data
    assert again["goalSolverOrder"] == ["gs-2", "gs-1"]
    preferred = run(
        "plan-static",
        "build_plan",
        prompt="p",
        intents=intents,
        candidates=candidates,
        sessionPreferences={"kb": "kb-x"},
    ).data
    assert preferred["kbPluginOrder"] == ["kb-x", "kb-legal"]


def test_a_model_backed_plugin_needs_a_clear_lead_over_an_offline_one() -> None:
    candidates = {
        "kb": [],
        "goalSolver": [candidate("gs-model", 0.65, llm=True), candidate("gs-offline", 0.6)],
    }
    plan = run("plan-static", "build_plan", prompt="p", candidates=candidates).data
    assert plan["goalSolverOrder"] == ["gs-offline", "gs-model"]


# ------------------------------------------------------------------------ answering the kind asked


def extractive(prompt: str, **more: Any) -> dict[str, Any]:
    return dict(run("gs-extractive", "solve", prompt=prompt, context=EIFFEL, **more).data)


def test_gs_extractive_answers_a_when_question_with_the_date() -> None:
    data = extractive("When was the Eiffel Tower finished?", frameDepth=1)
    assert data["responseMarkdown"].startswith("31 March 1889 — ")
    assert "completed on 31 March 1889" in data["responseDocument"]["citations"][0]["text"]


def test_gs_extractive_answers_how_tall_with_the_measure_of_a_later_sentence() -> None:
    data = extractive("How tall is the Eiffel Tower?")
    assert data["responseDocument"]["answer"] == "330 metres"
    assert (
        data["responseDocument"]["citations"][0]["text"] == "It stands 330 metres (1,083 ft) high."
    )


def test_gs_extractive_splits_a_compound_question_with_its_subject() -> None:
    data = extractive("How tall is the Eiffel Tower and when was it finished?")
    assert data["status"] == "needs-decomposition"
    assert data["responseDocument"]["subtasks"] == [
        "How tall is the Eiffel Tower?",
        "When was the Eiffel Tower finished?",
    ]


def test_gs_extractive_obeys_yes_or_no_and_single_word() -> None:
    no = extractive("Is the Eiffel Tower in London? Answer Yes or No.")
    assert no["responseMarkdown"] == "No" and no["responseDocument"]["citations"]
    yes = extractive("Was the tower completed in 1889? Answer Yes or No.")
    assert yes["responseMarkdown"] == "Yes"
    assert "1889" in yes["responseDocument"]["citations"][0]["text"]
    who = extractive("Who designed the Eiffel Tower? Answer with a single word.")
    assert who["responseMarkdown"] == who["responseDocument"]["answer"] == "Eiffel"


def test_kb_lexical_returns_the_sentences_about_the_question() -> None:
    found = run(
        "kb-lexical", "retrieve", prompt="How tall is the Eiffel Tower?", context=EIFFEL
    ).data
    units = found["resolvedIntents"][0]["units"]
    assert units[0]["text"] == "It stands 330 metres (1,083 ft) high."
    assert units[0]["sourceLink"] == "eiffel.md" and units[0]["title"] == "Building it"


def test_val_grounded_rejects_an_answer_that_does_not_address_the_question() -> None:
    def verdict(prompt: str, answer: str) -> str:
        data = run("val-grounded", "validate", prompt=prompt, answer=answer, context=EIFFEL).data
        return str(data["verdict"])

    assert verdict("When was it finished?", "The Eiffel Tower is a tower in Paris.") == "rejected"
    assert verdict("When was it finished?", "On 31 March 1889. [1]") == "accepted"
    assert verdict("How tall is it?", "It is a wrought-iron tower.") == "rejected"
    assert verdict("Is it in Paris? Answer Yes or No.", "It is in Paris.") == "rejected"
    assert verdict("Who designed it? One word.", "Gustave Eiffel") == "rejected"
    assert verdict("When was it finished?", "In 1899. [1]") == "rejected"  # not in the evidence
    assert verdict("How tall is it?", "1083 ft [2]") == "accepted"


def test_plan_static_with_a_model_to_call_puts_the_model_backed_solver_first() -> None:
    candidates = {
        "kb": [],
        "goalSolver": [candidate("gs-model", 0.65, llm=True), candidate("gs-offline", 0.6)],
    }
    target = plugin_target("plan-static")
    operation = (RUNTIME.describe(target) or target.descriptor).operation("build_plan")
    assert operation is not None

    def plan(model: str | None, left: int) -> list[str]:
        context = CallContext(
            request_id="t",
            budgets={"llmCalls": left},
            extra={"modelSettings": {"model": model}},
        )
        params = {"prompt": "p", "candidates": candidates}
        answer = asyncio.run(RUNTIME.invoke(target, operation, params, context, None))
        assert isinstance(answer, Outcome)
        return list(answer.data["goalSolverOrder"])

    assert plan("embedded:some-model", 4) == ["gs-model", "gs-offline"]
    assert plan("embedded:some-model", 0) == ["gs-offline", "gs-model"]  # no call left
    assert plan(None, 4) == ["gs-offline", "gs-model"]


def test_plan_static_decomposes_a_compound_question() -> None:
    candidates = {"kb": [], "goalSolver": [candidate("gs-1", 0.6)]}
    prompt = "How tall is the Eiffel Tower and when was it finished?"
    plan = run("plan-static", "build_plan", prompt=prompt, candidates=candidates).data
    assert plan["decompose"] is True and plan["framePurpose"] == "subtask-decomposition"
    single = run("plan-static", "build_plan", prompt="How tall is it?", candidates=candidates).data
    assert single["decompose"] is False


# Self-written texts for the behaviours MRP-VM's evaluation suites exercise.
HARBOUR = [
    {
        "title": "The harbour",
        "sourceLink": "harbour.md",
        "text": (
            "In the old harbour, the harbour cranes of Captain Morrow unloaded the bronze "
            "bell, the harbour's biggest bronze bell. Far inland, the patient painter Ada "
            "Quill restored a small chapel tower with great care. The town council met on "
            "Tuesdays."
        ),
    }
]
CHAIN = [
    {
        "title": "Stack",
        "sourceLink": "stack.md",
        "text": (
            "Harbourview uses Beacon. Beacon provides signing. Signing is relevant for "
            "trusted releases. Harbourview depends on Beacon. Audits are relevant for "
            "trusted releases. The logo is blue."
        ),
    }
]


def test_gs_extractive_cites_a_sentence_for_each_person_the_question_names() -> None:
    prompt = "How would the harbour differ if Ada Quill had unloaded the bronze bell instead?"
    data = dict(run("gs-extractive", "solve", prompt=prompt, context=HARBOUR).data)
    cited = [c["text"] for c in data["responseDocument"]["citations"]]
    # Captain Morrow's sentence scores far above Ada Quill's, which is still the only one
    # that says who she is; the sentence about neither is not added.
    assert "Ada Quill" in " ".join(cited) and "Captain Morrow" in " ".join(cited)
    assert "council" not in " ".join(cited)


def test_kb_lexical_hands_on_the_link_an_explanation_needs() -> None:
    prompt = "Explain why Harbourview is relevant for trusted releases."
    found = run("kb-lexical", "retrieve", prompt=prompt, context=CHAIN).data
    texts = [u["text"] for u in found["resolvedIntents"][0]["units"]]
    # "Beacon provides signing" shares no word with the question: only the links between
    # the sentences that do bring it.
    assert "Beacon provides signing." in texts and "The logo is blue." not in texts
    plain = run("kb-lexical", "retrieve", prompt="Is Harbourview relevant for trusted releases?",
                context=CHAIN).data  # fmt: skip
    assert "Beacon provides signing." not in [
        u["text"] for u in plain["resolvedIntents"][0]["units"]
    ]
