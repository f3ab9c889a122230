"""The provider protocol and the registry ``host.auth`` resolves providers from.

A provider turns what a connected account holds (a refresh token) into an access token
for some scopes, and can mint service-account tokens (optionally impersonating a
subject: domain delegation). A provider that fails, hangs or answers nonsense is
``auth_provider_error``; a name no provider has is ``auth_provider_unknown``.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from plugyard.errors import PlugyardError


class AuthError(PlugyardError):
    """``missing_identity``, ``insufficient_scopes``, ``auth_provider_unknown`` or
    ``auth_provider_error``; ``details`` says what is needed."""

    default_code = "auth_provider_error"

    def __init__(self, message: str, *, code: str | None = None, **details: Any) -> None:
        super().__init__(message, code=code)
        self.details = details


@dataclass(frozen=True, slots=True)
class Token:
    access_token: str
    expires_at: float | None = None
    scopes: tuple[str, ...] = ()
    #: what the provider says the token stands for (an account's address), if anything
    target: str | None = None
    #: a new refresh token, when the provider rotated it
    refresh_token: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


class TokenProvider(Protocol):
    @property
    def name(self) -> str: ...

    async def user_token(self, refresh_token: str, scopes: Sequence[str]) -> Token:
        """An access token for a connected account."""
        ...

    async def service_account_token(self, scopes: Sequence[str], subject: str | None) -> Token:
        """An access token for the service account (impersonating ``subject``)."""
        ...

    async def exchange_code(self, code: str, redirect_uri: str | None) -> Token:
        """The tokens an authorisation code stands for (connecting an account)."""
        ...


class ProviderRegistry:
    """Providers by name; an operator registers them, ``host.auth`` asks."""

    def __init__(self, providers: Sequence[TokenProvider] = ()) -> None:
        self._providers = {p.name: p for p in providers}
        self._lock = threading.Lock()

    def register(self, provider: TokenProvider) -> None:
        with self._lock:
            self._providers = {**self._providers, provider.name: provider}

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._providers))

    def find(self, name: str) -> TokenProvider | None:
        return self._providers.get(name)

    def require(self, name: str) -> TokenProvider:
        found = self._providers.get(name)
        if found is None:
            raise AuthError(
                f"no identity provider {name!r} is configured",
                code="auth_provider_unknown",
                provider=name,
            )
        return found
