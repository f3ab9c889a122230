"""Time spent in store transactions, for bench/fleet.py: off unless the environment
names a file in ``PLUGYARD_BENCH_STORE_TIMING`` (``%p`` becomes the process id).

When on, every transaction of the store (Store.reading/writing, and the hot path's
held connection, rawdb.py) adds its time to running totals — how long it waited for a
connection and how long it held one — and a thread writes the totals to the file
every 0.2 s, so a benchmark can read them from outside the replica. PostgreSQL's own
count (``pg_stat_database.active_time``) leaves out the round trips and the driver,
which a replica pays all the same; pg_stat_statements would need a server restart.
"""

from __future__ import annotations

import json
import os
import threading
import time

ENV = "PLUGYARD_BENCH_STORE_TIMING"
_PERIOD_S = 0.2


class Totals:
    def __init__(self, path: str) -> None:
        self.path = path.replace("%p", str(os.getpid()))
        self.held_s = self.wait_s = 0.0
        self.transactions = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._dump, name="plugyard-store-timing", daemon=True).start()

    def add(self, wait_s: float, held_s: float) -> None:
        with self._lock:
            self.wait_s += wait_s
            self.held_s += held_s
            self.transactions += 1

    def _dump(self) -> None:
        while True:
            time.sleep(_PERIOD_S)  # a timer thread, not a wait for an event
            with self._lock:
                data = {"wait_s": self.wait_s, "held_s": self.held_s,
                        "transactions": self.transactions}  # fmt: skip
            partial = self.path + ".tmp"
            with open(partial, "w") as out:
                json.dump(data, out)
            os.replace(partial, self.path)


#: The running totals, or ``None`` when off (the usual case: callers test it first, so
#: a transaction pays one attribute read).
TOTALS: Totals | None = Totals(os.environ[ENV]) if os.environ.get(ENV) else None
