"""Full copies of outputs too large to return inline, kept by reference."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from typing import Protocol


class PayloadStore(Protocol):
    def put(self, payload: bytes) -> str:
        """Keep ``payload``; answer the reference that fetches it."""
        ...

    def get(self, ref: str) -> bytes | None: ...


# No repository's twin: no table holds payloads; a reference lasts while this process does.
class MemoryPayloadStore:
    """Bounded by total bytes; the oldest payloads go first."""

    def __init__(self, max_bytes: int = 256 * 1024 * 1024) -> None:
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._max = max_bytes

    def put(self, payload: bytes) -> str:
        ref = f"payload:{secrets.token_hex(16)}"
        self._items[ref] = payload
        self._size += len(payload)
        while self._size > self._max and len(self._items) > 1:
            _, old = self._items.popitem(last=False)
            self._size -= len(old)
        return ref

    def get(self, ref: str) -> bytes | None:
        return self._items.get(ref)
