"""The registry's values: a registered plugin and the events a change emits."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from plugyard.manifest.model import Family, PluginDescriptor

Trust = Literal["trusted", "untrusted"]
#: Where a registration came from. Built-ins and folders are re-read on every start;
#: externals (registered over the API) live in the store only.
SourceKind = Literal["builtin", "folder", "catalog", "entrypoint", "external", "code"]
EventKind = Literal["registered", "updated", "removed", "availability"]


def content_hash(descriptor: PluginDescriptor) -> str:
    """A stable digest of the descriptor: equal descriptors, equal hashes."""
    canonical = json.dumps(descriptor.to_data(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class Stored(NamedTuple):
    """A descriptor as the store holds it, not validated yet: what a listing shows is read
    from ``data``; ``validate`` makes the descriptor on first use."""

    id: str
    family: Family
    data: Mapping[str, Any]
    validate: Callable[[Mapping[str, Any]], PluginDescriptor]


# Not slotted: a plugin read from the store gets its ``descriptor`` attribute only when it
# is first read (``__getattr__``). Equality, hashing, ``repr`` and ``replace`` read it too.
@dataclass(frozen=True)
class RegisteredPlugin:
    """A descriptor plus what the host knows about it.

    ``trust`` is set by the operator (the source's configuration), never by the plugin.
    ``location`` is the folder holding the manifest and code, when there is one.

    A plugin read from the store (:meth:`stored`) validates its descriptor when the
    descriptor is first read, which may then raise the validation's error.
    """

    descriptor: PluginDescriptor
    source: SourceKind
    content_hash: str
    trust: Trust = "trusted"
    location: str | None = None
    manifest_path: str | None = None
    dialect: str | None = None
    available: bool = True
    unavailable_reason: str | None = None

    @property
    def id(self) -> str:
        # Read several times on every call: a dict lookup, not a caught KeyError (which
        # cost about 1 µs a read once the descriptor was validated).
        pending: Stored | None = self.__dict__.get("_stored")
        return self.descriptor.id if pending is None else pending.id

    @property
    def family(self) -> Family:
        pending: Stored | None = self.__dict__.get("_stored")
        return self.descriptor.family if pending is None else pending.family

    @property
    def stored_data(self) -> Mapping[str, Any] | None:
        """The descriptor's JSON data as stored, while it is not validated yet; else
        ``None`` (read ``descriptor``)."""
        pending: Stored | None = self.__dict__.get("_stored")
        return None if pending is None else pending.data

    @classmethod
    def stored(
        cls,
        pending: Stored,
        source: SourceKind,
        *,
        content_hash: str,
        trust: Trust,
        location: str | None,
        manifest_path: str | None,
        dialect: str | None,
        available: bool,
        unavailable_reason: str | None,
    ) -> RegisteredPlugin:
        """A plugin whose descriptor is validated on first use (see :class:`Stored`)."""
        plugin = object.__new__(cls)
        plugin.__dict__.update(
            _stored=pending, source=source, content_hash=content_hash, trust=trust,
            location=location, manifest_path=manifest_path, dialect=dialect,
            available=available, unavailable_reason=unavailable_reason,
        )  # fmt: skip
        return plugin

    if not TYPE_CHECKING:  # mypy would take every unknown attribute for this one

        def __getattr__(self, name: str) -> Any:
            pending = self.__dict__.get("_stored") if name == "descriptor" else None
            if pending is None:
                raise AttributeError(name)
            descriptor = pending.validate(pending.data)
            # Two threads may both get here: each makes an equal descriptor.
            self.__dict__["descriptor"] = descriptor
            self.__dict__.pop("_stored", None)
            return descriptor

    @classmethod
    def of(
        cls,
        descriptor: PluginDescriptor,
        source: SourceKind,
        *,
        trust: Trust = "trusted",
        location: str | None = None,
        manifest_path: str | None = None,
        dialect: str | None = None,
    ) -> RegisteredPlugin:
        return cls(
            descriptor=descriptor,
            source=source,
            content_hash=content_hash(descriptor),
            trust=trust,
            location=location,
            manifest_path=manifest_path,
            dialect=dialect,
        )

    def redescribed(self, descriptor: PluginDescriptor) -> RegisteredPlugin:
        """The same registration (source, trust, place, dialect) with another descriptor,
        freshly hashed and available."""
        return RegisteredPlugin.of(
            descriptor,
            self.source,
            trust=self.trust,
            location=self.location,
            manifest_path=self.manifest_path,
            dialect=self.dialect,
        )


@dataclass(frozen=True, slots=True)
class RegistryEvent:
    """One change of the registry; ``previous`` is the entry it replaced or removed."""

    kind: EventKind
    plugin_id: str
    plugin: RegisteredPlugin | None
    previous: RegisteredPlugin | None = None


Listener = Callable[[RegistryEvent], None]


@dataclass(frozen=True, slots=True)
class LoadFailure:
    """A plugin that could not be loaded: reported and skipped, never fatal."""

    source: str
    code: str
    message: str
    pointer: str = ""
