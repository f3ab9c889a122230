"""Opening the store, its SQLite settings, and all-or-nothing transactions."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path

import pytest
from sqlalchemy import func, insert, make_url, select

from plugyard.errors import ERROR_CODES, StoreError
from plugyard.store import migrate, urls
from plugyard.store.rawdb import matching, raw_db
from plugyard.store.schema import plugins
from plugyard.store.store import Store
from plugyard.store.urls import DATABASE_URL_ENV

from .rows import at, row


def test_opening_migrates_to_the_installed_head(store: Store) -> None:
    assert store.revision() == migrate.head()


def test_reopening_keeps_the_rows(database_url: str) -> None:
    with Store.open(database_url) as first:
        first.plugins.upsert(row("kept"))
    with Store.open(database_url) as second:
        assert second.revision() == migrate.head()
        assert [r.id for r in second.plugins.list()] == ["kept"]


def test_a_store_opened_without_migrating_is_empty(database_url: str) -> None:
    with Store.open(database_url, migrate=False) as bare:
        assert bare.revision() is None


def test_replicas_opening_at_once_migrate_once(database_url: str) -> None:
    errors: list[BaseException] = []
    barrier = threading.Barrier(4)

    def open_one() -> None:
        try:
            barrier.wait()
            Store.open(database_url).close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Store.open(database_url) as store:
        assert store.revision() == migrate.head()


def test_a_failed_block_leaves_nothing_written(store: Store) -> None:
    def write_then_fail() -> None:
        with store.writing() as conn:
            conn.execute(insert(plugins).values(**row("half").values(), **at(0)))
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        write_then_fail()
    with store.reading() as conn:
        assert conn.execute(select(func.count()).select_from(plugins)).scalar() == 0


def test_a_database_fault_is_a_store_error_and_writes_nothing(store: Store) -> None:
    broken = row("broken", family=None)
    with pytest.raises(StoreError) as caught:
        store.plugins.upsert_many([row("fine"), broken])
    assert caught.value.code == "store_error"
    assert store.plugins.list() == ()


def test_an_unreachable_server_answers_one_code_on_every_path() -> None:
    # The engine (SQLAlchemy) and the raw driver connection meet the same outage.
    with pytest.raises(StoreError) as caught:
        Store.open("postgresql://postgres@127.0.0.1:1/none")
    assert caught.value.code == "store_error"
    down = Store.at(make_url("postgresql://postgres@127.0.0.1:1/none"), migrate=False)
    try:
        with pytest.raises(StoreError) as raw, raw_db(down).read() as tx:
            tx.one("SELECT 1")
    finally:
        down.close()
    assert raw.value.code == "store_error"
    assert "store_unavailable" not in ERROR_CODES


def test_the_sqlite_file_runs_in_wal_mode(tmp_path: Path) -> None:
    with Store.open(tmp_path / "yard.db") as store, store.reading() as conn:
        pragma = conn.exec_driver_sql
        assert pragma("PRAGMA journal_mode").scalar() == "wal"
        assert pragma("PRAGMA synchronous").scalar() == 1  # NORMAL
        assert pragma("PRAGMA foreign_keys").scalar() == 1
        assert pragma("PRAGMA busy_timeout").scalar() == 10_000


def test_the_default_store_is_one_file_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(DATABASE_URL_ENV, raising=False)
    monkeypatch.setenv("PLUGYARD_HOME", str(tmp_path / "home"))
    with Store.open() as store:
        store.plugins.upsert(row("one"))
        assert store.backend == "sqlite"
    assert (tmp_path / "home" / "plugyard.db").is_file()
    assert not (tmp_path / ".plugyard").exists()


def test_from_settings_reads_the_database_url(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.db"
    with Store.from_settings({DATABASE_URL_ENV: str(target)}) as store:
        assert store.url.endswith("elsewhere.db")
    assert target.is_file()


def test_an_in_memory_store_is_shared_by_its_connections() -> None:
    with Store.open(":memory:") as store:
        store.plugins.upsert(row("mem"))
        assert store.plugins.get("mem") is not None


def test_two_processes_worth_of_writers_do_not_lock_each_other_out(tmp_path: Path) -> None:
    path = tmp_path / "yard.db"
    Store.open(path).close()
    errors: list[BaseException] = []

    def write(prefix: str) -> None:
        try:
            with Store.open(path) as store:
                for n in range(20):
                    store.plugins.upsert(row(f"{prefix}-{n}"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(p,)) for p in "abc"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    with Store.open(path) as store:
        assert len(store.plugins.list()) == 60


def test_a_sqlite_file_at_head_opens_reads_and_writes_without_its_engine(tmp_path: Path) -> None:
    file = tmp_path / "lazy.db"
    with Store.open(file) as first:  # a new file: migrated through the engine
        assert first.revision() == migrate.head()
        first.plugins.upsert(row("kept"))
    with Store.open(file) as second:
        assert "engine" not in vars(second)
        assert second.backend == "sqlite"
        assert second.url == urls.display(urls.sqlite_url(str(file.resolve())))
        assert [r.id for r in second.plugins.list(timestamps=False)] == ["kept"]
        assert "engine" not in vars(second)
        second.plugins.upsert(row("added"))
        assert [r.id for r in second.plugins.list()] == ["added", "kept"]
        assert "engine" not in vars(second)
        assert second.revision() == migrate.head()  # what needs the engine makes it
        assert "engine" in vars(second)


def test_a_sqlite_file_behind_head_is_migrated_when_opened(tmp_path: Path) -> None:
    file = tmp_path / "old.db"
    with Store.open(file, migrate=False) as empty:
        empty.migrate("0011")
    with Store.open(file) as store:
        assert store.revision() == migrate.head()


def test_a_store_nobody_closed_is_freed_with_its_held_connection() -> None:
    kept = []
    for _ in range(5):
        store = Store.open(":memory:")
        raw_db(store)  # the held connection, as every repository makes it
        kept.append(weakref.ref(store))
        del store
    gc.collect()
    assert [ref() for ref in kept] == [None] * 5


def test_filters_left_none_match_any_row() -> None:
    assert matching(scope=None, owner=None) == ("", {})
    assert matching(scope="user", owner=None) == (" WHERE scope = :scope", {"scope": "user"})
    where, values = matching(a=1, b="x")
    assert where == " WHERE a = :a AND b = :b" and values == {"a": 1, "b": "x"}
