"""Remembered requests in the store (SQLite in memory or in a file, PostgreSQL): one row
per subject, tool and request, cached vectors, and forgetting by plugin, tool or age."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy.engine import URL

from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.learning import Learning, LearningSettings
from plugyard.discovery.remembered import (
    Remembered,
    RememberedRepository,
    SqlRememberedRepository,
)
from plugyard.store import testing
from plugyard.store.store import Store


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[RememberedRepository]:
    if request.param == "memory":
        target = ":memory:"
    elif request.param == "sqlite":
        target = str(tmp_path / "r.db")
    else:
        database: URL = request.getfixturevalue("postgres_database")
        testing.reset_database(database)
        target = database.render_as_string(hide_password=False)
    with Store.open(target) as store:
        yield SqlRememberedRepository(store, 3)


def row(subject: str, doc_id: str, query: str, at: float = 100.0) -> Remembered:
    plugin = doc_id.split("/")[0]
    return Remembered(0, plugin, doc_id, subject, query, at, "m:3", np.ones(3, np.float32))


def test_a_request_is_remembered_once_per_subject_and_tool(repo: RememberedRepository) -> None:
    first = repo.add(row("ana", "p/op", "Snow in the  Alps"))
    assert first is not None and first.id > 0
    assert repo.add(row("ana", "p/op", "snow in the alps")) is None  # same request
    assert repo.add(row("bob", "p/op", "snow in the alps")) is not None
    assert repo.add(row("ana", "p/other", "snow in the alps")) is not None
    assert repo.count("ana", "p/op") == 1
    got = repo.rows(doc_id="p/op")
    assert [(r.subject, r.query) for r in got] == [("ana", "Snow in the  Alps"),
                                                   ("bob", "snow in the alps")]  # fmt: skip
    assert got[0].vector is not None and got[0].vector.tolist() == [1.0, 1.0, 1.0]


def test_rows_go_by_subject_request_plugin_tool_and_age(repo: RememberedRepository) -> None:
    repo.add(row("ana", "p/op", "a", at=10.0))
    repo.add(row("ana", "p/op", "b", at=20.0))
    repo.add(row("bob", "p", "c", at=30.0))
    repo.add(row("bob", "q/op", "d", at=40.0))
    assert len(repo.remove("ana", "p/op", "A")) == 1
    assert repo.remove("ana", "p/op", "A") == []
    assert len(repo.created_before(35.0)) == 2
    assert len(repo.delete_plugin("p", "p")) == 1
    assert [r.query for r in repo.rows(plugin_id="p")] == ["b"]
    assert len(repo.delete_plugin("p")) == 1
    assert [r.query for r in repo.rows()] == ["d"]
    (only,) = repo.rows()
    repo.save_vectors("n:3", [(only.id, np.zeros(3, np.float32))])
    (again,) = repo.rows()
    assert again.embedder == "n:3" and again.vector is not None and not again.vector.any()


def test_a_follower_lists_a_tools_ids_and_reads_only_the_rows_it_lacks(
    repo: RememberedRepository,
) -> None:
    made = [repo.add(row("ana", tool, q)) for tool, q in (("p/op", "a"), ("p", "b"), ("q", "c"))]
    first, second, third = (m.id for m in made if m is not None)
    assert repo.ids() == {first, second, third}
    assert repo.ids(["p/op", "q"]) == {first, third}
    assert repo.ids([]) == set()
    read = repo.by_ids([third, first, 999])
    assert [(r.id, r.query) for r in read] == [(first, "a"), (third, "c")]
    assert read[0].vector is not None and read[0].embedder == "m:3"


def test_more_ids_and_tools_than_one_in_list_holds_are_all_read(
    repo: RememberedRepository,
) -> None:
    made = [repo.add(row("ana", f"p/op{i}", "a")) for i in range(1200)]
    ids = [m.id for m in made if m is not None]
    assert repo.ids(f"p/op{i}" for i in range(1200)) == set(ids)
    assert [r.id for r in repo.by_ids(reversed(ids))] == sorted(ids)
    repo.delete(ids[1:])
    assert repo.ids() == {ids[0]}


def test_retention_keeps_the_newest_per_tool_and_forgets_old_ones() -> None:
    now = [1_000_000.0]
    rows = SqlRememberedRepository(Store.open(":memory:"), 32)
    learning = Learning(
        HashingEmbedder(dim=32),
        rows,
        LearningSettings(keep=3, days=1.0, quorum=1),
        clock=lambda: now[0],
    )
    for i in range(5):
        sid = learning.note_search("ana", f"request {i}")
        assert learning.feedback(sid, "ana", "p", "op", True).recorded
    assert [r.query for r in rows.rows()] == ["request 2", "request 3", "request 4"]
    now[0] += 2 * 86_400
    sid = learning.note_search("bob", "fresh one")
    learning.feedback(sid, "bob", "p", "op", True)
    assert [r.query for r in rows.rows()] == ["fresh one"]
    assert learning.channel.count("p/op") == 1
