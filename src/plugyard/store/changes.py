"""The change log replicas follow: what changed in the shared tables, in commit order.

Rows are written by triggers (migration 0008), never by this module, so every writer
records its changes. A reader keeps the last ``seq`` it applied and asks for what came
after: that one number is the whole catch-up state, after a lost connection as much as
after a NOTIFY.

The log is pruned (:meth:`SqlChangeLog.prune`, on a timer under a lease, so one replica
of the fleet does it): rows stay while they are newer than ``Retention.keep_s`` or
among the last ``Retention.keep_last``. A listener whose last ``seq`` was pruned away
cannot tell what it missed; it sees that (:meth:`ChangeLog.oldest` is past its ``seq``)
and reads everything it keeps again instead (store/watch.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from plugyard.store.rawdb import RawDb, raw_db

if TYPE_CHECKING:
    from plugyard.store.leases import Leases
    from plugyard.store.store import Store

#: The NOTIFY channel the triggers send each new ``seq`` on (PostgreSQL).
CHANNEL = "plugyard_changes"


@dataclass(frozen=True, slots=True)
class Change:
    seq: int
    #: the table: plugins, api_keys, api_subjects, policies, mcp_tool_pins,
    #: remembered_requests
    topic: str
    subject: str  # the row's id (a policy's seq, a pin's plugin id, a request's tool)


#: The default retention: an hour, and at least the last 10,000 changes.
KEEP_S, KEEP_LAST = 3600.0, 10_000


@dataclass(frozen=True, slots=True)
class Retention:
    """What pruning keeps: a row goes only when it is older than ``keep_s`` seconds
    *and* not among the last ``keep_last`` (at least the newest row always stays, so
    ``seq`` never restarts). A replica down longer than both re-reads in full."""

    keep_s: float = KEEP_S
    keep_last: int = KEEP_LAST
    every_s: float = 60.0  # how often the fleet prunes

    def __post_init__(self) -> None:
        if self.keep_s < 0 or self.keep_last < 1 or self.every_s <= 0:
            raise ValueError("retention needs keep_s >= 0, keep_last >= 1, every_s > 0")


class ChangeLog(Protocol):
    def latest(self) -> int:
        """The newest ``seq`` (0: none yet)."""
        ...

    def oldest(self) -> int:
        """The oldest ``seq`` still held (0: none)."""
        ...

    def after(self, seq: int, limit: int = 1000) -> Sequence[Change]:
        """Up to ``limit`` changes newer than ``seq``, oldest first."""
        ...


class SqlChangeLog:
    def __init__(self, store: Store) -> None:
        self._db: RawDb = raw_db(store)

    def latest(self) -> int:
        with self._db.read() as tx:
            found = tx.one("SELECT max(seq) FROM changes")
        return int(found[0] or 0) if found is not None else 0

    def oldest(self) -> int:
        with self._db.read() as tx:
            found = tx.one("SELECT min(seq) FROM changes")
        return int(found[0] or 0) if found is not None else 0

    def prune(self, retention: Retention, now: float) -> int:
        """Delete what ``retention`` lets go; returns how many rows."""
        with self._db.write() as tx:
            return tx.execute(
                "DELETE FROM changes WHERE at < :cut "
                "AND seq <= (SELECT max(seq) FROM changes) - :keep",
                {"cut": now - retention.keep_s, "keep": retention.keep_last},
            )

    def after(self, seq: int, limit: int = 1000) -> Sequence[Change]:
        with self._db.read() as tx:
            found = tx.all(
                "SELECT seq, topic, subject FROM changes WHERE seq > :seq ORDER BY seq LIMIT :n",
                {"seq": seq, "n": limit},
            )
        return tuple(Change(int(s), t, x) for s, t, x in found)


#: The lease a pruning replica holds (store/leases.py).
PRUNE_LEASE = "change-log-prune"


def prune_in_fleet(
    store: Store,
    leases: Leases,
    holder: str,
    retention: Retention,
    clock: Callable[[], float] = time.time,
) -> int | None:
    """Prune the log if ``holder`` gets the lease (held a little longer than the
    period, so it keeps it while it runs); ``None`` when another replica holds it."""
    if not leases.try_hold(PRUNE_LEASE, holder, 2 * retention.every_s):
        return None
    return SqlChangeLog(store).prune(retention, clock())
