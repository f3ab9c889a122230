"""The store: one database (an embedded SQLite file by default, or PostgreSQL), migrated to
the installed schema when it opens, with all-or-nothing transactions."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from types import TracebackType
from typing import TYPE_CHECKING

from plugyard.errors import StoreError
from plugyard.store import migrate, timing, urls
from plugyard.store.plugins import Clock, utc_now
from plugyard.store.plugins_sql import SqlPluginRepository

# SQLAlchemy is imported with the engine, which a store in a SQLite file makes on first
# use: a command that only reads (``plugins list``) runs on the driver's connection
# (store/rawdb.py) and never pays for the import.
if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.engine import URL, Connection
    from sqlalchemy.exc import SQLAlchemyError


class Store:
    """A database and the repositories over it.

    Open with :meth:`open` (a URL, a SQLite path, or ``None`` for the settings) or
    :meth:`from_settings`. Errors of the database surface as :class:`StoreError`.
    ``sqlite_file`` is the SQLite file of a store opened by its path; its engine is
    made on first use.
    """

    def __init__(
        self,
        engine: Engine | None = None,
        *,
        clock: Clock = utc_now,
        sqlite_file: str | None = None,
    ) -> None:
        if engine is None and sqlite_file is None:
            raise TypeError("a Store needs an engine or a SQLite file")
        if engine is not None:
            self.engine = engine
        self.sqlite_file = sqlite_file
        self.clock = clock

    @cached_property
    def engine(self) -> Engine:
        from plugyard.store.engine import make_engine

        assert self.sqlite_file is not None  # an engine given is already cached
        return make_engine(urls.sqlite_url(self.sqlite_file))

    @classmethod
    def open(
        cls,
        target: str | os.PathLike[str] | None = None,
        *,
        migrate: bool = True,
        clock: Clock = utc_now,
    ) -> Store:
        """Open (creating if need be) the store at ``target`` and bring its schema to head.

        ``target`` is a SQLAlchemy URL, a SQLite file path, or ``None`` for
        ``PLUGYARD_DATABASE_URL`` (falling back to ``./.plugyard/plugyard.db``).
        """
        file = urls.sqlite_file(target)
        if file is not None:
            return cls._of_file(file, migrate=migrate, clock=clock)
        url = urls.from_environment() if target is None else urls.resolve(target)
        return cls.at(url, migrate=migrate, clock=clock)

    @classmethod
    def from_settings(
        cls, environ: Mapping[str, str] | None = None, *, clock: Clock = utc_now
    ) -> Store:
        return cls.at(urls.from_environment(environ), clock=clock)

    @classmethod
    def _of_file(cls, file: str, *, migrate: bool, clock: Clock) -> Store:
        store = cls(clock=clock, sqlite_file=file)
        if migrate and not store._at_head():
            try:
                store.migrate()
            except BaseException:
                store.close()
                raise
        return store

    def _at_head(self) -> bool:
        """Whether the schema is at this plugyard's head, read on the driver's connection
        (a new or older database is migrated through the engine, as any other)."""
        from plugyard.store.rawdb import raw_db

        try:
            with raw_db(self).read() as tx:
                found = tx.one("SELECT version_num FROM alembic_version")
        except StoreError:  # no such table yet, or a database the engine will report on
            return False
        return found is not None and found[0] == migrate.head()

    @classmethod
    def at(cls, url: URL, *, migrate: bool = True, clock: Clock = utc_now) -> Store:
        from sqlalchemy.exc import SQLAlchemyError

        from plugyard.store.engine import make_engine

        try:
            engine = make_engine(url)
        except (SQLAlchemyError, ImportError) as exc:
            raise StoreError(f"cannot use {urls.display(url)}: {exc}") from None
        store = cls(engine, clock=clock)
        if migrate and _in_memory(url):
            _copy_empty_store(engine)
        elif migrate:
            try:
                store.migrate()
            except BaseException:
                engine.dispose()
                raise
        return store

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        if self.sqlite_file is not None:
            return urls.sqlite_display(self.sqlite_file)
        return urls.display(self.engine.url)

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return "sqlite" if self.sqlite_file is not None else self.engine.url.get_backend_name()

    @cached_property
    def plugins(self) -> SqlPluginRepository:
        return SqlPluginRepository(self)

    # transactions -------------------------------------------------------------------

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """A connection for reads, in one consistent snapshot."""
        from sqlalchemy.exc import SQLAlchemyError

        totals, asked = timing.TOTALS, time.perf_counter()
        got: float | None = None
        try:
            with self.engine.connect() as connection, connection.begin():
                got = time.perf_counter()
                yield connection
        except SQLAlchemyError as exc:
            raise self._failure("read", exc) from exc
        finally:
            if totals is not None:
                _account(totals, asked, got)

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """One transaction: committed when the block ends, rolled back if it raises."""
        from sqlalchemy.exc import SQLAlchemyError

        from plugyard.store.engine import WRITE_OPTION

        totals, asked = timing.TOTALS, time.perf_counter()
        got: float | None = None
        try:
            with self.engine.connect() as connection:
                got = time.perf_counter()
                connection = connection.execution_options(**{WRITE_OPTION: True})
                with connection.begin():
                    yield connection
        except SQLAlchemyError as exc:
            raise self._failure("write", exc) from exc
        finally:
            if totals is not None:
                _account(totals, asked, got)

    # schema -------------------------------------------------------------------------

    def migrate(self, revision: str = "head") -> None:
        """Apply pending migrations in one transaction (a no-op when up to date)."""
        with self.writing() as connection:
            migrate.upgrade(connection, revision)

    def revision(self) -> str | None:
        with self.reading() as connection:
            return migrate.current(connection)

    # lifetime -----------------------------------------------------------------------

    def close(self) -> None:
        from plugyard.store.rawdb import close_raw_db  # rawdb names Store in its types

        close_raw_db(self)
        if "engine" in self.__dict__:  # made, or given
            self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url!r})"

    def _failure(self, what: str, exc: SQLAlchemyError) -> StoreError:
        # The driver's text names the cause; the statement and parameters stay out. One
        # code whichever path met the fault (this engine or the raw driver connection):
        # the pool pre-pings and reconnects on the next request once a server is back.
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        return StoreError(f"store {what} failed on {self.url}: {cause}")


def _in_memory(url: URL) -> bool:
    return url.get_backend_name() == "sqlite" and url.database in (None, "", ":memory:")


#: An empty in-memory store at head, migrated once per process. A new in-memory store
#: (a yard or a repository with no database) starts as a copy of it — SQLite's backup,
#: about a millisecond — instead of running every migration again (tenths of a second).
_EMPTY: list[Engine] = []
_EMPTY_LOCK = threading.Lock()


def _copy_empty_store(engine: Engine) -> None:
    from sqlalchemy.exc import SQLAlchemyError

    with _EMPTY_LOCK:
        if not _EMPTY:
            template = Store(_new_memory_engine())
            template.migrate()
            _EMPTY.append(template.engine)
        try:
            with _EMPTY[0].connect() as source, engine.connect() as target:
                source.connection.driver_connection.backup(target.connection.driver_connection)  # type: ignore[union-attr]
        except SQLAlchemyError as exc:
            raise StoreError(f"cannot make an in-memory store: {exc}") from exc


def _new_memory_engine() -> Engine:
    from sqlalchemy.engine import make_url

    from plugyard.store.engine import make_engine

    return make_engine(make_url("sqlite://"))


def _account(totals: timing.Totals, asked: float, got: float | None) -> None:
    """A transaction's wait for a connection and its time holding one (bench only)."""
    end = time.perf_counter()
    start = asked if got is None else got
    totals.add(start - asked, end - start)
