"""Following the change log: a thread that hears of new changes and hands them, in
order and grouped by topic, to whoever keeps a copy (the registry, the key cache, the
policy book).

On PostgreSQL it LISTENs on :data:`~plugyard.store.changes.CHANNEL` and reads the log
when woken, and at least every ``safety_s`` in case a notification was lost; on SQLite
(several processes on one file) it polls the log, which is one indexed read. Whatever
went wrong — the database went away, a handler raised — the thread keeps its last
applied ``seq``, reconnects with a growing pause and reads everything after it: a
replica catches up without a restart. If the log was pruned past that ``seq`` (the
replica was away longer than the retention, store/changes.py), what it missed cannot
be listed: it calls ``resync`` to read everything it keeps again, and goes on from
the newest change.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from plugyard.store.changes import CHANNEL, Change, ChangeLog, SqlChangeLog

if TYPE_CHECKING:
    from plugyard.store.store import Store

log = logging.getLogger("plugyard.store")
#: topic → handler of the changed subjects (deduplicated, in first-seen order).
Handlers = Mapping[str, Callable[[Sequence[str]], object]]
_BATCH = 1000
_MAX_PAUSE_S = 5.0
_SLICE_S = 0.5


class Wakeups(Protocol):
    def wait(self, timeout: float) -> None:
        """Return when there may be something new, or after ``timeout``; raise when
        the connection behind it is lost."""
        ...

    def close(self) -> None: ...


class Polling:
    """No notifications: come back every ``interval_s`` (SQLite, or a test)."""

    def __init__(self, stop: threading.Event, interval_s: float) -> None:
        self._stop, self._interval = stop, interval_s

    def wait(self, timeout: float) -> None:
        self._stop.wait(min(timeout, self._interval))

    def close(self) -> None:
        return None


class PgListen:
    """A dedicated autocommit connection LISTENing on the change channel."""

    def __init__(self, dsn: str) -> None:
        import psycopg  # the PostgreSQL driver; only a PostgreSQL store gets here

        self._conn: Any = psycopg.connect(dsn, autocommit=True, connect_timeout=5)
        self._conn.execute(f"LISTEN {CHANNEL}")

    def wait(self, timeout: float) -> None:
        # One notification is enough: the reader takes everything after its seq, and
        # the rest of a burst is drained without waiting.
        for _ in self._conn.notifies(timeout=timeout, stop_after=1):
            pass
        for _ in self._conn.notifies(timeout=0):
            pass

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()


def wakeups_for(store: Store, stop: threading.Event, poll_s: float) -> Callable[[], Wakeups]:
    if store.backend == "postgresql":
        url = store.engine.url.set(drivername="postgresql")
        dsn = url.render_as_string(hide_password=False)
        return lambda: PgListen(dsn)
    return lambda: Polling(stop, poll_s)


class ChangeWatcher:
    """Applies the change log after ``start_seq`` to ``handlers`` until :meth:`stop`."""

    def __init__(
        self,
        changes: ChangeLog,
        handlers: Handlers,
        wakeups: Callable[[], Wakeups],
        *,
        start_seq: int,
        safety_s: float = 5.0,
        stop: threading.Event | None = None,
        resync: Callable[[], object] | None = None,
    ) -> None:
        self._log, self._handlers, self._wakeups = changes, handlers, wakeups
        self._resync = resync
        self.resyncs = 0
        self._seq = start_seq
        self._safety = safety_s
        self._stop = stop or threading.Event()
        self._applied = threading.Condition()
        self._thread: threading.Thread | None = None

    @classmethod
    def over(
        cls,
        store: Store,
        handlers: Handlers,
        *,
        poll_s: float = 0.2,
        safety_s: float = 5.0,
        resync: Callable[[], object] | None = None,
    ) -> ChangeWatcher:
        """From the store's newest change on: the caller has just read what it keeps."""
        changes = SqlChangeLog(store)
        stop = threading.Event()
        return cls(changes, handlers, wakeups_for(store, stop, poll_s), start_seq=changes.latest(),
                   safety_s=safety_s, stop=stop, resync=resync)  # fmt: skip

    @property
    def seq(self) -> int:
        """The last change applied."""
        return self._seq

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="plugyard-changes", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_for(self, seq: int, timeout: float) -> bool:
        """Whether changes up to ``seq`` were applied within ``timeout`` seconds."""
        with self._applied:
            return self._applied.wait_for(lambda: self._seq >= seq, timeout)

    def catch_up(self) -> int:
        """Apply everything after the last applied change now; returns how many."""
        total = 0
        while True:
            batch = self._log.after(self._seq, _BATCH)
            # Read after the batch: if the row at our seq is still there now, nothing
            # after it was pruned before the batch was read (pruning cuts a prefix).
            if self._resync is not None and self._log.oldest() > max(self._seq, 1):
                self._start_over(self._resync)
                continue
            if not batch:
                return total
            self._apply(batch)
            total += len(batch)
            with self._applied:
                self._seq = batch[-1].seq
                self._applied.notify_all()
            if len(batch) < _BATCH:
                return total

    def _start_over(self, resync: Callable[[], object]) -> None:
        newest = self._log.latest()
        log.warning("changes after seq %d were pruned; reading everything again", self._seq)
        resync()
        self.resyncs += 1
        with self._applied:
            # Changes after `newest` come next; those before are in what was re-read.
            self._seq = newest
            self._applied.notify_all()

    def _apply(self, batch: Sequence[Change]) -> None:
        by_topic: dict[str, dict[str, None]] = defaultdict(dict)
        for change in batch:
            by_topic[change.topic][change.subject] = None
        for topic, subjects in by_topic.items():
            handler = self._handlers.get(topic)
            if handler is not None:
                handler(tuple(subjects))

    def _run(self) -> None:
        pause = 0.1
        while not self._stop.is_set():
            wakeups: Wakeups | None = None
            try:
                # Listen first, then read: a change committed in between is in the read.
                wakeups = self._wakeups()
                while not self._stop.is_set():
                    self.catch_up()
                    pause = 0.1
                    # In slices, so stop() is heard soon even while nothing happens.
                    wakeups.wait(min(self._safety, _SLICE_S))
            except Exception as exc:
                log.warning("following changes failed (retrying after seq %d): %s", self._seq, exc)
                self._stop.wait(pause)
                pause = min(pause * 2, _MAX_PAUSE_S)
            finally:
                if wakeups is not None:
                    wakeups.close()
