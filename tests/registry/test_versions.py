"""Version order: PEP 440 where both versions are PEP 440, a documented fallback elsewhere."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import InvalidVersion, Version

from plugyard.registry.versions import compare_versions

pep440 = st.builds(
    lambda parts, pre: ".".join(map(str, parts)) + pre,
    st.lists(st.integers(0, 30), min_size=1, max_size=4),
    st.sampled_from(["", "a1", "b2", "rc1", ".post1", ".dev3"]),
)
anything = st.none() | st.text(max_size=16) | pep440


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("1.0.0", "1.0.1"),
        ("1.9", "1.10"),
        ("2.0rc1", "2.0"),
        ("1.0", "1.0.post1"),
        ("v1.2", "1.3"),
        (None, "0.0.1"),
        ("r9", "r10"),
        ("2024-05-a", "2024-05-b"),
        ("1.0-beta", "1.0-final.1"),
        ("build-7", "build-7.1"),
        ("release-x", "release-1"),
    ],
)
def test_older_compares_below_newer(older: str | None, newer: str) -> None:
    assert compare_versions(older, newer) == -1
    assert compare_versions(newer, older) == 1


@pytest.mark.parametrize(
    ("a", "b"), [("1.0", "1.0.0"), ("V2", "2"), ("r-10", "R.10"), ("x.1.0", "x.1"), (None, None)]
)
def test_spellings_of_one_version_are_equal(a: str | None, b: str | None) -> None:
    assert compare_versions(a, b) == 0


@given(pep440, pep440)
def test_pep_440_versions_follow_packaging(a: str, b: str) -> None:
    expected = (Version(a) > Version(b)) - (Version(a) < Version(b))
    assert compare_versions(a, b) == expected


@given(anything, anything)
def test_the_order_is_antisymmetric(a: str | None, b: str | None) -> None:
    assert compare_versions(a, b) == -compare_versions(b, a)


@given(anything)
def test_every_version_equals_itself(a: str | None) -> None:
    assert compare_versions(a, a) == 0


def not_pep440(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return True
    return False


loose = st.text(alphabet="0123456789abcXYZ.-_", max_size=10).filter(not_pep440)


@given(loose, loose, loose)
def test_the_fallback_order_is_transitive(a: str, b: str, c: str) -> None:
    ab, bc, ac = (compare_versions(x, y) for x, y in [(a, b), (b, c), (a, c)])
    if ab <= 0 and bc <= 0:
        assert ac <= 0
