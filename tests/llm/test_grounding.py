"""Grounding: which argument values the request supports (numbers, units, names, dates),
with the normaliser's properties checked by Hypothesis."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from plugyard.llm.grounding import Evidence, check, named_default, named_members, normalise, stated
from plugyard.llm.stated import numbers_in

DAY = dt.date(2026, 3, 14)
CONVERT = {
    "type": "object",
    "properties": {
        "value": {"type": "number"},
        "from_unit": {"type": "string"},
        "to_unit": {"type": "string"},
        "precision": {"type": "integer", "default": 6},
        "kind": {"type": "string", "enum": ["length", "temperature"]},
    },
    "required": ["value", "from_unit", "to_unit"],
}


def evidence(*texts: str, data: tuple[object, ...] = ()) -> Evidence:
    return Evidence.of(texts, data, today=DAY)


def bad(arguments: dict[str, object], *texts: str, described: str = "") -> list[str]:
    return [u.pointer for u in check(arguments, CONVERT, evidence(*texts), described)]


def test_the_350_f_request_grounds_its_own_values_and_not_the_example() -> None:
    message = "Convert 350 F to C"
    assert bad({"value": 350, "from_unit": "fahrenheit", "to_unit": "celsius"}, message) == []
    assert bad({"value": 350, "from_unit": "°F", "to_unit": "degC"}, message) == []
    copied = check({"value": 10, "from_unit": "km", "to_unit": "mi"}, CONVERT,
                   evidence(message), "e.g. 10 km in mi")  # fmt: skip
    assert [u.pointer for u in copied] == ["/value", "/from_unit", "/to_unit"]
    assert all(u.required for u in copied)
    assert "description" in copied[0].reason


def test_units_match_their_names_and_abbreviations() -> None:
    assert (
        bad({"value": 3, "from_unit": "km", "to_unit": "mi"}, "Convert 3 kilometres to miles") == []
    )
    assert bad({"value": 70, "from_unit": "kg", "to_unit": "lb"}, "70 kilograms in pounds") == []
    assert bad({"value": 2, "from_unit": "gal", "to_unit": "L"}, "2 gallons in litres") == []
    assert bad({"value": 3, "from_unit": "GB", "to_unit": "MiB"}, "how many MiB is 3 GB") == []
    assert bad({"value": 3, "from_unit": "km", "to_unit": "ft"}, "3 km in miles") == ["/to_unit"]


def test_names_need_one_of_their_words_and_dates_their_numbers() -> None:
    schema = {"type": "object", "properties": {"time": {}, "to_zone": {}, "from_zone": {}},
              "required": ["time", "to_zone"]}  # fmt: skip
    said = evidence("What time is it in Tokyo when it is 9am in Lisbon?")
    fine = {"time": "09:00", "to_zone": "Asia/Tokyo", "from_zone": "Europe/Lisbon"}
    assert check(fine, schema, said) == ()
    assert check(fine | {"time": f"{DAY.isoformat()}T09:00"}, schema, said) == ()  # today
    invented = check(fine | {"time": "2024-03-10T09:00", "from_zone": "Europe/Paris"}, schema,
                     said)  # fmt: skip
    assert [(u.pointer, u.required) for u in invented] == [("/time", True),
                                                           ("/from_zone", False)]  # fmt: skip


def test_an_abbreviation_grounds_a_units_symbol_but_not_a_word_of_a_name() -> None:
    schema = {"type": "object", "properties": {"where": {"type": "string"}}, "required": ["where"]}
    said = evidence("Can you list the projects Adriel worked on?")
    assert [u.pointer for u in check({"where": "San Francisco, CA"}, schema, said)] == ["/where"]
    assert check({"where": "Boston, MA"}, schema, evidence("Weather in Boston?")) == ()
    assert bad({"value": 3, "from_unit": "km", "to_unit": "mi"}, "3 kilometres in miles") == []


def test_a_date_said_in_words_grounds_the_same_date_written_in_digits() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string"}}, "required": ["when"]}
    said = evidence("Book a flight on the 12th of April 2023 at 3 in the afternoon")
    assert check({"when": "2023-04-12T15:00"}, schema, said) == ()
    assert check({"when": "12/04/2023 15:00"}, schema, said) == ()
    assert [u.pointer for u in check({"when": "2023-05-12T15:00"}, schema, said)] == ["/when"]


def test_defaults_enums_earlier_output_and_expressions() -> None:
    assert bad({"value": 5, "from_unit": "km", "to_unit": "mi", "precision": 6,
                "kind": "Length"}, "5 km to mi, a length") == []  # fmt: skip
    assert bad({"value": 5, "from_unit": "km", "to_unit": "mi", "precision": 7},
               "5 km to mi") == ["/precision"]  # fmt: skip
    found = check({"value": 42.195, "from_unit": "km", "to_unit": "mi"}, CONVERT,
                  evidence("the marathon in miles", data=({"distance_km": 42.195},)))  # fmt: skip
    assert found == ()  # 42.195 and "km" come from an earlier tool's output
    calc = {"type": "object", "properties": {"expression": {}}, "required": ["expression"]}
    said = evidence("17 times 23 plus 4")
    assert check({"expression": "17 * 23 + 4"}, calc, said) == ()
    assert [u.pointer for u in check({"expression": "17 * 24 + 4"}, calc, said)] == ["/expression"]
    assert check({"expression": "17.5 / 100 * 240"}, calc, evidence("what is 17.5% of 240")) == ()


def test_an_optional_value_must_be_stated_and_a_required_one_may_be_the_schemas_own() -> None:
    # An enum member, 0 or 1, or only common words: the tool needs a required value,
    # and these are too plain to be an invention; an optional one is left out instead.
    schema = {
        "type": "object",
        "required": ["kind", "count", "scope"],
        "properties": {
            "kind": {"enum": ["length", "temperature"]},
            "count": {"type": "integer"},
            "scope": {"type": "string"},
        },
    }
    assert check({"kind": "length", "count": 1, "scope": "all"}, schema, evidence("5 km")) == ()
    optional = {**schema, "required": []}
    found = check({"kind": "length", "count": 1, "scope": "all"}, optional, evidence("5 km"))
    assert [(u.pointer, u.required) for u in found] == [
        ("/kind", False),
        ("/count", False),
        ("/scope", False),
    ]
    placeholder = check({"mission": "Mission 1"}, optional, evidence("with different missions"))
    assert [u.pointer for u in placeholder] == ["/mission"]
    assert check({"mission": "Mission 1"}, {**optional, "required": ["mission"]},
                 evidence("with different missions")) == ()  # fmt: skip
    said = evidence("count 1 length, for all scopes")
    assert check({"kind": "length", "count": 1, "scope": "all"}, optional, said) == ()


def test_an_empty_optional_value_is_left_out() -> None:
    schema = {"type": "object", "properties": {"tags": {}, "note": {}, "filters": {}}}
    found = check({"tags": [], "note": " ", "filters": {}}, schema, evidence("anything"))
    assert [u.pointer for u in found] == ["/tags", "/note", "/filters"]


def test_a_value_the_request_holds_as_written_is_stated_as_whole_words() -> None:
    said = evidence("Can you find hotels in San Francisco, CA for next_week?")
    assert stated("San Francisco, CA", {}, said)
    assert stated("next week", {}, said)
    assert not stated("Berkeley, CA", {}, evidence("Can you find hotels near me?"))
    assert not evidence("Can you tell me?").has_text("ca")


def test_a_value_in_a_script_written_without_spaces_is_found_inside_its_sentence() -> None:
    said = evidence("能帮我查一下中国广州市和北京市现在的天气状况吗？")
    assert stated("广州市", {}, said) and stated("北京市", {}, said)
    assert not stated("广州市, 广东", {}, said)  # the province is not in the request
    assert not stated("上海市", {}, said)
    assert stated("東京", {}, evidence("東京の天気を教えて"))
    # a spaced script keeps whole words: "ca" is not inside "can", nor ".5" in "3.5"
    assert not evidence("Can you tell me?").has_text("ca")
    assert not evidence("Version 3.5 please").has_text(".5")


def test_only_a_unit_is_abbreviated_and_never_by_a_short_common_word() -> None:
    said = evidence("Calculate the area under the curve y=x^2 from x=1 to x=3, tell me")
    assert not stated("trapezoidal", {}, said)
    assert not stated("meters", {}, said)
    assert stated("km", {}, evidence("3 kilometres in miles"))
    assert stated("kilometers", {}, evidence("3 km in miles"))
    assert stated("MiB", {}, evidence("how many mebibytes"))
    assert not stated("red", {}, evidence("Check if they have been restocked"))
    assert stated("CA", {}, evidence("a laptop for $999 in California"))
    assert not stated("ca", {}, evidence("a laptop for $999 in California"))
    assert not stated("RED", {}, evidence("Check if they have been restocked"))


def test_an_argument_is_named_as_the_call_names_it() -> None:
    found = check({"a/b~c": "Mission 7"}, {"properties": {}}, evidence("nothing"))
    assert [(u.pointer, u.name) for u in found] == [("/a~1b~0c", "a/b~c")]


def test_a_required_argument_left_out_is_missing() -> None:
    found = check({"value": 5, "from_unit": "km"}, CONVERT, evidence("5 km"))
    assert [(u.pointer, u.value, u.required) for u in found] == [("/to_unit", None, True)]


@given(st.integers(min_value=2, max_value=10**6), st.integers(min_value=2, max_value=10**6))
def test_a_number_the_request_does_not_state_is_never_grounded(said: int, other: int) -> None:
    seen = evidence(f"convert {said} km to miles")
    if float(other) not in seen.numbers:
        assert not seen.has_number(other)
        assert check({"value": other, "from_unit": "km", "to_unit": "mi"}, CONVERT, seen)


@given(st.sampled_from(["Fahrenheit", "kilometres", "Tokyo", "pounds", "New York"]),
       st.lists(st.sampled_from([" ", "  ", "\t"]), min_size=1, max_size=3),
       st.booleans())  # fmt: skip
def test_case_and_spacing_never_matter(word: str, spaces: list[str], upper: bool) -> None:
    said = evidence(f"how much is it in {''.join(spaces)}{word.upper() if upper else word}")
    schema = {"type": "object", "properties": {"unit": {}}, "required": ["unit"]}
    for variant in (word, word.lower(), word.upper(), f"  {word} "):
        assert check({"unit": variant}, schema, said) == ()


# Normalising: the request's values in the form the tool's schema asks for, and never a
# value the model added on its own.

TIME = {
    "type": "object",
    "properties": {
        "time": {"type": "string", "description": "a time of day as HH:MM for today"},
        "to_zone": {"type": "string"},
        "unit": {"type": "string", "enum": ["ft", "m", "km", "mi", "°F", "°C", "lb"]},
    },
    "required": ["time", "to_zone"],
}


def test_a_time_of_day_is_written_as_the_tool_takes_it() -> None:
    said = ["What time is it in Tokyo when it is 9am in Lisbon?"]
    assert normalise({"time": "9am"}, TIME, said)["time"] == "09:00"
    assert normalise({"time": "3 p.m."}, TIME, said)["time"] == "15:00"
    assert normalise({"time": "12am"}, TIME, said)["time"] == "00:00"
    assert normalise({"time": "12:30pm"}, TIME, said)["time"] == "12:30"
    assert normalise({"time": "now"}, TIME, said)["time"] == "now"  # left for check


def test_an_invented_date_and_offset_are_cut_and_a_stated_one_kept() -> None:
    lisbon = ["What time is it in Tokyo when it is 9am in Lisbon?"]
    assert normalise({"time": "2023-09-15T09:00:00Z"}, TIME, lisbon)["time"] == "09:00"
    utc = ["If the meeting is at 14:00 UTC, what time is that in India?"]
    assert normalise({"time": "2023-04-14T14:00:00Z"}, TIME, utc)["time"] == "14:00Z"
    dated = ["On 2024-03-10 at 14:30 in Paris, what time is it in Tokyo?"]
    assert normalise({"time": "2024-03-10T14:30:00"}, TIME, dated)["time"] == "2024-03-10T14:30"


def test_the_hour_of_an_iso_date_and_time_must_be_grounded_too() -> None:
    schema = {"type": "object", "properties": {"time": {}}, "required": ["time"]}
    said = evidence("What time is it in Tokyo when it is 9am in Lisbon?")
    assert check({"time": f"{DAY.isoformat()}T09:00"}, schema, said) == ()
    made_up = check({"time": f"{DAY.isoformat()}T12:00"}, schema, said)
    assert [u.pointer for u in made_up] == ["/time"]


def test_a_parameter_without_a_time_of_day_is_left_alone() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string"}}}
    value = {"when": "2023-09-15T09:00:00Z"}
    assert normalise(value, schema, ["9am in Lisbon"]) == value


def test_unit_words_become_the_enums_symbol_only_when_one_member_names_them() -> None:
    said = ["6 feet in meters"]
    for word, symbol in (("feet", "ft"), ("meters", "m"), ("Fahrenheit", "°F"),
                         ("celsius", "°C"), ("pounds", "lb"), ("kilometres", "km")):  # fmt: skip
        assert normalise({"unit": word}, TIME, said)["unit"] == symbol
    assert normalise({"unit": "yards"}, TIME, said)["unit"] == "yards"  # no member: left


@given(st.integers(min_value=1, max_value=12), st.integers(min_value=0, max_value=59),
       st.sampled_from(["am", "pm", " AM", " p.m."]))  # fmt: skip
def test_a_clock_time_normalises_to_a_grounded_hh_mm(hour: int, minute: int, half: str) -> None:
    written = f"{hour}:{minute:02d}{half}"
    said = [f"what time is it in Tokyo when it is {written} in Lisbon"]
    value = normalise({"time": written, "to_zone": "Asia/Tokyo"}, TIME, said)
    expected = hour % 12 + (12 if "p" in half.lower() else 0)
    assert value["time"] == f"{expected:02d}:{minute:02d}"
    assert normalise(value, TIME, said) == value  # idempotent
    assert check(value, TIME, Evidence.of(said, today=DAY)) == ()


@given(st.integers(min_value=1900, max_value=2100), st.integers(min_value=1, max_value=12),
       st.integers(min_value=1, max_value=28), st.integers(min_value=0, max_value=23),
       st.integers(min_value=0, max_value=59))  # fmt: skip
def test_normalising_never_adds_a_number_the_value_lacks(
    year: int, month: int, day: int, hour: int, minute: int
) -> None:
    written = f"{year}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:00Z"
    said = [f"at {hour}:{minute:02d} in Lisbon, what time is it in Tokyo"]
    value = normalise({"time": written}, TIME, said)["time"]
    assert numbers_in(value) <= numbers_in(written)
    assert str(year) not in value  # the request states no date


def test_a_remainder_in_an_expression_is_not_read_as_a_percentage() -> None:
    calc = {"type": "object", "properties": {"expression": {}}, "required": ["expression"]}
    said = evidence("what's the remainder of 100 divided by 7")
    assert check({"expression": "100 % 7"}, calc, said) == ()
    assert check({"expression": "17.5%"}, calc, evidence("17.5 percent of 240")) == ()
    assert [u.pointer for u in check({"expression": "100 % 8"}, calc, said)] == ["/expression"]


def test_a_yes_or_no_written_as_a_string_is_implied_like_a_boolean() -> None:
    schema = {"type": "object", "properties": {"field": {"type": "string"},
              "isComplete": {"type": "string"}}, "required": ["field", "isComplete"]}  # fmt: skip
    said = evidence("Validate the form field 'userInputField' once the user stops typing")
    assert check({"field": "userInputField", "isComplete": "true"}, schema, said) == ()
    assert check({"field": "userInputField", "isComplete": " False"}, schema, said) == ()
    assert [u.pointer for u in check({"field": "x", "isComplete": "maybe"}, schema, said)] == [
        "/field", "/isComplete"]  # fmt: skip


_WORDS = st.sampled_from(["km", "miles", "to", "the", "all", "Tokyo", "3", "350", "F", "me",
                          "2023-04-22", "April", "22nd", "celsius", "x", "1", "0", ""])  # fmt: skip
_VALUES = st.one_of(
    st.integers(min_value=-5, max_value=400),
    st.lists(_WORDS, max_size=4).map(" ".join),
    st.lists(st.lists(_WORDS, max_size=2).map(" ".join), max_size=3),
)


@given(_VALUES, st.lists(_WORDS, max_size=8).map(" ".join),
       st.sampled_from([{}, {"enum": ["km", "mi"]}, {"default": 0}]))  # fmt: skip
def test_what_an_optional_value_may_be_a_required_one_may_be_too(
    value: object, said: str, schema: dict[str, object]
) -> None:
    # One judge, two allowances: a required value is never held to more than an optional
    # one, so a call the model layer kept is one the routing flow lets through.
    seen = evidence(said)
    optional = check({"p": value}, {"properties": {"p": schema}}, seen)
    required = check({"p": value}, {"properties": {"p": schema}, "required": ["p"]}, seen)
    assert stated(value, schema, seen) == (optional == ())
    if not optional:
        assert required == ()


TEXT = {"type": "object", "properties": {"expression": {"type": "string"}}}


def test_a_quoted_text_retyped_by_the_model_goes_to_the_tool_as_the_user_wrote_it() -> None:
    said = ['Is "orders[0" a valid JMESPath expression?']
    assert normalise({"expression": "orders[0]"}, TEXT, said)["expression"] == "orders[0"
    spaced = ['normalise the spacing in "too    many     spaces"']
    assert normalise({"expression": "too many spaces"}, TEXT, spaced)["expression"] == (
        "too    many     spaces"
    )
    curly = ["Check “people[?age > `30`].name”"]
    assert normalise({"expression": "people[?age > 30].name"}, TEXT, curly)["expression"] == (
        "people[?age > `30`].name"
    )


def test_a_value_that_changes_the_quoted_words_stays_as_written() -> None:
    """Other letters, another case or a part of the quote is the model's own value,
    for check() to judge; a value that is a quote already stays, and of two quotes it
    could retype, neither is chosen."""
    said = ['Lower-case "HELLO World" and count "a b" or "a-b"']
    for value in ("hello world", "HELLO", "HELLO World!", "a b", "ab"):
        expected = "HELLO World" if value == "HELLO World!" else value
        assert normalise({"expression": value}, TEXT, said)["expression"] == expected


@given(st.text(max_size=40), st.text(max_size=40))
def test_normalising_a_string_never_invents_text(value: str, request: str) -> None:
    """What comes back is the value itself or a text the request quotes."""
    out = normalise({"expression": value}, TEXT, [request])["expression"]
    assert out == value or f'"{out}"' in request or f"“{out}”" in request \
        or f"‘{out}’" in request or f"`{out}`" in request  # fmt: skip


ZONES = {
    "type": "object",
    "properties": {
        "time": {"type": "string", "format": "time"},
        "from_zone": {"type": "string"},
        "to_zone": {"type": "string"},
    },
}


def test_a_conversion_swapped_by_the_model_goes_the_way_the_request_states() -> None:
    """The word right after the request's quantity names the source."""
    swapped = {"value": 1, "from_unit": "GB", "to_unit": "TB"}
    assert normalise(swapped, CONVERT, ["what is 1 terabyte in gigabytes"]) == {
        "value": 1, "from_unit": "TB", "to_unit": "GB"}  # fmt: skip
    inverted = {"value": 3, "from_unit": "m", "to_unit": "mi"}
    assert normalise(inverted, CONVERT, ["how many metres in 3 miles"])["from_unit"] == "mi"
    degrees = {"value": 72, "from_unit": "°C", "to_unit": "°F"}
    said = ["Convert 72 degrees Fahrenheit to Celsius"]
    assert normalise(degrees, CONVERT, said)["from_unit"] == "°F"
    zones = {"time": "9am", "from_zone": "Asia/Tokyo", "to_zone": "Europe/Lisbon"}
    said = ["What time is it in Tokyo when it is 9am in Lisbon?"]
    assert normalise(zones, ZONES, said) == {
        "time": "09:00", "from_zone": "Europe/Lisbon", "to_zone": "Asia/Tokyo"}  # fmt: skip


