"""Types shared by every layer: JSON aliases, and who calls."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = JSONScalar | list["JSONValue"] | dict[str, "JSONValue"]
JSONObject: TypeAlias = dict[str, JSONValue]

#: The role that may do everything under the starter policy, holds every management
#: right, and that the embedding application's own calls hold.
ADMIN_ROLE = "admin"


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls: a subject, its roles and (for Shu) the permission strings it holds.

    Always vouched for by the surface — the authenticated API key, or the application
    that embeds plugyard — never read from a request body. ``subject`` ``None`` is the
    embedding application itself; :meth:`of` is the one place that says what it may do.
    """

    subject: str | None = None
    roles: tuple[str, ...] = ()
    permissions: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        subject: str | None = None,
        roles: Iterable[str] | None = None,
        permissions: Iterable[str] = (),
    ) -> Caller:
        """A caller as an API takes it apart. With no subject and no roles given, the
        call is the embedding application's own: it holds the ``admin`` role (as
        ``yard.call`` without ``subject``). A subject gets only the roles given (and
        those the policy lists for it)."""
        if roles is None:
            roles = (ADMIN_ROLE,) if subject is None else ()
        return cls(subject, tuple(roles), tuple(permissions))

    @property
    def application(self) -> bool:
        """The embedding application itself (no subject): it owns the yard's model, so
        the model's right and rate do not apply to it."""
        return self.subject is None
