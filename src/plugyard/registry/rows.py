"""A registered plugin as a store row, and back."""

from __future__ import annotations

from typing import cast, get_args

from plugyard.errors import PlugyardError
from plugyard.manifest.model import DESCRIPTOR_STAMP, Family
from plugyard.registry.intake import check_family, descriptor_from_data
from plugyard.registry.model import RegisteredPlugin, SourceKind, Stored, Trust
from plugyard.store.plugins import PluginRow

_SOURCES: frozenset[str] = frozenset(get_args(SourceKind))
_TRUST: frozenset[str] = frozenset(get_args(Trust))


def to_row(plugin: RegisteredPlugin) -> PluginRow:
    return PluginRow(
        id=plugin.id,
        family=plugin.family,
        source=plugin.source,
        descriptor=plugin.descriptor.to_data(),
        content_hash=plugin.content_hash,
        version=plugin.descriptor.version,
        trust=plugin.trust,
        location=plugin.location,
        manifest_path=plugin.manifest_path,
        dialect=plugin.dialect,
        available=plugin.available,
        unavailable_reason=plugin.unavailable_reason,
        stamp=DESCRIPTOR_STAMP,
    )


def from_row(row: PluginRow) -> RegisteredPlugin:
    """Raises a :class:`PlugyardError` (``unsupported_type``, ``manifest_*``,
    ``plugin_load_error``) for a row this version of plugyard cannot read.

    A row written under this descriptor model (its ``stamp``) was validated when it was
    written: its descriptor is validated again only when first used, which saves most of
    a start's reading of the store. Any other row is validated here."""
    if row.stamp == DESCRIPTOR_STAMP:
        check_family(row.family)
        return RegisteredPlugin.stored(
            Stored(row.id, cast(Family, row.family), row.descriptor, descriptor_from_data),
            _source(row.source),
            content_hash=row.content_hash,
            trust=_trust(row.trust),
            location=row.location,
            manifest_path=row.manifest_path,
            dialect=row.dialect,
            available=row.available,
            unavailable_reason=row.unavailable_reason,
        )
    descriptor = descriptor_from_data(row.descriptor)
    return RegisteredPlugin(
        descriptor=descriptor,
        source=_source(row.source),
        content_hash=row.content_hash,
        trust=_trust(row.trust),
        location=row.location,
        manifest_path=row.manifest_path,
        dialect=row.dialect,
        available=row.available,
        unavailable_reason=row.unavailable_reason,
    )


def _source(value: str) -> SourceKind:
    if value not in _SOURCES:
        raise PlugyardError(f"unknown source kind {value!r}", code="plugin_load_error")
    return cast(SourceKind, value)


def _trust(value: str) -> Trust:
    if value not in _TRUST:
        raise PlugyardError(f"unknown trust {value!r}", code="plugin_load_error")
    return cast(Trust, value)