def test_a_conversion_is_left_alone_unless_the_quantity_names_its_target() -> None:
    """Right already; the word after the quantity names neither end; a "to" comes
    first; no quantity in the call; parameters that are no pair of ends."""
    right = {"value": 5, "from_unit": "km", "to_unit": "mi"}
    assert normalise(right, CONVERT, ["Convert 5 km to miles"]) == right
    backwards = {"value": 5, "from_unit": "mi", "to_unit": "km"}
    assert normalise(backwards, CONVERT, ["convert 5 to km from miles"]) == backwards
    trip = {"time": "12:00", "from_zone": "Paris", "to_zone": "Rome"}
    assert normalise(trip, ZONES, ["on 12 May to Rome from Paris"]) == trip
    bare = {"from_unit": "GB", "to_unit": "TB"}
    assert normalise(bare, CONVERT, ["what is 1 terabyte in gigabytes"]) == bare
    other = {"type": "object", "properties": {"value": {}, "unit": {}, "to_unit": {}}}
    pair = {"value": 1, "unit": "GB", "to_unit": "TB"}
    assert normalise(pair, other, ["what is 1 terabyte in gigabytes"]) == pair


@given(st.text(max_size=40), st.sampled_from(["km", "mi", "°C", "GB", "Asia/Tokyo"]),
       st.sampled_from(["m", "ft", "°F", "TB", "Europe/Paris"]))  # fmt: skip
