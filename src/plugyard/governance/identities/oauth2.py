"""A generic OAuth2 token endpoint (RFC 6749) as a provider: ``refresh_token`` grants
for connected accounts, ``client_credentials`` for the service account,
``authorization_code`` to connect one.

httpx with a deadline on every phase; the answer must be JSON with a string
``access_token`` (``expires_in`` a number when present), else it is a lie:
``auth_provider_error``. The client secret comes from a callable (a system secret), so
it is read when needed and never kept in a setting.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import httpx

from plugyard.governance.identities.providers import AuthError, Token

MAX_BODY = 64 * 1024


class OAuth2Provider:
    def __init__(
        self,
        name: str,
        token_url: str,
        client_id: str,
        client_secret: Callable[[], str | None] = lambda: None,
        *,
        timeout_s: float = 10.0,
        subject_param: str = "subject",
        transport: httpx.AsyncBaseTransport | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if not token_url.startswith(("https://", "http://")):
            raise ValueError("the token endpoint is an http(s) URL")
        self.name, self.token_url, self.client_id = name, token_url, client_id
        self._secret, self._timeout, self._subject = client_secret, timeout_s, subject_param
        self._transport, self._clock = transport, clock

    async def user_token(self, refresh_token: str, scopes: Sequence[str]) -> Token:
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return await self._grant(form, scopes)

    async def service_account_token(self, scopes: Sequence[str], subject: str | None) -> Token:
        form = {"grant_type": "client_credentials"}
        if subject:
            form[self._subject] = subject
        return await self._grant(form, scopes)

    async def exchange_code(self, code: str, redirect_uri: str | None) -> Token:
        form = {"grant_type": "authorization_code", "code": code}
        if redirect_uri:
            form["redirect_uri"] = redirect_uri
        return await self._grant(form, ())

    async def _grant(self, form: dict[str, str], scopes: Sequence[str]) -> Token:
        body = {**form, "client_id": self.client_id}
        secret = self._secret()
        if secret:
            body["client_secret"] = secret
        if scopes:
            body["scope"] = " ".join(scopes)
        timeout = httpx.Timeout(self._timeout)
        try:
            async with httpx.AsyncClient(
                timeout=timeout, transport=self._transport, follow_redirects=False
            ) as client:
                reply = await client.post(
                    self.token_url, data=body, headers={"Accept": "application/json"}
                )
        except httpx.TimeoutException:
            raise self._error("the token endpoint did not answer in time", "timeout") from None
        except httpx.HTTPError as exc:
            raise self._error(
                f"the token endpoint failed: {type(exc).__name__}", "network"
            ) from None
        if len(reply.content) > MAX_BODY:
            raise self._error("the token endpoint's answer is too large", "invalid_answer")
        if reply.status_code >= 400:
            raise self._error(f"the token endpoint refused: HTTP {reply.status_code}", "refused")
        try:
            data = reply.json()
        except ValueError:
            raise self._error("the token endpoint's answer is not JSON", "invalid_answer") from None
        return self._token(data, scopes)

    def _token(self, data: Any, asked: Sequence[str]) -> Token:
        if (
            not isinstance(data, Mapping)
            or not isinstance(data.get("access_token"), str)
            or not data["access_token"]
        ):
            raise self._error("the token endpoint answered no access_token", "invalid_answer")
        expires = data.get("expires_in")
        if expires is not None and (
            isinstance(expires, bool) or not isinstance(expires, int | float)
        ):
            raise self._error("expires_in is not a number", "invalid_answer")
        scope = data.get("scope")
        granted = tuple(scope.split()) if isinstance(scope, str) else tuple(asked)
        refresh = data.get("refresh_token")
        target = data.get("email") or data.get("target")
        return Token(
            data["access_token"],
            self._clock() + float(expires) if expires is not None else None,
            granted,
            target if isinstance(target, str) else None,
            refresh if isinstance(refresh, str) else None,
        )

    def _error(self, message: str, reason: str) -> AuthError:
        return AuthError(
            f"{self.name}: {message}", code="auth_provider_error", provider=self.name, reason=reason
        )
