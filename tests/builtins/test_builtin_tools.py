"""The bundled tools: calculator, unit and time-zone conversion, text statistics and
extraction, JSON queries — and the limits that keep them safe."""

from __future__ import annotations

import math

import pytest
from bundled_plugins import code, data, run
from hypothesis import given, settings
from hypothesis import strategies as st

# ----------------------------------------------------------------------------- calculator


@pytest.mark.parametrize(
    ("expression", "result"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("2 ^ 10", 1024),
        ("2 * 3^2", 18),  # '^' binds tighter than '*', as '**' does
        ("sqrt(2) * (3 + 4)^2", 69.2964645562817),  # 49·√2, to 15 digits
        ("2 ** -1", 0.5),
        ("0.1 + 0.2", 0.3),
        ("sqrt(16) + abs(-2)", 6.0),
        ("round(pi, 2)", 3.14),
        ("log(8, 2)", 3.0),
        ("factorial(5) / 4", 30.0),
        ("-3 // 2", -2),
        ("7 % 3", 1),
        ("max(1, 9, 4)", 9),
    ],
)
def test_the_calculator_evaluates_arithmetic(expression: str, result: float) -> None:
    assert data("calculator", "execute", expression=expression)["result"] == result


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "().__class__.__bases__",
        "open('/etc/passwd')",
        "[x for x in range(10)]",
        "lambda: 1",
        "'a' * 3",
        "True + 1",
        "9 ** 9 ** 9",
        "10 ** 400",
        "2 ** 10000.5",
        "factorial(1000)",
        "1 / 0",
        "(-8) ** 0.5",
        "sqrt(-1)",
        "1 +",
        "+".join(["1"] * 600),
    ],
)
def test_the_calculator_refuses_what_is_not_bounded_arithmetic(expression: str) -> None:
    assert code("calculator", "execute", expression=expression) == "invalid_parameters"


@settings(max_examples=50, deadline=None)
@given(st.integers(-(10**6), 10**6), st.integers(-(10**6), 10**6), st.sampled_from("+-*"))
def test_the_calculator_agrees_with_integer_arithmetic(a: int, b: int, op: str) -> None:
    expected = {"+": a + b, "-": a - b, "*": a * b}[op]
    assert data("calculator", "execute", expression=f"{a} {op} ({b})")["result"] == expected


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=40))
def test_the_calculator_answers_any_text_with_a_result_or_invalid_parameters(text: str) -> None:
    outcome = run("calculator", "execute", expression=text)
    assert outcome.error is None or outcome.error.code == "invalid_parameters"


@pytest.mark.parametrize(
    ("text", "result"),
    [
        ("What is 17.5% of 240?", 42),
        ("what is 20 percent of 150", 30),
        ("50%", 0.5),
        ("10% * 50", 5),
        ("What is 10 factorial?", 3628800),
        ("6!", 720),
        ("factorial of 5", 120),
        ("what's the remainder of 100 divided by 7", 2),
        ("the remainder when 50 is divided by 6", 2),
        ("100 mod 7", 2),
        ("5 % 3 plus 1", 3),  # '%' before a number stays the remainder
        ("What is 7 squared plus 3 squared?", 58),
        ("2 cubed", 8),
        ("the square of 9", 81),
        ("square root of 1764", 42),
        ("√16 + 2²", 8),
        ("what is 2 to the power of 32", 4294967296),
        ("3 raised to 4", 81),
        ("What's 3 to the 4th power?", 81),
        ("2 raised to the third power plus 1", 9),
        ("10 to the 2nd", 100),
        ("calculate (3 + 4) * 12 / 7", 12),
        ("17 times 23 plus 4", 395),
        ("1000 divided by 8", 125),
        ("6 multiplied by 7 minus 2", 40),
        ("twenty-three times four", 92),
        ("three hundred and five minus five", 300),
        ("2.5 million / 5", 500000),
        ("1,234,567 + 1", 1234568),
        ("Add 345, 678 and 912", 1935),
        ("the sum of 7 squared and 3 squared", 58),
        ("product of 4, 5 and 6", 120),
        ("average of 2, 4 and 9", 5),
        ("subtract 3 from 10", 7),
        ("difference between 10 and 3", 7),
        ("divide 96 by 4", 24),
        ("half of 80", 40),
        ("18 percent on a 62.50", 11.25),  # a tip, a tax: "on" after a percentage
        ("3/8 of 1,200", 450),  # three eighths of 1,200, not 3 / (8 * 1,200)
        ("2 + 3/4 of 100", 77),
        ("1 / half of 8", 0.25),
        ("gcd of 12 and 18", 6),
        ("greatest common divisor of 84 and 126", 42),
        ("the lowest common multiple of 8, 12 and 20", 120),
        ("highest common factor of 12 and 30", 6),
        ("the absolute value of -5", 5),
        ("round 3.14159 to 2 decimal places", 3.14),
        ("what's log base 10 of 1000", 3),  # exactly: log10, not 2.9999999999999996
        ("log base 2 of 64 plus 1", 7),
        ("the log of 1000 to base 10", 3),
        ("minus 4 plus 10", 6),
    ],
)
def test_the_calculator_reads_arithmetic_written_in_words(text: str, result: float) -> None:
    assert data("calculator", "execute", expression=text)["result"] == pytest.approx(result)