def test_the_two_ends_of_a_conversion_are_kept_swapped_or_sourced_from_the_request(
    request: str, first: str, second: str
) -> None:
    out = normalise({"value": 1, "from_unit": first, "to_unit": second}, CONVERT, [request])
    kept = {out["from_unit"], out["to_unit"]} == {first, second}
    assert kept or (out["to_unit"] == second and out["from_unit"] in request)


def test_a_source_the_request_never_names_becomes_what_follows_its_quantity() -> None:
    """The model wrote the description's "UTC" (or an example's unit) for a source the
    request names right after the time or the number; a target named there, a word
    that is no unit, or a source the request does name leave the call as it is."""
    meeting = {"time": "9:00", "from_zone": "UTC", "to_zone": "Berlin"}
    said = ["Our standup is at 9:00 in San Francisco. What is that in Berlin?"]
    assert normalise(meeting, ZONES, said)["from_zone"] == "San Francisco"
    placed = {"time": "9:30 am Berlin", "from_zone": "UTC", "to_zone": "New York"}
    said = ["Convert 9:30 am Berlin time to New York time"]
    assert normalise(placed, ZONES, said)["from_zone"] == "Berlin"
    example = {"value": 4, "from_unit": "km", "to_unit": "B"}
    said = ["How many bytes are in 4 kilobytes?"]
    assert normalise(example, CONVERT, said)["from_unit"] == "kilobytes"
    for call, request in (
        (meeting, "At 9:00 in Berlin, what time is it in San Francisco?"),  # the target
        ({"value": 350, "from_unit": "K", "to_unit": "C"}, "Convert 350 to C"),  # no unit
        ({"value": 350, "from_unit": "F", "to_unit": "C"}, "Convert 350 Fahrenheit to C"),
    ):
        assert normalise(call, CONVERT if "value" in call else ZONES, [request]) == call


