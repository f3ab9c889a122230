"""What a conversation states: every number as people write it, words in one spelling,
and percentages; Hypothesis writes the numbers."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.llm.stated import (
    clocks_in,
    code_in,
    dates_meant,
    fold,
    initials_in,
    initials_of,
    json_in,
    numbers_in,
    percents_in,
    quoted_in,
    spelled_numbers,
    states_date,
    stem,
)

_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
         "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
         "seventeen", "eighteen", "nineteen"]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def spell(n: int) -> str:
    """``n`` in English words, British style ("three hundred and fifty")."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10 - 2] + ("" if n % 10 == 0 else f"-{_ONES[n % 10]}")
    if n < 1000:
        rest = n % 100
        return f"{_ONES[n // 100]} hundred" + (f" and {spell(rest)}" if rest else "")
    for scale, name in ((10**9, "billion"), (10**6, "million"), (1000, "thousand")):
        if n >= scale:
            rest = n % scale
            return f"{spell(n // scale)} {name}" + (f" {spell(rest)}" if rest else "")
    raise AssertionError(n)


@given(st.integers(min_value=2, max_value=10**9), st.sampled_from(["km", " kg", "F", "%"]))
def test_every_written_integer_is_read_back(number: int, unit: str) -> None:
    for written in (str(number), f"{number:,}"):
        assert float(number) in numbers_in(f"convert {written}{unit} please")


@given(st.decimals(min_value=0, max_value=10**6, places=3, allow_nan=False))
def test_every_written_decimal_is_read_back(number: object) -> None:
    text = f"what is {number} in miles"
    assert any(abs(n - float(str(number))) < 1e-9 for n in numbers_in(text))


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1,
               max_size=12))  # fmt: skip
def test_folding_is_idempotent_and_ignores_case(word: str) -> None:
    assert fold(fold(word)) == fold(word) or fold(word).endswith(("er", "y"))
    assert fold(word.upper()) == fold(word.lower())


def test_numbers_in_words_count_as_numbers() -> None:
    assert {25.0, 350.0} <= numbers_in("twenty-five people and three hundred and fifty more")
    assert 1200.0 in numbers_in("one thousand two hundred")
    assert spelled_numbers("twenty five, three") == {25.0, 3.0}  # punctuation ends a run


def test_words_that_name_a_count_count_as_its_number() -> None:
    assert 10.0 in numbers_in("deer in Washington over the past decade")
    assert {2.0, 100.0} <= numbers_in("a couple of centuries")
    assert {7.0, 14.0} <= numbers_in("in a week or a fortnight")


@given(st.integers(min_value=0, max_value=10**9 - 1))
def test_every_number_spelled_in_words_is_read_back(number: int) -> None:
    assert float(number) in numbers_in(f"what is {spell(number)} in miles")


def test_percentages_are_read_with_their_number() -> None:
    assert percents_in("what is 17.5% of 240, or 5 percent of 1,000") == {17.5, 5.0}
    assert 0.175 in numbers_in("what is 17.5% of 240")


def test_the_looser_stem_reads_a_participle_as_its_word() -> None:
    assert stem("detailed") == stem("detail") == "detail"
    assert stem("nights") == "night"


def test_numbers_as_written_leave_out_the_percent_readings() -> None:
    assert numbers_in("100 % 7", readings=False) == {100.0, 7.0}
    assert numbers_in("3 thousand", readings=False) == {3.0, 1000.0, 3000.0}
    assert {0.07, 100.0} <= numbers_in("100 % 7")


_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip


@given(st.dates(), st.integers(min_value=1, max_value=11))
def test_a_date_and_hour_said_in_words_state_the_numbers_of_their_iso_form(
    day: dt.date, hour: int
) -> None:
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10 if day.day // 10 != 1 else 0, "th")
    said = numbers_in(f"on the {day.day}{suffix} of {_MONTHS[day.month - 1]} {day.year} "
                      f"at {hour} in the afternoon")  # fmt: skip
    iso = f"{day.isoformat()}T{hour + 12:02d}:00"
    assert numbers_in(iso, readings=False) - {0.0} <= said


