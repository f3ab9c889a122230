"""MRP-VM's member names for its JavaScript plugins, derived from a DS003 payload."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from plugyard.manifest.dialects.mrp_inputs import mrp_members, reads_mrp_members
from plugyard.manifest.load import load_file

FIXTURES = Path(__file__).parents[2] / "runtimes" / "subprocess" / "fixtures" / "mrp"


def test_the_members_mrp_vms_engine_hands_each_family_are_added() -> None:
    payload = {
        "prompt": "Define a lemma.",
        "context": [{"title": "u1", "sourceLink": "a.md", "text": "A lemma is a step."}],
        "intents": [{"id": "i1", "act": "define", "text": "Define a lemma."}],
    }
    given_ = mrp_members(payload)
    assert given_["currentMessage"] == given_["originalMessage"] == "Define a lemma."
    (decomposed,) = given_["decomposedIntents"]
    assert decomposed["groupNumber"] == 1 and decomposed["act"] == "define"
    assert decomposed["target"] == "a lemma"
    (profile,) = given_["contextProfiles"]
    assert profile["queryTerms"] == ["lemma"] and profile["actBoost"] == "define"
    (unit,) = given_["currentTurnUnits"]
    assert unit["unitId"] == "u1" and unit["claim"] == "A lemma is a step."
    (resolved,) = given_["resolvedIntents"]
    assert resolved["decomposed"] == decomposed and resolved["currentTurnContextUnits"] == [unit]
    assert given_["explicitSelections"] == {} and given_["prompt"] == "Define a lemma."


@given(st.dictionaries(st.sampled_from(["currentMessage", "explicitSelections", "x"]), st.text()))
def test_the_payloads_own_members_always_win(payload: dict[str, str]) -> None:
    merged = mrp_members(payload)
    assert all(merged[key] == value for key, value in payload.items())


def test_only_plugins_in_the_node_host_are_given_the_members() -> None:
    js = load_file(FIXTURES / "gs-echo-js" / "plugin.json").plugins[0]
    ds016 = load_file(FIXTURES / "ds016-verify" / "manifest.json").plugins[0]
    assert reads_mrp_members(js) and not reads_mrp_members(ds016)