def test_a_part_of_the_request_s_sum_goes_to_the_tool_as_the_whole_sum() -> None:
    """The model copied the first part of the user's arithmetic; every value of it is
    in the request, so only the request's own sum can tell it is short."""
    for said, part, whole in (
        ("What is 17.5% of 240?", "17.5%", "17.5% of 240"),
        ("calculate (3 + 4) * 12 / 7", "3 + 4", "(3 + 4) * 12 / 7"),
        ("compute (10 - 4) * (3 + 2)", "3 + 2", "(10 - 4) * (3 + 2)"),
        ("What is 2 to the power of 10?", "2 to the power", "2 to the power of 10"),
        ("How much is 19.99 plus 5.01", "19.99 plus", "19.99 plus 5.01"),
        ("what is 12 + 3 * 4", "12+3", "12 + 3 * 4"),
        ("what's the remainder of 100 divided by 7", "100 divided by 7",
         "remainder of 100 divided by 7"),
        ("what's log base 10 of 1000", "10 of 1000", "log base 10 of 1000"),
        ("we're leaving 18 percent on a 62.50 check, what's the tip", "18 percent",
         "18 percent on a 62.50"),
        ("we're leaving 18 percent on a 62.50 check, what's the tip", "18%",
         "18 percent on a 62.50"),  # the sign said as the word
    ):  # fmt: skip
        assert normalise({"expression": part}, TEXT, [said])["expression"] == whole


