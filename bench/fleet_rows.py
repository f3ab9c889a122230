"""A lease renewal and a rate-bucket take, per call, on SQLite and PostgreSQL.

    python bench/fleet_rows.py [--calls 200]

Each is one write transaction on one row (store/leases.py, store/rate_buckets.py): a
feed tick asks for its lease, every ``host.rate_limit`` call takes from its bucket. The
SQLite store is a file in a temporary folder; PostgreSQL is the test server
(PLUGYARD_TEST_POSTGRES_URL, loopback by default) in a database of its own, skipped
when it cannot be reached. To time another version of the store, put its ``src`` first
on PYTHONPATH. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _timing import median_per_call_sync

from plugyard.store import testing
from plugyard.store.leases import SqlLeases
from plugyard.store.rate_buckets import SqlRateBuckets
from plugyard.store.store import Store


def _time(store: Store, calls: int) -> tuple[float, float]:
    leases, buckets = SqlLeases(store), SqlRateBuckets(store)
    lease = median_per_call_sync(lambda: leases.try_hold("tick", "a", 60), calls, warm=calls // 4)
    take = median_per_call_sync(
        lambda: buckets.take("p", "default", 1, 1e12, 0.0), calls, warm=calls // 4
    )
    return lease, take


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}; median of 15 rounds of {args.calls} calls")
    print("| backend | lease renewal | rate-bucket take |")
    print("|---|---:|---:|")
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder) / "s.db") as store:
        lease, take = _time(store, args.calls)
    print(f"| SQLite (file) | {lease * 1e6:.0f} µs | {take * 1e6:.0f} µs |")
    server = testing.server_url()
    why = testing.unreachable(server)
    if why is not None:
        print(f"| PostgreSQL | skipped: {why} | |")
        return
    with (
        testing.temporary_database(server) as database,
        Store.open(database.render_as_string(hide_password=False)) as store,
    ):
        lease, take = _time(store, args.calls)
    print(f"| PostgreSQL (loopback) | {lease * 1e6:.0f} µs | {take * 1e6:.0f} µs |")


if __name__ == "__main__":
    main()