def test_a_month_named_states_its_number() -> None:
    assert {4.0, 22.0, 2023.0} <= numbers_in("Sacramento on April 22nd 2023")
    assert 9.0 in numbers_in("due in Sept")
    assert 21.0 in numbers_in("at 9 in the evening") and 21.0 not in numbers_in("at 9 today")


@given(st.floats(min_value=1e-15, max_value=1e15, allow_nan=False, allow_infinity=False))
def test_a_number_in_scientific_notation_is_read_back(number: float) -> None:
    written = f"{number:.3e}"
    assert any(abs(n - float(written)) <= 1e-12 * abs(float(written)) for n in numbers_in(
        f"two charges of {written} at a distance"))  # fmt: skip


def test_a_dot_after_a_word_and_a_comma_before_a_year_are_not_part_of_a_number() -> None:
    assert {20.0, 2023.0} <= numbers_in("this weekend, Jun.20,2023")
    assert 202023.0 not in numbers_in("Jun.20,2023")
    assert {2023.0, 3.0, 1.0} <= numbers_in("today is 2023.3.1 monday")
    assert {200.0, 300.0, 400.0, 500.0} <= numbers_in("cash_flows=[200,300,400,500]")
    assert 1000.0 in numbers_in("1,000 people")


def test_a_quantity_reads_in_the_units_a_tool_may_take() -> None:
    assert {1e6, 1.2e6} <= numbers_in("revenues of $1M in 2019 and $1.2M in 2020")
    assert 10_000.0 in numbers_in("a 10k run")
    assert 5e6 in numbers_in("a £5m budget") and 5e6 not in numbers_in("a 5m rope")
    said = numbers_in("capacitance of 100µF and inductance of 50mH")
    assert any(abs(n - 1e-4) < 1e-12 for n in said) and 0.05 in said
    assert {180.0, 0.05} <= numbers_in("a duration of 3 minutes")
    assert {150.0, 9000.0} <= numbers_in("2.5 hrs")
    assert 70.0 in numbers_in("height 5ft 10in")
    assert {24.0, 36.0} <= numbers_in("two dozen eggs and 3 dozen rolls")
    assert {4.0, 12.0} <= numbers_in("compounded quarterly, paid monthly")


_FORMS = ("{d:%Y-%m-%d}", "{d.day} {d:%B %Y}", "{d:%B} {d.day}, {d.year}",
          "{d:%b}.{d.day},{d.year}", "{d:%m/%d/%Y}")  # fmt: skip


@given(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)),
       st.integers(min_value=1, max_value=60), st.sampled_from(_FORMS))  # fmt: skip
def test_a_date_a_stated_span_away_is_meant(start: dt.date, nights: int, form: str) -> None:
    said = f"Book a room for {nights} nights starting from {form.format(d=start)}"
    assert start + dt.timedelta(days=nights) in dates_meant(said, dt.date(2026, 3, 14))


@given(st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2060, 12, 31)))
def test_days_named_from_today_are_meant(today: dt.date) -> None:
    def day(n: int) -> dt.date:
        return today + dt.timedelta(days=n)

    assert dates_meant("the weather tomorrow", today) == {day(1)}
    assert day(-1) in dates_meant("what happened yesterday", today)
    assert day(3) in dates_meant("remind me in 3 days", today)
    friday = dates_meant("is the museum open on Friday?", today)
    assert len(friday) == 3 and all(d.weekday() == 4 for d in friday)
    assert any(0 < (d - today).days <= 7 for d in friday)
    assert dates_meant("convert 5 km to miles", today) == set()


def test_an_irregular_plural_folds_to_its_singular() -> None:
    assert fold("women") == "woman" and fold("Children") == "child"


def test_initials_of_names_and_of_longer_runs_of_words() -> None:
    assert "sd" in initials_in("a villa in San Diego")
    assert "ssn" in initials_in("their social security numbers")
    assert "usa" in initials_in("the United States of America")
    assert "iw" not in initials_in("i want a villa")  # two common words: chance
    assert initials_of("Los Angeles") == "la" and initials_of("Bank of America") == "ba"


def test_the_json_a_text_writes_is_read_from_each_start_that_decodes() -> None:
    """A list cut off at its end still gives the objects inside it."""
    assert list(json_in('say {"a": 1} then [2, 3]')) == [{"a": 1}, [2, 3]]
    assert list(json_in('[{"name": "f", "arguments": {}}, {"na')) == [
        {"name": "f", "arguments": {}}
    ]