ARITHMETIC = {
    "type": "object",
    "properties": {"expression": {"type": "string", "description": "An arithmetic expression"}},
}


def test_a_number_becomes_the_sum_it_is_part_of_only_where_arithmetic_is_taken() -> None:
    """ "10" for "What is 10 factorial?" is short only for a parameter that takes
    arithmetic; for any other it is a number, and stays one."""
    for said, part, whole in (
        ("What is 10 factorial?", "10", "10 factorial"),
        ("What's the square root of 81 and how many grams are in 3 ounces?", "81",
         "square root of 81"),
        ("What is 12 times 12?", "12", "12 times 12"),
        ("Give me the remainder when 1000 is divided by 7", "1000",
         "remainder when 1000 is divided by 7"),
    ):  # fmt: skip
        assert normalise({"expression": part}, ARITHMETIC, [said])["expression"] == whole
        assert normalise({"expression": part}, TEXT, [said])["expression"] == part
    said = ["Order a square table for 4 and 2 chairs"]
    assert normalise({"expression": "4"}, ARITHMETIC, said)["expression"] == "4"


def test_a_sum_retyped_in_symbols_goes_to_the_tool_in_the_requests_words() -> None:
    """A parameter that takes arithmetic reads the user's words; the model's symbols
    for them were wrong ("percent of" as a product)."""
    for said, typed, worded in (
        ("What is 8 percent of 2,500?", "8 * 2500", "8 percent of 2,500"),
        ("17 times 23 plus 4", "17*23+4", "17 times 23 plus 4"),
    ):
        assert normalise({"expression": typed}, ARITHMETIC, [said])["expression"] == worded
    for said, typed in (
        ("What is 8 percent of 2,500?", "2500 * 8"),  # another order: not the same sum
        ("round 3.14159 to 2 decimal places", "round(3.14159, 2)"),  # a function named
        ("what's 2 to the 16th", "2 ** 16"),  # no word that does arithmetic
        ("What is 8 percent of 2,500, and 8 times 2500?", "8 * 2500"),  # two sums
    ):
        assert normalise({"expression": typed}, ARITHMETIC, [said])["expression"] == typed


