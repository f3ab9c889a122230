"""Vectors kept in the store (SQLite in memory or in a file, PostgreSQL), by embedder
identity."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select
from sqlalchemy.engine import URL

from plugyard.discovery.vector_store import (
    SqlVectorRepository,
    StoredVector,
    VectorRepository,
    from_bytes,
    to_bytes,
)
from plugyard.store import testing
from plugyard.store.rawdb import raw_db
from plugyard.store.schema import vectors as table
from plugyard.store.store import Store


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorRepository]:
    if request.param == "memory":
        target = ":memory:"
    elif request.param == "sqlite":
        target = str(tmp_path / "v.db")
    else:
        database: URL = request.getfixturevalue("postgres_database")
        testing.reset_database(database)
        target = database.render_as_string(hide_password=False)
    with Store.open(target) as store:
        yield SqlVectorRepository(store)


def vec(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


def test_vectors_come_back_only_for_their_embedder(repo: VectorRepository) -> None:
    repo.save("model-a:3", [StoredVector("p", "p", "h1", vec(1, 0, 0))])
    repo.save("model-b:3", [StoredVector("q", "q", "h2", vec(0, 1, 0))])
    loaded = repo.load("model-a:3")
    assert list(loaded) == ["p"]
    assert loaded["p"][0] == "h1"
    np.testing.assert_array_equal(loaded["p"][1], vec(1, 0, 0))
    assert repo.load("model-c:3") == {}
    assert repo.doc_ids() == {"p", "q"}


def test_saving_again_overwrites_by_doc_id(repo: VectorRepository) -> None:
    repo.save("a:2", [StoredVector("p/op", "p", "old", vec(1, 0))])
    repo.save("b:3", [StoredVector("p/op", "p", "new", vec(0, 0, 1))])
    assert repo.load("a:2") == {}
    assert repo.load("b:3")["p/op"][0] == "new"


def test_delete_removes_only_the_named_rows(repo: VectorRepository) -> None:
    rows = [StoredVector(f"d{i}", "p", "h", vec(i, 1)) for i in range(1200)]
    repo.save("e:2", rows)
    repo.delete([f"d{i}" for i in range(1, 1200)] + ["missing"])
    assert repo.doc_ids() == {"d0"}


def test_a_row_of_the_wrong_width_is_not_trusted(tmp_path: Path) -> None:
    with Store.open(tmp_path / "v.db") as store:
        sql = SqlVectorRepository(store)
        sql.save("e:2", [StoredVector("p", "p", "h", vec(1, 0))])
        with raw_db(store).write() as tx:
            tx.execute("UPDATE vectors SET vector = :v", {"v": b"\x00\x01"})
        assert sql.load("e:2") == {}


def test_a_save_is_stamped_with_the_stores_clock_as_the_schema_reads_it(
    database_url: str,
) -> None:
    at = datetime(2026, 11, 27, 10, 30, 15, 123456, tzinfo=UTC)
    with Store.open(database_url, clock=lambda: at) as store:
        SqlVectorRepository(store).save("e:2", [StoredVector("p", "p", "h", vec(1, 0))])
        with store.reading() as conn:
            assert conn.execute(select(table.c.updated_at)).scalar_one() == at


def test_bytes_are_little_endian_float32() -> None:
    v = vec(0.5, -2.0, 3.25)
    assert to_bytes(v) == np.asarray(v, dtype="<f4").tobytes()
    back = from_bytes(to_bytes(v), 3)
    assert back is not None and back.dtype == np.float32 and back.flags.writeable
    np.testing.assert_array_equal(back, v)
    assert from_bytes(b"\x00" * 8, 3) is None