def test_the_calculator_says_how_it_read_words() -> None:
    answer = data("calculator", "execute", expression="What is 17.5% of 240?")
    assert answer["read_as"] == "17.5 / 100 * 240"
    assert data("calculator", "execute", expression="2 * 3")["read_as"] == "2 * 3"


@pytest.mark.parametrize(
    ("text", "word", "position"),
    [
        ("100 degrees celsius in fahrenheit", "degrees", 4),
        ("split 96 between 4 people", "split", 0),
        ("3 plus", "", 6),
        ("7 times (2 + 3", "", 14),
    ],
)
def test_words_the_calculator_cannot_read_are_named_with_their_place(
    text: str, word: str, position: int
) -> None:
    outcome = run("calculator", "execute", expression=text)
    assert outcome.error is not None and outcome.error.code == "invalid_parameters"
    assert (outcome.error.details["word"], outcome.error.details["position"]) == (word, position)


@pytest.mark.parametrize(
    "text",
    [
        "square root of " * 60 + "4",
        "minus " * 150 + "1",
        "(" * 300 + "1 plus 1" + ")" * 300,
        "-" * 999 + "x",
        "a billion billion billion",
        "2 to the power of 10000",
        "1000 factorial",
    ],
)
def test_arithmetic_in_words_is_bounded_as_typed_arithmetic_is(text: str) -> None:
    assert code("calculator", "execute", expression=text) == "invalid_parameters"


_SPOKEN = {"+": "plus", "-": "minus", "*": "times", "/": "divided by"}
_SPELLED = dict(enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
)))  # fmt: skip


def _spoken(n: int) -> str:
    return _SPELLED[n] if n < 20 else str(n)


@st.composite
def _sums(draw: st.DrawFn) -> tuple[str, str]:
    """The same flat arithmetic typed and said: '3 * 4 + 17' and 'three times four plus 17'."""
    numbers = draw(st.lists(st.integers(0, 99), min_size=1, max_size=6))
    ops = draw(st.lists(st.sampled_from("+-*/"), min_size=len(numbers) - 1,
                        max_size=len(numbers) - 1))  # fmt: skip
    typed, said = [str(numbers[0])], [_spoken(numbers[0])]
    for op, number in zip(ops, numbers[1:], strict=True):
        typed += [op, str(number)]
        said += [_SPOKEN[op], _spoken(number)]
    return " ".join(typed), " ".join(said)


@settings(max_examples=60, deadline=None)
@given(_sums())
def test_arithmetic_said_in_words_equals_it_typed(pair: tuple[str, str]) -> None:
    typed, said = (
        run("calculator", "execute", expression=pair[0]),
        run("calculator", "execute", expression=pair[1]),
    )
    assert (typed.error is None) == (said.error is None)
    if typed.error is None:
        assert said.data["result"] == typed.data["result"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([
    "plus", "minus", "times", "divided", "by", "of", "percent", "squared", "factorial",
    "square", "root", "remainder", "sum", "and", ",", "(", ")", "!", "%", "7", "twenty",
    "three", "hundred", "to", "the", "power", "half", "pi", "sqrt", "round", "x", "-",
]), max_size=14).map(" ".join))  # fmt: skip
def test_any_string_of_arithmetic_words_gives_a_number_or_invalid_parameters(text: str) -> None:
    outcome = run("calculator", "execute", expression=text)
    assert outcome.error is None or outcome.error.code == "invalid_parameters"


# ------------------------------------------------------------------------------ units


@pytest.mark.parametrize(
    ("value", "source", "target", "result"),
    [
        (10, "km", "mi", 6.21371192237),
        (350, "°F", "°C", 176.666666667),
        (0, "K", "degF", -459.67),
        (3, "GB", "MiB", 2861.02294922),
        (100, "Mbit", "MB", 12.5),
        (2.5, "hours", "s", 9000),
        (1, "ft", "in", 12),
        (1, "cup", "mL", 236.5882365),
        (1, "stone", "lb", 14),
    ],
)
def test_units_convert(value: float, source: str, target: str, result: float) -> None:
    answer = data("unit-convert", "convert", value=value, from_unit=source, to_unit=target)
    assert answer["result"] == pytest.approx(result, rel=1e-9)