def test_a_sum_that_is_whole_or_not_a_part_of_one_stays_as_written() -> None:
    """The model's own form of the sum, one of two sums the request asks for, a number
    alone, a date's part: each is left for the check."""
    for said, value in (
        ("What is 12 times 12?", "12 * 12"),
        ("What is 5 + 3, and 10 * 2?", "5 + 3"),
        ("Add 345, 678 and 912", "345 + 678"),
        ("What is 1000 minus 1", "1000 - 1"),
        ("calculate 17 plus 25", "17"),
        ("We met on 2024-05-01", "2024-05"),
        ("what is 12 + 3 * 4", "2 + 3"),
    ):
        assert normalise({"expression": value}, TEXT, [said])["expression"] == value


@given(st.text(alphabet="0123456789 +-*/%().ofplus", max_size=30),
       st.text(alphabet="0123456789 +-*/%().ofplus", max_size=30))  # fmt: skip
def test_a_sum_is_only_ever_widened_to_a_text_of_the_request(value: str, said: str) -> None:
    for schema in (TEXT, ARITHMETIC):
        out = normalise({"expression": value}, schema, [said])["expression"]
        assert out == value or out in said


def test_a_text_written_around_a_few_of_the_requests_words_is_not_the_users() -> None:
    text = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    said = evidence("Write a cover letter for a marketing job")
    written = "Hello, world! This is a test cover letter for a marketing job."
    assert [u.pointer for u in check({"text": written}, text, said)] == ["/text"]
    assert check({"text": "a cover letter for a marketing job"}, text, said) == ()


def test_a_query_put_together_from_the_requests_words_is_grounded() -> None:
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    said = evidence("What will tomorrow's weather be like in New York City?")
    assert check({"query": "weather forecast New York City tomorrow"}, query, said) == ()
    assert [u.pointer for u in check({"query": "sunny beaches near Miami for the weekend"},
                                     query, said)] == ["/query"]  # fmt: skip


def test_a_commands_flags_and_a_querys_keys_are_its_syntax_not_invented_words() -> None:
    command = {"type": "object", "properties": {"command": {"type": "string"}},
               "required": ["command"]}  # fmt: skip
    said = evidence("remove the timer.exe that i set earlier using the taskkill command")
    assert check({"command": "taskkill /F /IM timer.exe"}, command, said) == ()
    query = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}
    said = evidence("I'd like to listen to the song 'Dil Nu' by Maninder Buttar on Spotify.")
    assert check({"query": "track:Dil Nu artist:Maninder Buttar"}, query, said) == ()
    assert [u.pointer for u in check({"query": "track:Hello artist:Adele"}, query, said)] == [
        "/query"
    ]


def test_codes_and_adjectives_name_what_the_request_names() -> None:
    text = {"type": "string"}
    pair = {"type": "object", "properties": {"base": text, "target": text},
            "required": ["base", "target"]}  # fmt: skip
    said = evidence("How many Japanese yen is 50 British pounds?")
    assert check({"base": "GBP", "target": "JPY"}, pair, said) == ()
    assert [u.pointer for u in check({"base": "GBP", "target": "CHF"}, pair, said)] == ["/target"]
    place = {"type": "object", "properties": {"country": {"type": "string"}},
             "required": ["country"]}  # fmt: skip
    assert check({"country": "Germany"}, place, evidence("key events in German history")) == ()
    assert check({"country": "France"}, place, evidence("key events in German history")) != ()


