"""The first admin key: made once per store, on every backend, however many starts race."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from plugyard.store.keys import SqlKeyRepository
from plugyard.store.store import Store


def test_the_first_start_makes_an_admin_key_and_no_later_start_does(store: Store) -> None:
    keys = SqlKeyRepository(store)
    key = keys.bootstrap_admin()
    assert key is not None
    found = keys.verify(key)
    assert found is not None and found.admin and found.subject == "admin"
    assert keys.bootstrap_admin() is None
    assert len(keys.list()) == 1


def test_concurrent_first_starts_make_one_admin_key(database_url: str) -> None:
    stores = [Store.open(database_url) for _ in range(2)]
    try:
        repos = [SqlKeyRepository(stores[i % 2]) for i in range(6)]
        with ThreadPoolExecutor(6) as pool:
            made = [k for k in pool.map(lambda r: r.bootstrap_admin(), repos) if k is not None]
        assert len(made) == 1
        assert len(repos[0].list()) == 1
    finally:
        for opened in stores:
            opened.close()
