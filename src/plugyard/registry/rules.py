"""When a registration may take an id: the registry's rules, as one pure function.

The function runs inside the store's write transaction against the row the database
holds, so two hosts sharing a PostgreSQL store apply the rules to the same truth.
"""

from __future__ import annotations

from plugyard.errors import RegistryError
from plugyard.registry.versions import is_older
from plugyard.store.plugins import PluginRow


def admit(stored: PluginRow | None, incoming: PluginRow, *, replace: bool) -> bool:
    """Whether ``incoming`` is written over ``stored``; raises when it may not be.

    - a new id is admitted;
    - an identical entry is left alone (``False``: nothing to write, no event);
    - another origin — source kind or location — is ``duplicate_plugin``;
    - an older version than the stored one is ``version_conflict``.

    ``replace=True`` is the operator's override: it takes the id over from another
    origin and allows going back to an older version.
    """
    if stored is None:
        return True
    if stored.same_entry(incoming):
        return False
    if replace:
        return True
    if (stored.source, stored.location) != (incoming.source, incoming.location):
        where = f" at {stored.location}" if stored.location else ""
        raise RegistryError(
            f"plugin id {incoming.id!r} is already registered by source {stored.source!r}{where}",
            code="duplicate_plugin",
        )
    if is_older(incoming.version, stored.version):
        raise RegistryError(
            f"plugin {incoming.id!r} version {incoming.version!r} is older than the "
            f"registered {stored.version!r}",
            code="version_conflict",
        )
    return True
