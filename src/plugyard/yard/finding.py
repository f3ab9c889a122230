"""Plugin search for a yard: the discovery service, and what it learns from calls.

Discovery loads an embedding model, so it is built on first use and nothing else in
the yard waits for it; a call that names a search reaches it only if a search ran.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from plugyard.deferred import built, part
from plugyard.discovery.query import Filters, Matches
from plugyard.errors import PlugyardError
from plugyard.registry.registry import Registry
from plugyard.store.store import Store
from plugyard.yard.settings import Settings

if TYPE_CHECKING:
    from plugyard.discovery.service import DiscoveryService

_log = logging.getLogger("plugyard.yard")


class Finding:
    """Search, tool definitions and learning over the yard's registry."""

    def __init__(self, settings: Settings, store: Store, registry: Registry) -> None:
        self.settings = settings
        self.store = store
        self.registry = registry

    @part
    def discovery(self) -> DiscoveryService:
        """Plugin search. The model loads when this is first read, and the index is
        built on the first search (or rebuild); from then on it follows the registry."""
        from plugyard.discovery.choose import embedder_from_spec
        from plugyard.discovery.learning import Learning, LearningSettings
        from plugyard.discovery.pgvector import dense_source_for, vectors_for
        from plugyard.discovery.remembered import SqlRememberedRepository
        from plugyard.discovery.service import DiscoveryService

        s = self.settings
        embedder = embedder_from_spec(s.embedder, api_key=s.embedder_api_key,
                                      ollama_url=s.ollama_url)  # fmt: skip
        learning = Learning(
            embedder,
            SqlRememberedRepository(self.store, embedder.dim),
            LearningSettings(
                enabled=s.discovery_learning,
                per_subject=s.discovery_learning_per_subject,
                quorum=s.discovery_learning_quorum,
                keep=s.discovery_learning_keep,
                days=s.discovery_learning_days,
            ),
        )
        vectors = vectors_for(self.store, embedder.dim, ef_search=s.pgvector_ef_search)
        source = dense_source_for(vectors, embedder.identity)
        return DiscoveryService(self.registry, embedder, vectors, learning, dense_source=source)

    def search(
        self,
        query: str,
        k: int = 5,
        filters: Filters | None = None,
        *,
        subject: str | None = None,
    ) -> Matches:
        """The ``k`` plugins that best match ``query`` (docs/discovery.md), with the
        ``search_id`` that a call or :meth:`feedback` by ``subject`` names."""
        return self.discovery.search(query, k, filters, subject=subject)

    def tools_for(
        self,
        query: str,
        k: int = 5,
        format: str = "openai",
        filters: Filters | None = None,
        *,
        strict: bool = False,
    ) -> list[dict[str, Any]]:
        """Function-calling definitions of the operations ``search`` finds; ``strict``
        gives OpenAI's strict-mode definitions (docs/tools.md)."""
        return self.discovery.tools_for(query, k, format, filters, strict=strict)

    def learn_from_call(
        self, search_id: str, subject: str, plugin_id: str, operation: str | None
    ) -> None:
        """A call by ``subject`` that named ``search_id`` succeeded: let discovery
        remember the search's request for that operation (every call surface ends
        here)."""
        discovery = built(self, "discovery")
        if discovery is None:
            return  # no search ran in this process, so no search id can be known
        try:
            discovery.accepted(search_id, subject, plugin_id, operation)
        except PlugyardError as exc:
            # The call succeeded; failing to learn from it must not fail it.
            _log.warning("discovery did not learn from a call: %s", exc)


@dataclass(frozen=True)
class Teacher:
    """The routing flow's way to let discovery learn (routing.retrieve.Teacher)."""

    finding: Finding

    def search(self, query: str, k: int, filters: Filters, subject: str) -> Matches:
        return self.finding.search(query, k, filters, subject=subject)

    def accepted(self, search_id: str, subject: str, plugin_id: str, operation: str) -> None:
        self.finding.learn_from_call(search_id, subject, plugin_id, operation)
