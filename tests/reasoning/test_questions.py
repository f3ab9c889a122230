"""Reading a question: its kind, form, parts and terms; the spans of a sentence that
answer it; BM25 ranking; yes or no by the evidence."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from plugyard.reasoning.questions import (
    answers_kind,
    echoes,
    evidence,
    in_context,
    parts,
    rank,
    read,
    sentences,
    spans,
    verdict,
)


def test_the_kind_is_the_questions_own_wh_word() -> None:
    assert read("When was the Eiffel Tower finished?").kind == "date"
    assert read("How tall is the Eiffel Tower?").unit == "tall"
    assert read("How many sailors drowned when the ship ran aground?").kind == "measure"
    assert read("Which river flows through Paris?").kind == "place"
    assert read("Who designed the tower?").kind == "person"
    assert read("Was the tower finished in 1889?").kind == "yesno"
    assert read("Can you explain the design?").kind == "other"


def test_the_form_asked_for_is_read_and_left_out_of_the_terms() -> None:
    word = read("Who built it? Answer with a single word.")
    assert word.form == "word" and "answer" not in word.terms
    assert read("Is it in Paris? Answer Yes or No.").form == "yesno"


def test_a_compound_question_splits_with_its_subject() -> None:
    assert parts("How tall is the Eiffel Tower and when was it finished?") == [
        "How tall is the Eiffel Tower?",
        "When was the Eiffel Tower finished?",
    ]
    # "she" in the first part names no one the later part could mean instead.
    assert parts("When did she receive the Royal Medal and when did she die?")[1] == (
        "When did she die?"
    )
    assert parts("How tall is the tower?") == ["How tall is the tower?"]


def test_spans_are_of_the_kind_asked_and_not_already_said() -> None:
    sentence = "Work started in 1887, and the tower was completed on 31 March 1889."
    assert spans(sentence, read("When was the tower completed?")) == ["1887", "31 March 1889"]
    measured = "It stands 330 metres (1,083 ft) high and was the highest for 41 years."
    assert spans(measured, read("How tall is it?")) == ["330 metres", "1,083 ft"]
    counted = "By 1939 it employed 420 people."
    assert spans(counted, read("How many people did it employ in 1939?")) == ["420 people"]
    river = "The road crosses the estuary of the river Wend."
    assert spans(river, read("Which river does the road cross?")) == ["Wend"]


def test_a_person_is_not_answered_by_an_organisations_name() -> None:
    sentence = (
        "In the old harbour, the cranes of Captain Morrow, a stern sailor loyal to the "
        "Northern Shipping Company's accounts, unloaded a bronze bell."
    )
    asked = read("Name the single character whose cranes unloaded the bronze bell. One word.")
    assert asked.kind == "person"
    assert spans(sentence, asked) == ["Captain Morrow"]


def test_a_pronoun_is_scored_with_the_names_before_it() -> None:
    said = ["The Eiffel Tower is in Paris.", "It stands 330 metres high."]
    assert in_context(said)[1] == "It stands 330 metres high. Eiffel Tower Paris"


def test_ranking_prefers_the_sentence_with_the_kind_of_answer() -> None:
    question = read("How tall is the Eiffel Tower?")
    texts = in_context(
        [
            "The Eiffel Tower is a wrought-iron tower in Paris.",
            "It stands 330 metres high.",
        ]
    )
    assert rank(question, texts)[0][1] == 1


def test_no_break_after_an_abbreviation_and_questions_state_nothing() -> None:
    assert sentences("It was Dr. Elara Vance. She left.") == [
        "It was Dr. Elara Vance.",
        "She left.",
    ]
    stated, _ = evidence([{"text": "Who built it? Gustave Eiffel built it."}])
    assert stated == [(0, "Gustave Eiffel built it.")]
    listed, _ = evidence([{"text": "Q4: Name the builder.\n\nEiffel built it."}])
    assert listed == [(0, "Eiffel built it.")]


def test_an_echo_of_the_question_is_no_evidence() -> None:
    question = read("Explain why Kaelen Voss was uniquely qualified to solve the crisis.")
    assert echoes(
        question, "Q3: Explain why Kaelen Voss was uniquely qualified to solve the crisis."
    )
    assert not echoes(question, "Kaelen Voss had neural implants that linked him to the city.")


def test_yes_or_no_by_the_evidence() -> None:
    said = ["The lighthouse is not open to visitors.", "The tower is painted red and white."]
    assert verdict(read("Can visitors go inside the lighthouse?"), said) == (False, 0)
    assert verdict(read("Is the tower painted red and white?"), said) == (True, 1)
    assert verdict(read("Is the lighthouse in London?"), said) is not None
    assert verdict(read("Is the lighthouse in London?"), said)[0] is False  # type: ignore[index]


def test_a_question_weighing_two_things_is_answered_by_what_the_evidence_leans_to() -> None:
    said = [
        "The keeper Mara Holt guarded the lamp through every storm, whatever it cost.",
        "The village lost its boats in the storm of 1911.",
        "Mara Holt rarely spoke to the fishermen.",
    ]
    # No sentence says "not": the evidence ties Mara Holt to the lamp, not the boats.
    asked = read("Would Mara Holt prioritize saving the boats over guarding the lamp?")
    assert verdict(asked, said) == (False, 0)
    assert verdict(read("Would Mara Holt choose the lamp rather than the boats?"), said) == (
        True,
        0,
    )
    # Evidence that leans neither way leaves the plain verdict.
    even = ["Mara Holt kept the lamp and the boats alike."]
    assert verdict(read("Would Mara Holt prefer the lamp over the boats?"), even) == (True, 0)


def test_an_answer_of_the_kind_asked() -> None:
    assert answers_kind("On 31 March 1889", read("When was it finished?"))
    assert answers_kind("A month after the bridge opened", read("When did the ferry stop?"))
    assert not answers_kind("It is a wrought-iron tower.", read("When was it finished?"))
    assert not answers_kind("It is tall", read("Is it tall?"))


@given(st.text(max_size=300))
def test_reading_any_text_never_fails(text: str) -> None:
    question = read(text)
    assert question.kind in ("date", "measure", "place", "person", "yesno", "other")
    assert parts(text)
    for sentence in sentences(text):
        spans(sentence, question)
