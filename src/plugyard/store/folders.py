"""What the last start read from each plugin folder: its fingerprint and the plugins it
registered from it (id and content hash), so the next start skips the folders that did
not change (registry.memory)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from plugyard.store.rawdb import RawDb, json_document, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class FolderMark:
    fingerprint: str
    plugins: tuple[tuple[str, str], ...]  # (id, content hash) as registered


class FolderMarks(Protocol):
    def all(self) -> dict[str, FolderMark]:
        """Every remembered folder (by its manifest's path)."""
        ...

    def save(self, marks: Mapping[str, FolderMark], forget: Iterable[str]) -> None:
        """Remember ``marks`` and forget ``forget``, in one transaction."""
        ...


class SqlFolderMarks:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def all(self) -> dict[str, FolderMark]:
        with self._db.read() as tx:
            rows = tx.all("SELECT manifest, fingerprint, plugins FROM plugin_folders")
        marks = {}
        for manifest, fingerprint, plugins in rows:
            try:
                pairs = tuple((str(i), str(h)) for i, h in json_document(plugins))
            except (ValueError, TypeError):
                continue  # a cache: a row it cannot read only has its folder read again
            marks[str(manifest)] = FolderMark(str(fingerprint), pairs)
        return marks

    def save(self, marks: Mapping[str, FolderMark], forget: Iterable[str]) -> None:
        gone = [(manifest,) for manifest in forget]
        kept = [(m, k.fingerprint, json.dumps(k.plugins)) for m, k in marks.items()]
        if not gone and not kept:
            return
        with self._db.write() as tx:
            if gone:
                tx.execute_many("DELETE FROM plugin_folders WHERE manifest = ?", gone)
            if kept:
                tx.execute_many(
                    "INSERT INTO plugin_folders (manifest, fingerprint, plugins) "
                    "VALUES (?, ?, ?) ON CONFLICT (manifest) DO UPDATE SET "
                    "fingerprint = excluded.fingerprint, plugins = excluded.plugins",
                    kept,
                )