def test_initials_ground_a_code_and_a_code_grounds_its_name() -> None:
    place = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    assert check({"city": "SD"}, place, evidence("a villa for sale in San Diego")) == ()
    assert check({"city": "Los Angeles"}, place, evidence("How's the weather in LA?")) == ()
    assert check({"city": "Las Vegas"}, place, evidence("How's the weather in LA?")) != ()
    assert check({"city": "SF"}, place, evidence("movie releases near LA next week")) != ()


def test_a_date_the_request_names_from_today_is_grounded() -> None:
    when = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}
    said = evidence("What's the weather in Paris tomorrow?")  # today is 2026-03-14
    assert check({"date": "2026-03-15"}, when, said) == ()
    assert [u.pointer for u in check({"date": "2026-03-19"}, when, said)] == ["/date"]
    stay = evidence("Book the Plaza for 3 nights starting from 1st June 2022")
    assert check({"date": "2022-06-04"}, when, stay) == ()


def test_a_word_the_model_respelled_goes_to_the_tool_as_the_user_wrote_it() -> None:
    said = ["What time is it in Tokyo when it is 9am in Lisbon?"]
    assert normalise({"from_zone": "Lisboa"}, {}, said) == {"from_zone": "Lisbon"}
    assert normalise({"zone": "Europe/Lisboa"}, {}, said) == {"zone": "Europe/Lisbon"}
    history = ["Retrieve the full history of Buddhism"]
    assert normalise({"religion": "Buddhist"}, {}, history) == {"religion": "Buddhism"}
    # a word the request states in some form, or one like no word of it, stays
    assert normalise({"country": "Germany"}, {}, ["German history"]) == {"country": "Germany"}
    assert normalise({"city": "Prague"}, {}, ["flights to Paris"]) == {"city": "Prague"}


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=30),
       st.text(alphabet="abcdefghijklmnopqrstuvwxyz ", max_size=60))  # fmt: skip
def test_a_respelled_word_only_ever_becomes_a_word_of_the_request(value: str, said: str) -> None:
    written = normalise({"name": value}, {}, [said])["name"]
    new = set(written.split()) - set(value.split())
    assert new <= set(said.split())


def test_only_a_word_in_capitals_is_initials_a_name_may_spell() -> None:
    drink = {"type": "object", "properties": {"drink": {"type": "string"}}, "required": ["drink"]}
    assert check({"drink": "Ice Tea"}, drink, evidence("It is hot today")) != ()
    assert check({"drink": "Ice Tea"}, drink, evidence("an IT question")) == ()


QUERY = {"type": "object", "properties": {"data": {}, "expression": {"type": "string"}}}


def test_a_part_of_the_users_json_goes_to_the_tool_as_the_whole_document() -> None:
    """The query names its path from the top; the model handed over the part the path
    leads to, and the query found nothing."""
    said = ['From {"user": {"name": "Ana", "age": 31}} get user.name with JMESPath']
    part = {"data": {"name": "Ana", "age": 31}, "expression": "user.name"}
    assert normalise(part, QUERY, said)["data"] == {"user": {"name": "Ana", "age": 31}}
    said = ['Count the tags in {"tags": ["x", "y", "z"]} with length(tags)']
    assert normalise({"data": ["x", "y", "z"], "expression": "length(tags)"}, QUERY, said)[
        "data"
    ] == {"tags": ["x", "y", "z"]}


def test_a_part_with_a_query_written_for_it_stays_as_written() -> None:
    said = ['Count the tags in {"tags": ["x", "y", "z"]} with length(tags)']
    for call in (
        {"data": ["x", "y", "z"], "expression": "length(@)"},  # no key of the whole named
        {"data": {"b": 7}, "expression": "b"},  # not a part of the request's document
    ):
        assert normalise(call, QUERY, said) == call


def test_a_request_nested_past_the_json_decoder_leaves_the_call_as_written() -> None:
    said = ["[" * 100_000 + "]" * 100_000 + ' and {"a": {"b": 1}}']
    call = {"data": {"c": 2}, "expression": "a.b"}
    assert normalise(call, QUERY, said) == call


UNITS = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "enum": ["length", "mass", "data", "time"]},
        "kinds": {"type": "array", "items": {"type": "string", "enum": ["emails", "urls"]}},
        "text": {"type": "string"},
    },
    "required": ["text"],
}


def test_an_optional_enum_left_out_takes_the_one_member_the_request_names() -> None:
    filled, names = named_members({"text": "x"}, UNITS, ["Show me the data size units"])
    assert filled == {"text": "x", "category": "data"}
    assert names == ("category",)
    listed, _ = named_members({"text": "x"}, UNITS, ["find the URLs in my note"])
    assert listed["kinds"] == ["urls"]
    weights, _ = named_members({"text": "x"}, UNITS, ["what weight units do you know?"])
    assert weights["category"] == "mass"  # a member named by its synonym


def test_no_member_is_filled_when_the_request_names_none_or_several() -> None:
    assert named_members({"text": "x"}, UNITS, ["list every unit"]) == ({"text": "x"}, ())
    both, names = named_members({"text": "x"}, UNITS, ["units of mass and time"])
    assert "category" not in both
    assert names == ()


