"""Messages that name what the user meant: misspelt manifest keys and capabilities."""

from __future__ import annotations

import pytest

from plugyard.errors import ManifestError
from plugyard.manifest.load import load_data, load_text


@pytest.mark.parametrize(
    ("entry", "typo", "meant"),
    [
        ({"id": "w", "name": "W", "capabilites": [{"id": "x"}]}, "capabilites", "capabilities"),
        ({"schemaVersion": 1, "plugn": {"id": "x", "capability": "MODEL"}}, "plugn", "plugin"),
        ({"nmae": "x", "entrypoint": {"x": "a.b:C"}}, "entrypoint", "entrypoints"),
    ],
)
def test_an_unrecognised_manifest_names_its_misspelt_key(
    entry: dict[str, object], typo: str, meant: str
) -> None:
    with pytest.raises(ManifestError) as caught:
        load_data([entry])
    problem = caught.value.problems[0]
    assert problem.code == "manifest_unknown_dialect"
    assert f"{typo!r} → {meant!r}" in problem.message


def test_a_mapping_with_nothing_close_gets_no_guess() -> None:
    with pytest.raises(ManifestError) as caught:
        load_data([{"zzz": 1}])
    assert "probably" not in caught.value.problems[0].message


def test_a_capability_outside_the_configured_names_is_a_warning_with_the_nearest() -> None:
    document = load_text("plugin:\n  id: x\n  name: X\n  capability: [MODLE, GEOCODING]\n")
    warnings = [w for w in document.warnings if w.code == "unknown_capability"]
    assert [w.pointer for w in warnings] == ["/plugin/capability/0", "/plugin/capability/1"]
    assert "'MODEL'" in warnings[0].message and "'MODEL'" not in warnings[1].message
    assert document.plugins[0].placement.capabilities == ("MODLE", "GEOCODING")  # kept


def test_configured_capabilities_and_all_are_not_warned_about() -> None:
    document = load_text("plugin:\n  id: x\n  name: X\n  capability: [MODEL, ALL, CACHING]\n")
    assert not [w for w in document.warnings if w.code == "unknown_capability"]
