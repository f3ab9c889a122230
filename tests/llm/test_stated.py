"""What a conversation states: every number as people write it, words in one spelling,
and percentages; Hypothesis writes the numbers."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from plugyard.llm.stated import fold, numbers_in, percents_in, spelled_numbers, stem

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