def test_a_member_named_only_in_the_data_or_an_argument_is_not_filled() -> None:
    quoted = named_members({"text": "x"}, UNITS, ['Count words in "mass data"'])
    assert quoted == ({"text": "x"}, ())
    inside_json = named_members({"text": "x"}, UNITS, ['Query {"time": 3} for it'])
    assert inside_json == ({"text": "x"}, ())
    held = named_members({"text": "time flies"}, UNITS, ["split time flies"])
    assert held == ({"text": "time flies"}, ())


def test_a_given_or_required_value_is_never_replaced() -> None:
    given_, names = named_members({"text": "x", "category": "mass"}, UNITS, ["data units"])
    assert given_["category"] == "mass"
    assert names == ()


@given(st.text(max_size=80))
def test_filling_only_ever_adds_a_member_of_the_enum(said: str) -> None:
    filled, names = named_members({"text": "x"}, UNITS, [said])
    assert set(filled) - {"text"} == set(names)
    assert filled.get("category", "data") in {"length", "mass", "data", "time"}
    assert set(filled.get("kinds", [])) <= {"emails", "urls"}


PLACE = {
    "type": "object",
    "properties": {
        "zone": {"type": "string", "default": "UTC"},
        "pattern": {"type": "string", "default": "**/*"},
        "limit": {"type": "integer", "default": 5},
    },
}


def test_a_default_left_to_answer_for_another_place_takes_the_one_the_request_names() -> None:
    filled, names = named_default({}, PLACE, ["Tell me the current hour in Istanbul"])
    assert filled == {"zone": "Istanbul"}
    assert names == ("zone",)
    assert named_default({}, PLACE, ["what's the time in New York now"])[0] == {"zone": "New York"}


def test_no_name_two_names_a_quoted_one_or_a_held_one_leaves_the_default() -> None:
    for said in ("What time is it?", "the time in Paris and in Tokyo", 'is "Paris" a zone'):
        assert named_default({}, PLACE, [said]) == ({}, ())
    held = named_default({"pattern": "Lima*"}, PLACE, ["the files about Lima"])
    assert held == ({"pattern": "Lima*"}, ())  # another argument holds "Lima"
    given_ = {"zone": "Europe/Lima"}
    assert named_default(given_, PLACE, ["now in Lima"]) == (given_, ())


def test_an_expression_copied_from_the_description_is_refused_though_its_numbers_fit() -> None:
    query = {"type": "object", "properties": {"expression": {"type": "string"}},
             "required": ["expression"]}  # fmt: skip
    described = "A JMESPath expression, e.g. orders[?total > `100`].id."
    said = evidence('How many sales are above 100 in {"sales": [{"total": 125}]}?')
    copied = check({"expression": "orders[?total > `100`].id."}, query, said, described)
    assert [u.pointer for u in copied] == ["/expression"]
    assert "description" in copied[0].reason
    # the request's own expression, or one the request states as the example does
    own = "length(sales[?total > `100`])"
    assert check({"expression": own}, query, said, described) == ()
    asked = evidence("Is orders[?total > `100`].id valid?")
    assert check({"expression": "orders[?total > `100`].id"}, query, asked, described) == ()
    # a function the example names is the language's word, not an invention
    calc = {"type": "object", "properties": {"expression": {}}, "required": ["expression"]}
    root = evidence("what's the square root of 16")
    assert check({"expression": "sqrt(16)"}, calc, root, "e.g. sqrt(16) or 2 ** 8") == ()


def test_a_time_of_day_must_be_one_the_request_states_when_it_states_any() -> None:
    zones = {"type": "object", "required": ["time"], "properties": {
        "time": {"type": "string", "description": "A time of day as HH:MM"}}}  # fmt: skip
    said = evidence("quarter past 3 pm in Chicago, what's that in Madrid?")
    assert [u.pointer for u in check({"time": "15:00"}, zones, said)] == ["/time"]
    assert check({"time": "15:15"}, zones, said) == ()
    assert check({"time": "3:15 pm"}, zones, said) == ()
    # a request that states no time of day leaves "now" and the like to other rules
    assert check({"time": "now"}, zones, evidence("what time is it in Oslo now")) == ()


def test_a_whole_and_a_part_is_one_number() -> None:
    assert {3.5, 0.5} <= numbers_in("how many days is three and a half years")
    assert 2.25 in numbers_in("2 and a quarter miles")
    assert 45.0 in numbers_in("wake me at quarter to seven")


def test_a_text_retyped_without_its_quote_marks_is_the_requests_as_written() -> None:
    said = ["Convert the smart quotes to plain ones in “Don’t panic,” she said"]
    assert normalise({"expression": "Don’t panic, she said"}, TEXT, said)["expression"] == (
        "“Don’t panic,” she said"
    )
    curly = ["Straighten the curly quotes in “Hello” world"]
    assert normalise({"expression": "Hello world"}, TEXT, curly)["expression"] == "“Hello” world"
    # other punctuation is the model's to choose: a client's tool may want the comma
    city = ["Hotels in New York NY tonight"]
    assert normalise({"expression": "New York, NY"}, TEXT, city)["expression"] == "New York, NY"
