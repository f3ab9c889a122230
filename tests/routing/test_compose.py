"""The answer's text: the output's own sentence, a compact rendering, and the check of a
model-written answer against its data."""

from __future__ import annotations

from plugyard.routing.compose import MAX_ITEMS, compose, unsupported


def test_an_output_with_its_own_text_is_that_text() -> None:
    data = {"value": 176.67, "text": "350 °F = 176.667 °C", "kind": "temperature"}
    assert compose(data) == "350 °F = 176.667 °C"


def test_a_mapping_is_rendered_in_the_output_schemas_order_not_as_json() -> None:
    schema = {"properties": {"zone": {}, "time": {}, "dst": {}}}
    text = compose({"dst": False, "time": "09:00", "zone": "Asia/Tokyo", "extra": [1, 2]}, schema)
    assert text == "zone: Asia/Tokyo; time: 09:00; dst: no.\nextra:\n- 1\n- 2"


def test_a_long_list_is_cut_to_a_short_one() -> None:
    text = compose({"zones": [f"Zone/{i}" for i in range(40)], "count": 40})
    lines = text.splitlines()
    assert lines[0] == "count: 40." and lines[1] == "zones:"
    assert len(lines) == 2 + MAX_ITEMS + 1 and lines[-1] == "- … and 30 more"


def test_strings_scalars_and_nothing() -> None:
    assert compose("  hello  ") == "hello"
    assert compose(None) == "Done."
    assert compose(42) == "42"
    assert (
        compose([{"name": "a", "size": 3}, {"text": "b is big"}]) == "- name a, size 3\n- b is big"
    )


def test_made_up_numbers_and_names_are_found_and_rounding_is_not() -> None:
    data = {"flights": [{"to": "Oslo", "price": 120.456}, {"to": "Bergen", "price": 99}]}
    assert unsupported("The cheapest is Bergen at 99; Oslo costs 120.46.", data, "") == []
    assert unsupported("The cheapest is Trondheim at 89.", data, "") == ["89", "Trondheim"]
    assert unsupported("It costs 3 euros, as you asked.", {}, "under 3 euros") == []
