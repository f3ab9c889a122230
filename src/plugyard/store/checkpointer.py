"""Background WAL checkpoints for an SQLite store.

A checkpoint copies the write-ahead log into the database file and fsyncs it. Left to
SQLite's auto-checkpoint, it runs inside whichever commit crosses the threshold, and every
caller waiting on that commit waits for the fsync too (tens of milliseconds for a large
log: the p99 of a busy ``execute`` route). Here a thread of its own, on a connection of its
own, runs ``PRAGMA wal_checkpoint(PASSIVE)`` every ``interval_s``: passive checkpoints never
block writers or readers, so commits only append to the log. The writer connection keeps a
high auto-checkpoint threshold as a backstop should this thread fall behind.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading


class Checkpointer:
    def __init__(self, path: str, interval_s: float = 0.5) -> None:
        self._path = path
        self._interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="plugyard-wal-checkpoint", daemon=True
        )

    def start(self) -> Checkpointer:
        self._thread.start()
        return self

    def signal_stop(self) -> None:
        self._stop.set()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)

    def _run(self) -> None:
        connection = sqlite3.connect(self._path, check_same_thread=False)
        try:
            connection.execute("PRAGMA busy_timeout=1000")
            while not self._stop.wait(self._interval_s):
                # A failed checkpoint is retried next time; commits stay durable in the log.
                with contextlib.suppress(sqlite3.Error):
                    connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        finally:
            connection.close()