def test_units_of_different_kinds_do_not_convert() -> None:
    assert code("unit-convert", "convert", value=1, from_unit="kg", to_unit="m") == (
        "invalid_parameters"
    )
    assert code("unit-convert", "convert", value=1, from_unit="parsec", to_unit="m") == (
        "invalid_parameters"
    )
    assert code("unit-convert", "convert", value=-300, from_unit="°C", to_unit="K") == (
        "invalid_parameters"
    )


@settings(max_examples=40, deadline=None)
@given(
    st.floats(min_value=0.001, max_value=1e6),
    st.sampled_from(["m", "km", "mi", "in", "kg", "lb", "L", "gal", "MiB", "GB", "h", "wk"]),
)
def test_a_unit_conversion_round_trips(value: float, unit: str) -> None:
    kind = data("unit-convert", "convert", value=1, from_unit=unit, to_unit=unit)["category"]
    base = {"length": "m", "mass": "kg", "volume": "L", "data": "B", "time": "s"}[kind]
    there = data("unit-convert", "convert", value=value, from_unit=unit, to_unit=base)
    back = data("unit-convert", "convert", value=there["result"], from_unit=base, to_unit=unit)
    assert back["result"] == pytest.approx(value, rel=1e-9)


def test_units_are_listed_by_kind() -> None:
    units = data("unit-convert", "list_units", category="temperature")["units"]
    assert [u["symbol"] for u in units] == ["°C", "°F", "K", "°R"]


# ------------------------------------------------------------------------------ time zones


def test_a_time_converts_between_zones() -> None:
    answer = data(
        "time-zones", "convert_time", time="2024-03-10T14:30", from_zone="America/New_York",
        to_zone="asia/tokyo",
    )  # fmt: skip
    assert answer["time"] == "2024-03-11T03:30:00+09:00"
    assert (answer["utc"], answer["abbreviation"], answer["dst"]) == (
        "2024-03-10T18:30:00Z", "JST", False
    )  # fmt: skip


def test_a_time_with_its_own_offset_keeps_it() -> None:
    answer = data("time-zones", "convert_time", time="2024-07-01T12:00:00Z", to_zone="Europe/Paris")
    assert (answer["time"], answer["dst"]) == ("2024-07-01T14:00:00+02:00", True)


def test_a_skipped_wall_clock_time_is_noted() -> None:
    answer = data(
        "time-zones", "convert_time", time="2024-03-31T02:30", from_zone="Europe/Berlin",
        to_zone="UTC",
    )  # fmt: skip
    assert answer["note"] is not None


def test_unknown_zones_and_times_are_invalid_parameters() -> None:
    assert code("time-zones", "convert_time", time="now", to_zone="Mars/Olympus") == (
        "invalid_parameters"
    )
    assert code("time-zones", "convert_time", time="yesterday", to_zone="UTC") == (
        "invalid_parameters"
    )


def test_now_and_zone_search() -> None:
    assert data("time-zones", "now", zone="Asia/Kolkata")["utc_offset"] == "+05:30"
    assert "America/New_York" in data("time-zones", "list_zones", contains="york")["zones"]


@pytest.mark.parametrize(
    ("name", "zone"),
    [
        ("Asia/Tokyo", "Asia/Tokyo"),
        ("asia/kolkata", "Asia/Kolkata"),
        ("Tokyo", "Asia/Tokyo"),
        ("new york", "America/New_York"),
        ("NEW_YORK", "America/New_York"),
        ("São Paulo", "America/Sao_Paulo"),
        ("Buenos Aires", "America/Argentina/Buenos_Aires"),  # the listed zone, not the link
        ("Chicago time", "America/Chicago"),
        ("Tokyo, Japan", "Asia/Tokyo"),
        ("India", "Asia/Kolkata"),
        ("IN", "Asia/Kolkata"),
        ("Japan", "Asia/Tokyo"),  # the country, not the old zone named Japan
        ("Singapore", "Asia/Singapore"),
        ("South Korea", "Asia/Seoul"),
        ("UK", "Europe/London"),
        ("Oman", "Asia/Dubai"),  # a country whose zone is another's
        ("UTC", "UTC"),
        ("GMT", "UTC"),
        ("Z", "UTC"),
        ("UTC+5", "UTC+05:00"),
        ("gmt-03:30", "UTC-03:30"),
        ("EST", "EST"),
        ("Mumbai", "Asia/Kolkata"),  # a city no IANA name ends with
        ("Bombay", "Asia/Kolkata"),  # another name it goes by
        ("Seattle", "America/Los_Angeles"),
        ("Munich, Germany", "Europe/Berlin"),
        ("Tokio", "Asia/Tokyo"),
    ],
)
def test_a_zone_may_be_named_as_people_name_places(name: str, zone: str) -> None:
    answer = data("time-zones", "now", zone=name)
    assert (answer["zone"], answer["note"]) == (zone, None)


