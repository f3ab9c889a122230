"""Pins of MCP tools: which definition of each tool an admin trusts.

The first definition a plugin's server shows is pinned (trust on first use); a later,
different one is only *seen*, and the tool stays disabled until :meth:`approve` pins
what was seen. The runtime decides; this module only keeps the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.rawdb import RawDb, raw_db

if TYPE_CHECKING:
    from plugyard.store.store import Store


@dataclass(frozen=True, slots=True)
class ToolPin:
    plugin_id: str
    tool: str
    pinned_hash: str
    seen_hash: str
    approved_by: str | None
    updated_at: float

    @property
    def changed(self) -> bool:
        """The server now shows a definition nobody approved."""
        return self.pinned_hash != self.seen_hash

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin_id": self.plugin_id,
            "tool": self.tool,
            "pinned_hash": self.pinned_hash,
            "seen_hash": self.seen_hash,
            "changed": self.changed,
            "approved_by": self.approved_by,
            "updated_at": self.updated_at,
        }


class PinRepository(Protocol):
    def observe(self, plugin_id: str, tool: str, digest: str, at: float) -> ToolPin:
        """Record that the server shows ``digest`` for ``tool`` (pinning it when new)."""
        ...

    def list(self, plugin_id: str | None = None) -> list[ToolPin]: ...

    def approve(self, plugin_id: str, tool: str, by: str | None, at: float) -> ToolPin | None:
        """Pin what was last seen; ``None`` when the tool was never seen."""
        ...


_COLUMNS = "plugin_id, tool, pinned_hash, seen_hash, approved_by, updated_at"


class SqlPinRepository:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def observe(self, plugin_id: str, tool: str, digest: str, at: float) -> ToolPin:
        keys = {"p": plugin_id, "t": tool, "h": digest, "at": at}
        with self._db.write() as tx:
            # Insert pins a new tool; a known one only has what was seen updated.
            tx.execute(
                f"INSERT INTO mcp_tool_pins ({_COLUMNS}) VALUES (:p, :t, :h, :h, NULL, :at) "
                "ON CONFLICT (plugin_id, tool) DO UPDATE SET seen_hash = excluded.seen_hash, "
                "updated_at = excluded.updated_at WHERE mcp_tool_pins.seen_hash <> "
                "excluded.seen_hash",
                keys,
            )
            row = tx.one(
                f"SELECT {_COLUMNS} FROM mcp_tool_pins WHERE plugin_id = :p AND tool = :t", keys
            )
        assert row is not None
        return _pin(row)

    def list(self, plugin_id: str | None = None) -> list[ToolPin]:
        with self._db.read() as tx:
            if plugin_id is None:
                rows = tx.all(f"SELECT {_COLUMNS} FROM mcp_tool_pins ORDER BY plugin_id, tool")
            else:
                rows = tx.all(
                    f"SELECT {_COLUMNS} FROM mcp_tool_pins WHERE plugin_id = :p ORDER BY tool",
                    {"p": plugin_id},
                )
        return [_pin(r) for r in rows]

    def approve(self, plugin_id: str, tool: str, by: str | None, at: float) -> ToolPin | None:
        keys = {"p": plugin_id, "t": tool, "by": by, "at": at}
        with self._db.write() as tx:
            tx.execute(
                "UPDATE mcp_tool_pins SET pinned_hash = seen_hash, approved_by = :by, "
                "updated_at = :at WHERE plugin_id = :p AND tool = :t",
                keys,
            )
            row = tx.one(
                f"SELECT {_COLUMNS} FROM mcp_tool_pins WHERE plugin_id = :p AND tool = :t", keys
            )
        return _pin(row) if row is not None else None


def _pin(row: Any) -> ToolPin:
    return ToolPin(str(row[0]), str(row[1]), str(row[2]), str(row[3]), row[4], float(row[5]))
