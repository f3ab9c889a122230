"""Where the store lives: a database URL, a file path, or the embedded default.

``PLUGYARD_DATABASE_URL`` may hold either a SQLAlchemy URL or a plain file path. Plain
``postgresql://`` URLs are pointed at psycopg 3, the one PostgreSQL driver plugyard ships.
The default is ``plugyard.db`` in the data folder (:mod:`plugyard.store.home`).
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from plugyard.errors import StoreError
from plugyard.store.home import default_store, legacy_notice

# SQLAlchemy is imported only for a URL: a store in a plain SQLite file is found without
# it (:func:`sqlite_file`), which keeps a command's start short.
if TYPE_CHECKING:
    from sqlalchemy.engine import URL

DATABASE_URL_ENV = "PLUGYARD_DATABASE_URL"
BACKENDS = ("sqlite", "postgresql")
log = logging.getLogger("plugyard.store")

_POSTGRES_ALIASES = {"postgres", "postgresql"}


def resolve(target: str | os.PathLike[str] | None = None) -> URL:
    """The URL of ``target``: a URL, a path to a SQLite file, or ``None`` for the default.

    A file path's folder is created, so a fresh checkout needs no set-up step.
    """
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if target is None:
        return _default(os.environ)
    if isinstance(target, os.PathLike) or "://" not in target:
        text = os.fspath(target)
        return _memory() if text == ":memory:" else _sqlite_file(Path(text))
    try:
        url = make_url(target)
    except ArgumentError as exc:
        raise StoreError(f"not a database URL: {exc}") from None
    if url.drivername in _POSTGRES_ALIASES:
        url = url.set(drivername="postgresql+psycopg")
    backend = url.get_backend_name()
    if backend not in BACKENDS:
        raise StoreError(f"unsupported database {backend!r}; use one of {', '.join(BACKENDS)}")
    if backend == "sqlite":
        if url.database in (None, "", ":memory:"):
            return _memory()
        return _sqlite_file(Path(url.database))
    return url


def from_environment(environ: Mapping[str, str] | None = None) -> URL:
    """The URL named by ``PLUGYARD_DATABASE_URL``, else the embedded default."""
    env = os.environ if environ is None else environ
    named = env.get(DATABASE_URL_ENV)
    return resolve(named) if named else _default(env)


def sqlite_file(
    target: str | os.PathLike[str] | None, environ: Mapping[str, str] | None = None
) -> str | None:
    """The SQLite file ``target`` names when it is a plain path, or none (the settings:
    ``PLUGYARD_DATABASE_URL``, else the default), its folder made as :func:`resolve`
    makes it; ``None`` for a URL or an in-memory database."""
    if target is None:
        env = os.environ if environ is None else environ
        named = env.get(DATABASE_URL_ENV)
        if not named:
            return _default_file(env)
        target = named
    text = os.fspath(target)
    if "://" in text or text == ":memory:":
        return None
    return _sqlite_path(Path(text))


def sqlite_display(file: str) -> str:
    """:func:`display` of a SQLite file's URL."""
    return f"sqlite:///{file}"


def display(url: URL) -> str:
    """The URL with its password hidden: safe for messages and logs."""
    return url.render_as_string(hide_password=True)


def sqlite_url(file: str) -> URL:
    from sqlalchemy.engine import URL

    return URL.create("sqlite", database=file)


def _sqlite_file(path: Path) -> URL:
    return sqlite_url(_sqlite_path(path))


def _sqlite_path(path: Path) -> str:
    file = path.expanduser()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of {file}: {exc.strerror}") from None
    return str(file.resolve())


def _default(environ: Mapping[str, str]) -> URL:
    return sqlite_url(_default_file(environ))


def _default_file(environ: Mapping[str, str]) -> str:
    store = default_store(environ)
    _tell_once(legacy_notice(store))
    # The user's own folder: the store and its key files are nobody else's to read.
    with contextlib.suppress(OSError):  # _sqlite_path reports a folder it cannot make
        store.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    return _sqlite_path(store)


@cache
def _tell_once(notice: str | None) -> None:
    # Without logging set up, Python prints a warning's bare message on stderr.
    if notice is not None:
        log.warning(notice)


def _memory() -> URL:
    return sqlite_url(":memory:")