def test_a_country_with_several_zones_uses_the_first_listed_and_says_so() -> None:
    answer = data("time-zones", "now", zone="United States")
    assert answer["zone"] == "America/New_York"
    assert answer["note"] is not None


def test_a_city_that_several_share_is_the_most_populous_and_the_note_says_so() -> None:
    answer = data("time-zones", "now", zone="San Francisco")
    assert answer["zone"] == "America/Los_Angeles"
    assert answer["note"] is not None


def test_the_zone_of_a_city_beyond_iana_names_is_listed() -> None:
    assert data("time-zones", "list_zones", contains="Mumbai")["zones"] == ["Asia/Kolkata"]


@pytest.mark.parametrize("name", ["Korea", "Mars", "Tokyoo", "SF", "UTC+15", ""])
def test_a_name_that_is_no_one_place_is_invalid_parameters(name: str) -> None:
    assert code("time-zones", "now", zone=name) == "invalid_parameters"


def test_a_time_converts_between_places_named_by_city_and_country() -> None:
    answer = data(
        "time-zones", "convert_time", time="2024-01-15T08:00", from_zone="Sydney",
        to_zone="Germany",
    )  # fmt: skip
    assert answer["time"] == "2024-01-14T22:00:00+01:00"
    assert answer["zone"] == "Europe/Berlin"


@pytest.mark.parametrize(
    ("time", "source", "utc_hour"),
    [
        ("14:00 UTC", "Asia/Tokyo", 14),  # the place in the time wins over from_zone
        ("9am Lisbon", "UTC", 9),
        ("3 pm", "Europe/London", 15),
        ("12am", "UTC", 0),
    ],
)
def test_a_time_may_be_written_as_people_write_it(time: str, source: str, utc_hour: int) -> None:
    answer = data("time-zones", "convert_time", time=time, from_zone=source, to_zone="UTC")
    assert answer["time"][11:13] == f"{utc_hour:02d}"


def test_zone_search_finds_a_countrys_zones() -> None:
    found = data("time-zones", "list_zones", contains="Brazil")["zones"]
    assert "America/Sao_Paulo" in found


# ------------------------------------------------------------------------------ text


def test_text_statistics() -> None:
    text = "Dr. Smith went home. He was tired! Was he?\n\nYes, very much so."
    stats = data("text-stats", "execute", text=text, words_per_minute=60)
    assert (stats["words"], stats["sentences"], stats["paragraphs"]) == (13, 4, 2)
    assert stats["reading_time_seconds"] == 13
    assert stats["top_words"][0]["word"] in {"dr", "smith", "went", "home", "tired", "yes"}


def test_text_statistics_of_nothing() -> None:
    stats = data("text-stats", "execute", text="")
    assert (stats["words"], stats["sentences"], stats["reading_time"]) == (0, 0, "0 s")


def test_text_statistics_refuse_an_oversized_text() -> None:
    assert code("text-stats", "execute", text="a " * 1_000_001) == "invalid_parameters"


def test_extraction_finds_emails_urls_numbers_and_dates() -> None:
    text = (
        "Write to ada@example.org or see https://example.org/docs?x=1. Revenue rose 12.5% "
        "to 1,234,567 on 2024-03-05 and on March 3rd, 2024; 03/04/2024 is ambiguous."
    )
    found = data("text-extract", "extract", text=text)
    assert found["emails"] == ["ada@example.org"]
    assert found["urls"] == ["https://example.org/docs?x=1"]
    assert [n["value"] for n in found["numbers"]] == [12.5, 1234567]
    assert [d["iso"] for d in found["dates"]] == ["2024-03-05", "2024-03-03", None]


def test_extraction_of_chosen_kinds_only() -> None:
    found = data("text-extract", "extract", text="a@b.io 42", kinds=["numbers"])
    assert found == {"numbers": [{"text": "42", "value": 42, "percent": False}]}


def test_json_queries() -> None:
    people = {"people": [{"name": "Ada", "age": 36}, {"name": "Alan", "age": 41}]}
    answer = data("json-query", "query", data=people, expression="people[?age > `40`].name")
    assert answer == {"result": ["Alan"], "found": True}
    assert data("json-query", "query", data=people, expression="nobody")["found"] is False
    assert code("json-query", "query", data=people, expression="people[?") == "invalid_parameters"
    assert data("json-query", "check_expression", expression="a.b")["valid"] is True
    assert data("json-query", "check_expression", expression="a.[")["valid"] is False


def test_results_are_not_nan_or_infinite() -> None:
    answer = data("calculator", "execute", expression="exp(700)")
    assert math.isfinite(answer["result"])
