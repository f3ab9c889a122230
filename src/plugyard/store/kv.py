"""Small JSON values per plugin: ``host.storage``, ``host.cursor`` and feed watermarks.

Keyed by (plugin id, namespace, key); the namespace keeps a plugin's storage, its
cursors per source and the feeds' watermarks apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, json_in, json_out, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


class KeyValueRepository(Protocol):
    def get(self, plugin_id: str, namespace: str, key: str) -> Any: ...

    def put(self, plugin_id: str, namespace: str, key: str, value: Any, at: float) -> None: ...

    def delete(self, plugin_id: str, namespace: str, key: str) -> bool: ...

    def items(self, plugin_id: str, namespace: str) -> dict[str, Any]: ...


class SqlKeyValueRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def get(self, plugin_id: str, namespace: str, key: str) -> Any:
        with self._db.read() as tx:
            found = tx.one(
                "SELECT value FROM plugin_kv WHERE plugin_id = :p AND namespace = :n AND key = :k",
                {"p": plugin_id, "n": namespace, "k": key},
            )
        return json_out(found[0]) if found is not None else None

    def put(self, plugin_id: str, namespace: str, key: str, value: Any, at: float) -> None:
        with self._db.write() as tx:
            tx.execute(
                "INSERT INTO plugin_kv (plugin_id, namespace, key, value, updated_at) "
                "VALUES (:p, :n, :k, :v, :at) ON CONFLICT (plugin_id, namespace, key) "
                "DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                {"p": plugin_id, "n": namespace, "k": key, "v": json_in(value), "at": at},
            )

    def delete(self, plugin_id: str, namespace: str, key: str) -> bool:
        with self._db.write() as tx:
            gone = tx.execute(
                "DELETE FROM plugin_kv WHERE plugin_id = :p AND namespace = :n AND key = :k",
                {"p": plugin_id, "n": namespace, "k": key},
            )
        return gone == 1

    def items(self, plugin_id: str, namespace: str) -> dict[str, Any]:
        with self._db.read() as tx:
            rows = tx.all(
                "SELECT key, value FROM plugin_kv WHERE plugin_id = :p AND namespace = :n "
                "ORDER BY key",
                {"p": plugin_id, "n": namespace},
            )
        return {k: json_out(v) for k, v in rows}
