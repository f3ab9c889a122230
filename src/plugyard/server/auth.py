"""API-key authentication: who is calling, checked once per request.

A key arrives as ``X-API-Key: <key>`` or ``Authorization: Bearer <key>``. Verified keys
are remembered for ``ttl_s`` seconds (a store read per request would cost more than the
call itself), so a key revoked from another process stops working within that time; a
revocation through the same process is immediate (:meth:`Authenticator.forget`).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, Protocol

from fastapi import Request, Security
from fastapi.security import APIKeyHeader

from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right
from plugyard.server.errors import Unauthenticated
from plugyard.server.inputs import header
from plugyard.store.keys import Principal

API_KEY_HEADER = APIKeyHeader(
    name="X-API-Key",
    auto_error=False,
    description="An API key (`plugyard keys create`); `Authorization: Bearer <key>` works too.",
)
_MAX_CACHED = 10_000


class KeyVerifier(Protocol):
    def verify(self, key: str) -> Principal | None: ...


class Authenticator:
    def __init__(
        self, keys: KeyVerifier, *, ttl_s: float = 5.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._keys = keys
        self._ttl = ttl_s
        self._clock = clock
        self._cache: dict[str, tuple[Principal | None, float]] = {}

    def principal(self, key: str) -> Principal | None:
        now = self._clock()
        cached = self._cache.get(key)
        if cached is not None and cached[1] > now:
            return cached[0]
        found = self._keys.verify(key)
        if len(self._cache) >= _MAX_CACHED:
            self._cache.clear()  # bounded: a flood of bad keys cannot grow it
        self._cache[key] = (found, now + self._ttl)
        return found

    def forget(self) -> None:
        self._cache.clear()


def presented_key(request: Request, given: str | None) -> str | None:
    if given:
        return given
    authorization = header(request, b"authorization")
    if authorization and authorization[:7].lower() == "bearer ":
        return authorization[7:].strip() or None
    return None


def authenticate(request: Request, given: str | None = None) -> Principal:
    """The verified principal of a request, or ``unauthenticated``."""
    key = presented_key(request, given or header(request, b"x-api-key"))
    if key is None:
        raise Unauthenticated(
            "no API key: send X-API-Key or Authorization: Bearer", key_given=False
        )
    auth: Authenticator = request.app.state.auth
    found = auth.principal(key)
    if found is None:
        raise Unauthenticated("the API key is not valid (unknown or revoked)", key_given=True)
    return found


#: For routes that check the key themselves (the hot ``execute``): the same security
#: requirement in OpenAPI, without a dependency to resolve on every request.
SECURITY: dict[str, list[dict[str, list[str]]]] = {"security": [{"APIKeyHeader": []}]}


async def caller(
    request: Request, api_key: Annotated[str | None, Security(API_KEY_HEADER)]
) -> Principal:
    """The dependency of every ``/api`` route: the verified principal, or 401."""
    return authenticate(request, api_key)


@functools.cache
def needs(right: Right) -> Callable[..., Coroutine[Any, Any, Principal]]:
    """The dependency of a management route: a principal holding ``right``, else 403
    ``permission_denied`` naming it (governance/policy/rights.py decides, as for the console)."""

    async def holder(
        request: Request, api_key: Annotated[str | None, Security(API_KEY_HEADER)]
    ) -> Principal:
        found = await caller(request, api_key)
        rights.require(found, right)
        return found

    return holder