def test_a_run_nested_past_the_decoder_is_passed_and_tries_bound_the_rest() -> None:
    deep = "[" * 100_000 + "]" * 100_000 + ' {"a": 1}'
    assert list(json_in(deep)) == [{"a": 1}]
    assert list(json_in("{x " * 1_000 + '{"a": 1}', tries=64)) == []


@pytest.mark.parametrize(
    ("text", "alone", "expected"),
    [
        ('Count "a b" and “c d” and "a b"', False, ["a b", "c d"]),
        ("it's Tom's 'quote'", False, []),  # straight single quotes are apostrophes too
        ("Would foo[?bar > `1`] parse?", False, ["1"]),
        ("Would foo[?bar > `1`] parse?", True, []),
        ("Is `a.b[` valid?", True, ["a.b["]),
        ('Redact "x@y.com".', True, ["x@y.com"]),
    ],
)
def test_quoted_texts_are_read_in_order_once(text: str, alone: bool, expected: list[str]) -> None:
    assert quoted_in(text, alone=alone) == expected


@given(st.text(max_size=60))
def test_any_text_reads_to_quotes_it_holds(text: str) -> None:
    assert all(q in text for q in quoted_in(text, alone=True))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("If it's noon in Tokyo, what time is it in London?", ["12:00"]),
        ("meet at 9:30 am or 7pm, not 25:00", ["09:30", "19:00"]),
        ("It's 11:45 in Seoul", ["11:45"]),
        ("3:30 in the afternoon, then midnight", ["15:30", "00:00"]),
        ("call at 12am, 12pm", ["00:00", "12:00"]),
        ("a 3 to 2 win, 13pm", []),
        ("quarter past 3 pm in Chicago", ["15:15"]),  # not also 15:00
        ("wake me at quarter to seven", ["06:45"]),
        ("half past seven, or 10 past 4 pm", ["07:30", "16:10"]),
        ("I have 3 to 4 apples, half to the left", []),
    ],
)
def test_times_of_day_are_read_as_clocks(text: str, expected: list[str]) -> None:
    assert clocks_in(text) == expected


@given(st.integers(1, 12), st.integers(0, 59), st.sampled_from(["am", "pm", " a.m.", "PM"]))
def test_any_twelve_hour_time_reads_to_its_clock(hour: int, minute: int, half: str) -> None:
    hours = hour % 12 + (12 if half.strip(" .").lower().startswith("p") else 0)
    assert clocks_in(f"at {hour}:{minute:02d}{half} today") == [f"{hours:02d}:{minute:02d}"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("on 2024-03-10 at 14:30", True), ("tomorrow at 9am", True), ("3 March 2024", True),
     ("noon in Tokyo", False), ("11:45 in Seoul", False)],
)  # fmt: skip
def test_a_date_is_stated_written_out_or_relative(text: str, expected: bool) -> None:
    assert states_date(text, dt.date(2026, 11, 29)) is expected


def test_code_in_finds_the_expressions_a_request_writes_unquoted() -> None:
    said = "Can items[*].name or sort_by(people, &age)[-1].name be parsed? (I hope so.)"
    assert code_in(said) == ["items[*].name", "sort_by(people, &age)[-1].name"]
    assert code_in('Take the first of {"xs": [9, 8]} using xs[0]') == ["xs[0]"]


def test_an_expression_left_open_runs_to_the_sentences_punctuation() -> None:
    said = "I keep getting errors from people[?age >= `18`.name, is that valid JMESPath?"
    assert code_in(said) == ["people[?age >= `18`.name"]
    assert code_in("I like tea (and coffee, mostly every day") == []  # a remark, no name


@given(st.text(alphabet="ab \t()[]{}.*&,?", max_size=60))
def test_every_expression_code_in_finds_is_in_the_text_and_balanced_or_opened(text: str) -> None:
    for span in code_in(text):
        assert span in text
        balanced = sum(span.count(c) for c in "([{") == sum(span.count(c) for c in ")]}")
        assert balanced or re.match(r"[A-Za-z_@$][\w.]*[\[(]", span)
