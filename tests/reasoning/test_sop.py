"""Admitting seed documents written in SOP Lang Control."""

from __future__ import annotations

import pytest

from plugyard.reasoning.sop import MAX_STATEMENTS, SopError, admit, admit_units, render

INTENTS = """\
# a comment
@i1 intent explain "Why is the sky \\"blue\\"?"
@is1 set $i1 output "short answer"
@is2 set $i1 topics [physics "light scattering"]
@s1 seed $i1 direct explain "Why is the sky blue?"
@ss1 set $s1 evidenceNeed general
@i2 intent compare "Sky versus sea"
"""
UNITS = """\
@k1 ku atomic "session::turn::unit-000"
@ks1 set $k1 claim "Rayleigh scattering favours short wavelengths."
@ks2 set $k1 topic "optics"
@ks3 set $k1 phaseScopes [kb-plugin gs-plugin]
@ks4 set $k1 confidence 0.8
@k2 ku composite "session::turn::unit-001"
@ks5 set $k2 procedure "Look up. Compare."
@x1 plugin kb-lexical
"""


def test_intents_seeds_and_units_are_admitted() -> None:
    found = admit(INTENTS, UNITS)
    first, second = found.intents
    assert (first["act"], first["text"]) == ("explain", 'Why is the sky "blue"?')
    assert first["output"] == "short answer" and first["topics"] == ["physics", "light scattering"]
    assert first["seeds"][0]["mode"] == "direct" and first["seeds"][0]["evidenceNeed"] == "general"
    assert second["act"] == "compare"
    unit, procedure = found.units
    assert unit.text == "Rayleigh scattering favours short wavelengths."
    assert (unit.title, unit.id, unit.meta["confidence"]) == (
        "optics",
        "session::turn::unit-000",
        0.8,
    )
    assert unit.phases() == ("goalSolver",)
    assert procedure.text == "Look up. Compare." and procedure.meta["kuType"] == "composite"


@pytest.mark.parametrize(
    "document",
    [
        '@i1 intent explain "unclosed',
        '@i1 intent explain "a"\n@i1 intent explain "b"',
        '@ks1 set $k9 claim "x"',
        '@i1 intent explain "a"\ni2 intent explain x',
        "@i1 intent explain [a [b]]",
        "@i1 intent explain a]",
        '@i1 intent explain "a"\n@s1 set $i1 1bad "x"',
    ],
)
def test_malformed_documents_are_refused(document: str) -> None:
    with pytest.raises(SopError):
        admit(document, None)


def test_too_many_statements_are_refused() -> None:
    document = "\n".join(f'@i{n} intent explain "t"' for n in range(MAX_STATEMENTS + 1))
    with pytest.raises(SopError):
        admit(document, None)


def test_prose_is_one_intent_or_one_unit() -> None:
    found = admit("What is the capital of France?", "Paris is large.")
    assert found.intents[0]["text"] == "What is the capital of France?"
    assert [u.text for u in found.units] == ["Paris is large."]
    assert admit_units("") == () and admit("", "").intents == ()


def test_values_render_back_as_sop() -> None:
    assert render(["a", 'b "c"', 2, True]) == '["a" "b \\"c\\"" 2 true]'
