"""The plugins that read a configured folder: read-only SQLite and file search. Neither may
write, nor leave its folder by ``../``, an absolute path or a symbolic link."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from bundled_plugins import code, data


@pytest.fixture
def databases(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "databases"
    root.mkdir()
    with sqlite3.connect(root / "shop.db") as connection:
        connection.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
        connection.executemany(
            "INSERT INTO items (name, price) VALUES (?, ?)", [(f"item {i}", i) for i in range(50)]
        )
    connection.close()
    with sqlite3.connect(tmp_path / "outside.db") as other:
        other.execute("CREATE TABLE secrets (value TEXT)")
    other.close()
    os.symlink(tmp_path / "outside.db", root / "link.db")
    return {"root": str(root), "timeout_s": 2}


def test_sqlite_answers_a_select(databases: dict[str, Any]) -> None:
    answer = data(
        "sqlite-query", "query", config=databases, database="shop.db",
        sql="SELECT name, price FROM items WHERE price < ? ORDER BY id", parameters=[2],
    )  # fmt: skip
    assert answer == {
        "columns": ["name", "price"],
        "rows": [["item 0", 0.0], ["item 1", 1.0]],
        "row_count": 2,
        "truncated": False,
    }


def test_sqlite_caps_the_rows(databases: dict[str, Any]) -> None:
    answer = data(
        "sqlite-query", "query", config={**databases, "max_rows": 5}, database="shop.db",
        sql="SELECT * FROM items", max_rows=100,
    )  # fmt: skip
    assert (answer["row_count"], answer["truncated"]) == (5, True)


def test_sqlite_lists_tables_and_databases(databases: dict[str, Any]) -> None:
    tables = data("sqlite-query", "list_tables", config=databases, database="shop.db")
    assert tables["tables"][0]["name"] == "items"
    assert [c["name"] for c in tables["tables"][0]["columns"]] == ["id", "name", "price"]
    listed = data("sqlite-query", "list_databases", config=databases)
    assert [d["path"] for d in listed["databases"]] == ["shop.db"]  # not the link


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO items (name) VALUES ('x')",
        "DELETE FROM items",
        "UPDATE items SET price = 0",
        "DROP TABLE items",
        "CREATE TABLE t (x)",
        "WITH doomed AS (SELECT 1) DELETE FROM items",
        "/* a comment */ DELETE FROM items",
        "ATTACH DATABASE 'other.db' AS other",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA query_only(0)",
        "PRAGMA writable_schema",
        "SELECT * FROM pragma_database_list",
    ],
)
def test_sqlite_refuses_anything_but_reading(databases: dict[str, Any], sql: str) -> None:
    assert code("sqlite-query", "query", config=databases, database="shop.db", sql=sql) == (
        "permission_denied"
    )
    count = data(
        "sqlite-query", "query", config=databases, database="shop.db",
        sql="SELECT count(*) FROM items",
    )  # fmt: skip
    assert count["rows"] == [[50]]


@pytest.mark.parametrize("database", ["../outside.db", "link.db", "/etc/hostname"])
def test_sqlite_never_leaves_its_folder(databases: dict[str, Any], database: str) -> None:
    assert code("sqlite-query", "query", config=databases, database=database, sql="SELECT 1") == (
        "permission_denied"
    )


def test_sqlite_stops_a_runaway_query(databases: dict[str, Any]) -> None:
    runaway = (
        "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"
    )
    config = {**databases, "timeout_s": 0.2}
    assert code("sqlite-query", "query", config=config, database="shop.db", sql=runaway) == (
        "timeout"
    )


def test_sqlite_reads_its_folder_from_the_environment(
    databases: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLUGYARD_SQLITE_ROOT", databases["root"])
    assert data("sqlite-query", "list_databases")["root"] == databases["root"]


# ---------------------------------------------------------------------------- file search


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Any]:
    root = tmp_path / "files"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "todo.md").write_text("buy milk\nTODO: call Ada\n")
    (root / "readme.txt").write_text("Nothing to do here.\n")
    (root / "big.log").write_text("needle\n" * 50_000)
    (root / "image.bin").write_bytes(b"\x00\x01needle")
    (tmp_path / "secret.txt").write_text("needle: the password\n")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "more.md").write_text("needle\n")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    os.symlink(tmp_path / "elsewhere", root / "linked-folder")
    return {"root": str(root), "max_file_bytes": 100_000}


def test_files_are_found_by_pattern(files: dict[str, Any]) -> None:
    found = data("file-search", "search", config=files, pattern="*.md")
    assert [f["path"] for f in found["files"]] == ["notes/todo.md"]
    found = data("file-search", "search", config=files, pattern="notes/**")
    assert [f["path"] for f in found["files"]] == ["notes/todo.md"]


def test_files_are_found_by_content_with_lines(files: dict[str, Any]) -> None:
    found = data("file-search", "search", config=files, contains="todo")
    assert found["files"] == [
        {"path": "notes/todo.md", "bytes": 24, "matches": [{"line": 2, "text": "TODO: call Ada"}]}
    ]
    found = data("file-search", "search", config=files, contains=r"T[O]DO", regex=True,
                 case_sensitive=True)  # fmt: skip
    assert len(found["files"]) == 1


def test_search_never_follows_links_out_and_skips_large_and_binary_files(
    files: dict[str, Any],
) -> None:
    found = data("file-search", "search", config=files, contains="needle")
    assert found["files"] == []  # big.log too large, image.bin binary, links point outside
    assert found["skipped"] >= 2


def test_search_results_are_capped(files: dict[str, Any]) -> None:
    found = data("file-search", "search", config=files, max_results=1)
    assert len(found["files"]) == 1 and found["truncated"] is True


def test_a_file_is_read_by_lines(files: dict[str, Any]) -> None:
    lines = data("file-search", "read_file", config=files, path="notes/todo.md", start_line=2)
    assert (lines["lines"], lines["total_lines"], lines["more"]) == (["TODO: call Ada"], 2, False)


@pytest.mark.parametrize(
    "path",
    [
        "../secret.txt",
        "link.txt",
        "linked-folder/more.md",
        "/etc/hostname",
        "notes/../../secret.txt",
    ],
)
def test_reading_never_leaves_the_folder(files: dict[str, Any], path: str) -> None:
    assert code("file-search", "read_file", config=files, path=path) == "permission_denied"


def test_patterns_cannot_climb_out(files: dict[str, Any]) -> None:
    assert code("file-search", "search", config=files, pattern="../*") == "permission_denied"
    assert code("file-search", "list_folder", config=files, path="..") == "permission_denied"


def test_a_folder_is_listed_without_links_that_leave_it(files: dict[str, Any]) -> None:
    entries = data("file-search", "list_folder", config=files)["entries"]
    assert [e["name"] for e in entries] == ["big.log", "image.bin", "notes", "readme.txt"]
