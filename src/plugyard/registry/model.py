"""The registry's values: a registered plugin and the events a change emits."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

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


@dataclass(frozen=True, slots=True)
class RegisteredPlugin:
    """A descriptor plus what the host knows about it.

    ``trust`` is set by the operator (the source's configuration), never by the plugin.
    ``location`` is the folder holding the manifest and code, when there is one.
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
        return self.descriptor.id

    @property
    def family(self) -> Family:
        return self.descriptor.family

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
