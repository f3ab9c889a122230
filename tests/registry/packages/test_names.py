"""Entry names, as properties: whatever a zip names, a name that is accepted stays inside
the target, and names one disk could confuse never both get in."""

from __future__ import annotations

import os
import posixpath

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from plugyard.errors import PackageError
from plugyard.registry.packages.names import NameSet, entry_parts, fold

ROOT = "/srv/packages/p/files"
SAFE_PART = st.text(
    alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd"), whitelist_characters="_-"),
    min_size=1,
    max_size=20,
)
ANY_NAME = st.lists(
    st.sampled_from([*"ab./\\:C \x00\x07é", "..", "e\u0301", "/../"]), max_size=15
).map("".join)


@given(ANY_NAME)
@example("../x")
@example("a/../../x")
@example("C:\\x")
@example("/x")
@example("a/b/")
def test_an_accepted_name_lands_inside_the_target(name: str) -> None:
    try:
        parts, _ = entry_parts(name)
    except PackageError as exc:
        refusal = (exc.code, exc.reason)
        assert refusal == ("package_invalid", "unsafe_path")
        return
    joined = posixpath.normpath(posixpath.join(ROOT, *parts))
    assert joined.startswith(ROOT + "/")
    assert all(p not in {"", ".", ".."} and "\\" not in p and ":" not in p for p in parts)


@given(st.lists(SAFE_PART, min_size=1, max_size=6), st.booleans())
def test_safe_names_round_trip(parts: list[str], is_dir: bool) -> None:
    name = "/".join(parts) + ("/" if is_dir else "")
    assert entry_parts(name) == (tuple(parts), is_dir)


@given(st.lists(SAFE_PART, min_size=1, max_size=4), st.integers(0, 3))
def test_a_traversal_anywhere_is_refused(parts: list[str], where: int) -> None:
    parts.insert(min(where, len(parts)), "..")
    with pytest.raises(PackageError):
        entry_parts("/".join(parts))


@given(st.sampled_from(["/", "C:", "c:/", "\\\\server\\share\\"]), SAFE_PART)
def test_absolute_drive_and_unc_names_are_refused(prefix: str, rest: str) -> None:
    with pytest.raises(PackageError):
        entry_parts(prefix + rest)


@given(st.lists(SAFE_PART, min_size=1, max_size=4))
def test_a_name_and_its_upper_case_collide(parts: list[str]) -> None:
    upper = [p.upper() for p in parts]
    names = NameSet()
    names.add(tuple(parts), False)
    if upper == parts:
        with pytest.raises(PackageError) as caught:
            names.add(tuple(upper), False)
        assert caught.value.reason == "duplicate_name"
    elif fold(upper) == fold(parts):
        with pytest.raises(PackageError) as caught:
            names.add(tuple(upper), False)
        assert caught.value.reason in {"case_collision", "duplicate_name"}


@given(st.lists(st.lists(SAFE_PART, min_size=1, max_size=3), min_size=1, max_size=12))
def test_accepted_names_are_distinct_on_a_case_insensitive_disk(names: list[list[str]]) -> None:
    seen = NameSet()
    accepted: list[tuple[str, ...]] = []
    for parts in names:
        try:
            seen.add(tuple(parts), False)
        except PackageError:
            continue
        accepted.append(tuple(parts))
    folded = [fold(p) for p in accepted]
    assert len(set(folded)) == len(folded)
    # No accepted file is also a folder of another accepted file.
    prefixes = {fold(p[:i]) for p in accepted for i in range(1, len(p))}
    assert not prefixes & set(folded)


def test_os_sep_is_slash_here() -> None:
    # The checks above reason in POSIX paths; the extractor joins with os.path.
    assert os.sep == "/"
