"""Read-only SQLite queries inside one configured folder (HomeClaw style).

Four locks keep it read-only, any one of which suffices: the statement must start with
an allowed keyword; the file is opened with ``mode=ro``; ``PRAGMA query_only`` is on;
and an authorizer refuses every action but reading (no ``ATTACH``, no writes, no
``PRAGMA`` outside a short list). The path is resolved — symbolic links included — and
must stay inside the folder. A progress handler stops a statement at its time limit.
"""

from __future__ import annotations

import base64
import math
import os
import re
import sqlite3
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from typing_extensions import TypedDict  # pydantic reads it on Python 3.11

ROOT_ENV = "PLUGYARD_SQLITE_ROOT"
DEFAULT_ROOT = Path.home() / ".local" / "share" / "plugyard" / "sqlite"
DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3", ".db3")
ALLOWED_STATEMENTS = frozenset({"select", "with", "values", "explain", "pragma"})
READ_PRAGMAS = frozenset(
    {"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
     "foreign_key_list", "collation_list", "function_list"}
)  # fmt: skip
_ALLOWED_ACTIONS = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION,
     getattr(sqlite3, "SQLITE_RECURSIVE", 33)}
)  # fmt: skip
_COMMENTS = re.compile(r"(--[^\n]*|/\*.*?\*/)", re.S)


class InvalidInput(ValueError):
    code = "invalid_parameters"


class PermissionRefused(PermissionError):
    code = "permission_denied"


class QueryTimeout(TimeoutError):
    code = "timeout"


class QueryResult(TypedDict):
    columns: list[str]
    rows: list[list[Any]]
    row_count: int
    truncated: bool


class Column(TypedDict):
    name: str
    type: str
    primary_key: bool


class Table(TypedDict):
    name: str
    kind: str
    columns: list[Column]


class TableList(TypedDict):
    database: str
    tables: list[Table]


class DatabaseFile(TypedDict):
    path: str
    bytes: int


class DatabaseList(TypedDict):
    root: str
    databases: list[DatabaseFile]


def query(
    database: str,
    sql: str,
    parameters: list[Any] | dict[str, Any] | None = None,
    max_rows: int = 100,
    config: dict[str, Any] | None = None,
) -> QueryResult:
    settings = config or {}
    _check_statement(sql)
    cap = min(max(1, max_rows), int(settings.get("max_rows", 1000)))
    with _connect(_database(database, settings), settings) as connection:
        try:
            cursor = connection.execute(sql, parameters if parameters is not None else ())
            rows = cursor.fetchmany(cap + 1)
        except sqlite3.DatabaseError as exc:
            raise _failure(exc) from None
        columns = [c[0] for c in cursor.description or ()]
    return {
        "columns": columns,
        "rows": [[_value(v) for v in row] for row in rows[:cap]],
        "row_count": min(len(rows), cap),
        "truncated": len(rows) > cap,
    }


def list_tables(database: str, config: dict[str, Any] | None = None) -> TableList:
    settings = config or {}
    tables: list[Table] = []
    with _connect(_database(database, settings), settings) as connection:
        listed = connection.execute(
            "SELECT name, type FROM sqlite_schema WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ).fetchall()
        for name, kind in listed:
            quoted = '"' + name.replace('"', '""') + '"'
            info = connection.execute(f"PRAGMA table_info({quoted})").fetchall()
            columns: list[Column] = [
                {"name": c[1], "type": c[2] or "", "primary_key": bool(c[5])} for c in info
            ]
            tables.append({"name": name, "kind": kind, "columns": columns})
    return {"database": database, "tables": tables}


def list_databases(config: dict[str, Any] | None = None) -> DatabaseList:
    root = _root(config or {})
    found: list[DatabaseFile] = []
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            if path.suffix.lower() in DATABASE_SUFFIXES and _safe_file(root, path):
                found.append(
                    {"path": path.relative_to(root).as_posix(), "bytes": path.stat().st_size}
                )
    return {"root": str(root), "databases": found}


# ------------------------------------------------------------------------------ safety


def _root(settings: dict[str, Any]) -> Path:
    configured = os.environ.get(ROOT_ENV) or settings.get("root")
    return Path(configured).expanduser().resolve() if configured else DEFAULT_ROOT.resolve()


def _safe_file(root: Path, path: Path) -> bool:
    resolved = path.resolve()
    return resolved.is_relative_to(root) and resolved.is_file()


def _database(name: str, settings: dict[str, Any]) -> Path:
    root = _root(settings)
    if not name or "\x00" in name:
        raise InvalidInput("name a database file")
    path = (root / name).resolve()
    if not path.is_relative_to(root):
        raise PermissionRefused(f"{name!r} is outside the configured folder")
    if not path.is_file():
        raise InvalidInput(f"no database {name!r} in the configured folder")
    return path


def _check_statement(sql: str) -> None:
    text = _COMMENTS.sub(" ", sql).strip()
    first = re.match(r"[A-Za-z]+", text)
    keyword = first.group().lower() if first else ""
    if keyword not in ALLOWED_STATEMENTS:
        raise PermissionRefused(
            f"only read-only statements run here ({', '.join(sorted(ALLOWED_STATEMENTS))})"
        )
    if keyword == "pragma":
        name = re.match(r"pragma\s+(?:\w+\.)?(\w+)", text, re.I)
        if name is None or name.group(1).lower() not in READ_PRAGMAS or "=" in text:
            raise PermissionRefused("only schema-reading PRAGMAs run here")


class _connect:
    """A read-only connection with an authorizer and a deadline; closed on exit."""

    def __init__(self, path: Path, settings: dict[str, Any]) -> None:
        timeout = float(settings.get("timeout_s", 5))
        self.connection = sqlite3.connect(
            f"file:{quote(str(path))}?mode=ro", uri=True, timeout=timeout, check_same_thread=False
        )
        self.connection.execute("PRAGMA query_only = ON")
        self.connection.set_authorizer(_authorize)
        deadline = time.monotonic() + timeout
        self.connection.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)

    def __enter__(self) -> sqlite3.Connection:
        return self.connection

    def __exit__(self, *exc: object) -> None:
        self.connection.close()


def _authorize(action: int, first: str | None, second: str | None, *_: object) -> int:
    if action in _ALLOWED_ACTIONS:
        return sqlite3.SQLITE_OK
    # every pragma listed only reads, whatever its argument
    if action == sqlite3.SQLITE_PRAGMA and (first or "").lower() in READ_PRAGMAS:
        return sqlite3.SQLITE_OK
    return sqlite3.SQLITE_DENY


def _failure(exc: sqlite3.DatabaseError) -> Exception:
    message = str(exc)
    if "not authorized" in message:
        return PermissionRefused("the statement does more than read; only reading is allowed")
    if "interrupted" in message:
        return QueryTimeout("the statement ran past its time limit")
    return InvalidInput(f"the statement failed: {message}")


def _value(value: Any) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value
