"""Shu's auth declarations, enforced: ``op_auth`` per op and ``required_identities``,
checked before the plugin runs; and ``host.auth``, the provider adapter it calls.

Before a call (``Identities.check``):

- each ``required_identities`` entry that is not ``optional`` and each op's ``op_auth``
  with ``mode: user`` (or no mode, with a provider) needs a connected account of the
  caller at that provider (``missing_identity``, with provider, mode and scopes) whose
  granted scopes hold the declared ones (``insufficient_scopes``, with the missing ones);
- ``service_account`` and ``domain_delegate`` need the provider configured
  (``auth_provider_unknown``).

The op of an op-style plugin (``execute`` with ``params.op``) is ``params.op``.
``host.auth`` then answers tokens: ``resolve_token_and_target(provider)`` by the op's
mode and scopes, ``provider_user_token`` and ``provider_service_account_token``. Every
token it hands out is tracked by the redactor, so none leaves in a result or a log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from plugyard.governance.identities.accounts import AccountVault
from plugyard.governance.identities.providers import AuthError, ProviderRegistry, Token
from plugyard.governance.secrets.vault import Redactor
from plugyard.manifest.model import OpAuth, Operation, PluginDescriptor

_USER = (None, "user")
_EARLY_S = 60.0


def op_auth_for(
    descriptor: PluginDescriptor, operation: Operation, params: Mapping[str, Any]
) -> OpAuth | None:
    found = descriptor.op_auth.get(operation.id)
    op = params.get("op")
    if found is None and isinstance(op, str):
        found = descriptor.op_auth.get(op)
    return found


@dataclass
class Identities:
    accounts: AccountVault
    providers: ProviderRegistry
    redactor: Redactor
    clock: Callable[[], float] = time.time

    def check(self, descriptor: PluginDescriptor, auth: OpAuth | None, subject: str | None) -> None:
        needs: list[tuple[str, str | None, tuple[str, ...]]] = [
            (r.provider, r.mode, r.scopes) for r in descriptor.required_identities if not r.optional
        ]
        if auth is not None and auth.provider:
            needs.append((auth.provider, auth.mode, auth.scopes))
        for provider, mode, scopes in needs:
            if mode in _USER:
                self._user_ready(provider, mode, scopes, subject)
            else:
                self.providers.require(provider)

    def _user_ready(
        self, provider: str, mode: str | None, scopes: Sequence[str], subject: str | None
    ) -> None:
        account = self.accounts.find(subject, provider)
        if account is None:
            raise AuthError(
                f"connect a {provider} account first",
                code="missing_identity",
                provider=provider,
                mode=mode or "user",
                scopes=list(scopes),
            )
        missing = sorted(set(scopes) - set(account.scopes))
        if missing:
            raise AuthError(
                f"the {provider} account lacks scopes: {', '.join(missing)}",
                code="insufficient_scopes",
                provider=provider,
                scopes=list(scopes),
                missing=missing,
            )

    def host(
        self,
        descriptor: PluginDescriptor,
        auth: OpAuth | None,
        subject: str | None,
        identities: Mapping[str, str],
    ) -> AuthHost:
        return AuthHost(self, descriptor, auth, subject, identities)


class AuthHost:
    """``host.auth`` for one call: the caller's accounts and the op's declaration."""

    def __init__(
        self,
        owner: Identities,
        descriptor: PluginDescriptor,
        auth: OpAuth | None,
        subject: str | None,
        identities: Mapping[str, str],
    ) -> None:
        self._o, self._descriptor, self._auth = owner, descriptor, auth
        self._subject, self._identities = subject, identities

    def _declared(self, provider: str) -> None:
        names = {r.provider for r in self._descriptor.required_identities}
        names |= {a.provider for a in self._descriptor.op_auth.values() if a.provider}
        if provider not in names:
            raise AuthError(
                f"the plugin declares no {provider!r} identity",
                code="capability_not_granted",
                provider=provider,
            )

    async def resolve_token_and_target(self, provider: str) -> tuple[str | None, str | None]:
        self._declared(provider)
        auth = self._auth if self._auth is not None and self._auth.provider == provider else None
        mode = auth.mode if auth is not None else "user"
        scopes = auth.scopes if auth is not None else self._scopes(provider)
        if mode in _USER:
            token = await self.provider_user_token(provider, scopes)
            account = self._o.accounts.find(self._subject, provider)
            return token, (account.target if account and account.target else "me")
        subject = (
            self._subject_of(auth.subject_hint if auth else None)
            if mode == "domain_delegate"
            else None
        )
        if mode == "domain_delegate" and subject is None:
            raise AuthError(
                "no subject to impersonate", code="missing_identity", provider=provider, mode=mode
            )
        token = await self.provider_service_account_token(provider, scopes, subject)
        return token, subject

    async def provider_user_token(
        self, provider: str, required_scopes: Sequence[str] | None = None
    ) -> str | None:
        self._declared(provider)
        scopes = tuple(required_scopes or ())
        self._o._user_ready(provider, "user", scopes, self._subject)
        assert self._subject is not None
        material = self._o.accounts.material(self._subject, provider)
        cached = material.get("access_token")
        expires = material.get("expires_at")
        granted = set(material.get("access_scopes") or ())
        fresh = isinstance(expires, int | float) and expires - _EARLY_S > self._o.clock()
        if isinstance(cached, str) and fresh and set(scopes) <= granted:
            return cached
        refresh = material.get("refresh_token")
        if not isinstance(refresh, str):
            return cached if isinstance(cached, str) and expires is None else None
        token = await self._o.providers.require(provider).user_token(refresh, scopes)
        self._remember(provider, material, token)
        return token.access_token

    async def provider_service_account_token(
        self, provider: str, scopes: Sequence[str], subject: str | None = None
    ) -> str:
        self._declared(provider)
        token = await self._o.providers.require(provider).service_account_token(scopes, subject)
        self._o.redactor.track(token.access_token)
        return token.access_token

    def _remember(self, provider: str, material: dict[str, Any], token: Token) -> None:
        assert self._subject is not None
        account = self._o.accounts.find(self._subject, provider)
        updated = {
            **material,
            "access_token": token.access_token,
            "expires_at": token.expires_at,
            "access_scopes": list(token.scopes),
        }
        if token.refresh_token:
            updated["refresh_token"] = token.refresh_token
        self._o.accounts.connect(
            self._subject,
            provider,
            scopes=account.scopes if account else token.scopes,
            target=(account.target if account else None) or token.target,
            material=updated,
        )

    def _scopes(self, provider: str) -> tuple[str, ...]:
        for item in self._descriptor.required_identities:
            if item.provider == provider:
                return item.scopes
        return ()

    def _subject_of(self, hint: str | None) -> str | None:
        if hint and hint.startswith("identity:"):
            return self._identities.get(hint.removeprefix("identity:"))
        return hint or None


async def connect(
    identities: Identities,
    owner: str,
    provider: str,
    *,
    scopes: Sequence[str] = (),
    target: str | None = None,
    refresh_token: str | None = None,
    code: str | None = None,
    redirect_uri: str | None = None,
) -> Any:
    """Connect ``owner``'s account at ``provider``: from an authorisation code (exchanged
    at the provider's token endpoint) or from a refresh token the caller holds."""
    if code is not None:
        token = await identities.providers.require(provider).exchange_code(code, redirect_uri)
        refresh_token = token.refresh_token or refresh_token
        scopes = tuple(scopes) or token.scopes
        target = target or token.target
        material: dict[str, Any] = {
            "access_token": token.access_token,
            "expires_at": token.expires_at,
            "access_scopes": list(token.scopes),
        }
    else:
        identities.providers.require(provider)
        material = {}
    if refresh_token:
        material["refresh_token"] = refresh_token
    if not material:
        raise AuthError("give a refresh token or an authorisation code", code="invalid_request")
    return identities.accounts.connect(
        owner, provider, scopes=tuple(scopes), target=target, material=material
    )
