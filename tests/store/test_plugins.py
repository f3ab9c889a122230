"""The plugin repository's contract, proved on memory, SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.engine import URL

from plugyard.store import testing
from plugyard.store.plugins import PluginRepository, PluginRow
from plugyard.store.store import Store

from .conftest import BACKENDS, backend_url
from .rows import EPOCH, Clock, row


class Refused(Exception):
    pass


@pytest.fixture(params=["sqlite in memory", *BACKENDS])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PluginRepository]:
    clock = Clock()
    memory = request.param == "sqlite in memory"  # how a Registry() given no store keeps rows
    for url in [":memory:"] if memory else backend_url(request, request.param, tmp_path):
        with Store.open(url, clock=clock) as store:
            yield store.plugins


def test_an_upserted_row_reads_back_with_utc_timestamps(repo: PluginRepository) -> None:
    written = repo.upsert(row("weather"))
    assert written.written and written.previous is None
    got = repo.get("weather")
    assert got is not None
    assert got.same_entry(row("weather"))
    assert got.registered_at == got.updated_at
    assert got.registered_at is not None and got.registered_at.utcoffset() is not None
    assert got == written.row


def test_an_update_keeps_the_registration_time(repo: PluginRepository) -> None:
    first = repo.upsert(row("weather")).row
    second = repo.upsert(row("weather", version="2.0.0")).row
    assert first is not None and second is not None
    assert second.registered_at == first.registered_at
    assert second.updated_at is not None and first.updated_at is not None
    assert second.updated_at > first.updated_at
    stored = repo.get("weather")
    assert stored is not None and stored.version == "2.0.0"


def test_the_list_is_ordered_by_id_and_filters(repo: PluginRepository) -> None:
    repo.upsert_many(
        [row("b"), row("a", family="kb"), row("c", source="external"), row("d", family="kb")]
    )
    assert [r.id for r in repo.list()] == ["a", "b", "c", "d"]
    assert [r.id for r in repo.list(family="kb")] == ["a", "d"]
    assert [r.id for r in repo.list(source="external")] == ["c"]
    assert [r.id for r in repo.list(family="kb", source="external")] == []


def test_the_check_sees_the_stored_row_and_may_decline(repo: PluginRepository) -> None:
    repo.upsert(row("x", version="1"))
    seen: list[PluginRow | None] = []

    def decline(current: PluginRow | None, incoming: PluginRow) -> bool:
        assert incoming.version == "2"
        seen.append(current)
        return False

    result = repo.upsert(row("x", version="2"), check=decline)
    assert not result.written
    assert [s.version if s else None for s in seen] == ["1"]
    stored = repo.get("x")
    assert stored is not None and stored.version == "1"
    assert result.row == stored


def test_a_refused_row_rolls_back_the_whole_batch(repo: PluginRepository) -> None:
    repo.upsert(row("old", version="1"))

    def refuse_second(current: PluginRow | None, incoming: PluginRow) -> bool:
        if current is not None:
            raise Refused
        return True

    with pytest.raises(Refused):
        repo.upsert_many([row("new"), row("old", version="2")], check=refuse_second)
    assert [(r.id, r.version) for r in repo.list()] == [("old", "1")]


def test_delete_returns_the_removed_row(repo: PluginRepository) -> None:
    repo.upsert(row("gone"))
    removed = repo.delete("gone")
    assert removed is not None and removed.id == "gone"
    assert repo.get("gone") is None
    assert repo.delete("gone") is None


def test_a_declined_delete_keeps_the_row(repo: PluginRepository) -> None:
    repo.upsert(row("kept"))
    assert repo.delete("kept", check=lambda current: False) is None
    assert repo.get("kept") is not None


def test_availability_changes_only_its_columns(repo: PluginRepository) -> None:
    repo.upsert(row("svc"))
    before = repo.get("svc")
    changed = repo.set_availability("svc", False, "health check failed 3 times")
    assert changed is not None and changed.written
    after = repo.get("svc")
    assert before is not None and after is not None
    assert (after.available, after.unavailable_reason) == (False, "health check failed 3 times")
    assert after.same_entry(
        replace(before, available=False, unavailable_reason=after.unavailable_reason)
    )
    assert after.registered_at == before.registered_at
    again = repo.set_availability("svc", False, "health check failed 3 times")
    assert again is not None and not again.written
    assert repo.set_availability("missing", True, None) is None


def test_rows_handed_out_are_copies(repo: PluginRepository) -> None:
    repo.upsert(row("copy"))
    got = repo.get("copy")
    assert got is not None
    got.descriptor["name"] = "changed"  # type: ignore[index]
    again = repo.get("copy")
    assert again is not None and again.descriptor["name"] == "Copy"


# PostgreSQL's JSONB holds neither U+0000 nor lone surrogates; manifests, being UTF-8
# text, never carry the latter, and the former is refused on that backend.
json_text = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12)
json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | json_text
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(json_text, inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(extra=st.dictionaries(json_text, json_value, max_size=4))
def test_descriptors_round_trip_as_json(repo: PluginRepository, extra: dict[str, Any]) -> None:
    descriptor = {"id": "json", "name": "Json", "x": extra}
    repo.upsert(row("json", descriptor=descriptor))
    got = repo.get("json")
    assert got is not None
    assert as_numbers(got.descriptor) == as_numbers(descriptor)


def as_numbers(data: Any) -> Any:
    """JSON data with every number as a Decimal: JSONB keeps a number's value, not whether
    Python held it as a float (``1e17`` may come back as the int ``100000000000000000``)."""
    return json.loads(json.dumps(data), parse_float=Decimal, parse_int=Decimal)


def test_timestamps_come_from_the_clock(repo: PluginRepository) -> None:
    stored = repo.upsert(row("t")).row
    assert stored is not None and stored.registered_at is not None
    assert stored.registered_at > EPOCH


def test_an_insert_racing_another_writer_is_judged_against_its_row(
    postgres_database: URL,
) -> None:
    # Only PostgreSQL lets a second writer in between: SQLite's write lock is taken up front.
    testing.reset_database(postgres_database)
    url = postgres_database.render_as_string(hide_password=False)
    with Store.open(url) as ours, Store.open(url) as theirs:
        seen: list[PluginRow | None] = []

        def check(current: PluginRow | None, incoming: PluginRow) -> bool:
            seen.append(current)
            if current is None:
                theirs.plugins.upsert(row("raced", source="external"))
                return True
            return current.source == "folder"

        result = ours.plugins.upsert(row("raced"), check=check)
        assert not result.written
        assert [s.source if s else None for s in seen] == [None, "external"]
        stored = ours.plugins.get("raced")
        assert stored is not None and stored.source == "external"
    testing.reset_database(postgres_database)
