import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.discovery import fusion


def test_zscore_and_flat_channel() -> None:
    s = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    np.testing.assert_allclose(fusion.zscore(s, 2.0, 1.0), [-1, 0, 1])
    assert not fusion.zscore(s, 2.0, 0.0).any()


def test_blend_weights_each_channel() -> None:
    d, lx, whole = (np.array(v, dtype=np.float32) for v in ([1, 0], [0, 1], [2, 2]))
    np.testing.assert_allclose(fusion.Blend(0.5, 0.2, 0.3).fuse(d, lx, whole), [1.1, 0.8])
    np.testing.assert_allclose(fusion.Blend(0.8, 0.2).fuse(d, lx, whole), [0.8, 0.2])


def test_policy_gives_long_queries_their_own_blend() -> None:
    policy = fusion.Policy(fusion.Blend(1, 0), fusion.Blend(0, 1), long_query=3)
    assert policy.blend_for(3) is policy.short
    assert policy.blend_for(4) is policy.long
    # The shipped weights: every blend is convex, and long queries lean on keywords more.
    for blend in (fusion.SHORT, fusion.LONG):
        assert blend.dense + blend.keywords + blend.keywords_whole == pytest.approx(1.0)
    assert fusion.LONG.dense < fusion.SHORT.dense


def test_rrf_prefers_agreement() -> None:
    out = fusion.rrf([np.array([0, 1, 2]), np.array([1, 0, 2])], 3)
    assert out[2] < out[0] == pytest.approx(out[1])


@pytest.mark.parametrize(
    ("query", "n_parts"),
    [
        ("Show me the stock price of Apple and also find news about the company", 2),
        ("I want salt and pepper", 0),
        ("Book a flight to Rome. Then find a hotel near the Colosseum.", 2),
        ("What is the weather like today?", 0),
        ('Find the links in "see https://a.com/docs and http://b.org"', 0),
        ("extract the links from: see https://example.org/docs and http://test.com", 0),
        ("list the addresses: sue@web.net and tom@mail.com", 0),
        ("email bob@x.com and then convert 3 km to miles", 2),
        ("Count the words in “one and two” and extract the emails from “x@y.com”", 2),
        ("What is 2 to the power of 10, and what's 5 litres in gallons?", 2),
        ('"Book a flight to Rome. Then find a hotel near the Colosseum."', 2),
        ('any links in this message? "slides: a.org/deck, recording at https://b.net/v"', 0),
        ('Convert 5 km to miles and translate "hello world"', 2),
    ],
)
def test_decompose(query: str, n_parts: int) -> None:
    assert len(fusion.decompose(query)) == n_parts


_PIECES = ["book", "flight", "rome", " ", ".", "; ", "? ", ",", " and ", " then ", " plus "]


@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_without_quotes_a_request_splits_at_every_joint(query: str) -> None:
    expected = [p.strip() for p in fusion._JOINT.split(query) if p and p.strip()]
    expected = [
        p
        for p in expected
        if sum(w not in fusion._FILLER for w in re.findall(r"[a-z]+|\d+(?:\.\d+)?", p)) >= 2
    ]
    assert fusion.decompose(query) == (expected if len(expected) >= 2 else [])


def test_combine_parts_lets_each_intent_lift_its_document() -> None:
    full = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    parts = [np.array([0.0, 2.0, 0.0], np.float32), np.array([0.0, 0.0, 3.0], np.float32)]
    np.testing.assert_allclose(fusion.combine_parts(full, parts), [0.5, 1.0, 1.5])
    assert fusion.combine_parts(full, []) is full


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('What dates are in "We met on 3 March"?', 'What dates are in "text"?'),
        ("Count “a b” and 'c'", "Count “text” and 'c'"),
        ('"a request quoted whole"', '"a request quoted whole"'),
        ('"one" "two"', '"one" "two"'),  # nothing but quotes: kept
        ("no quotes", "no quotes"),
        (
            'Take the first element of {"xs": [9, 8, 7]} using xs[0]',
            "Take the first element of JSON using xs[0]",
        ),
        ('Count "a {"b": 1} c" now', 'Count "text" now'),  # an object inside a quote
        ('{"a": 1}', '{"a": 1}'),  # nothing but its data: kept
        ("sum [2, 3, 5] and {}", "sum [2, 3, 5] and {}"),  # a list or an empty object: kept
    ],
)
def test_without_data_names_what_the_request_works_on_by_kind(query: str, expected: str) -> None:
    assert fusion.without_data(query) == expected


@given(st.text(alphabet='{}[]"ab :,1', max_size=80))
def test_any_request_reads_to_a_view_without_raising(query: str) -> None:
    assert isinstance(fusion.without_data(query), str)
