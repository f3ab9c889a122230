"""A small catalog of registered plugins, and an embedder that counts its work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plugyard.discovery.embedders import HashingEmbedder, Vectors
from plugyard.discovery.service import DiscoveryService
from plugyard.discovery.vector_store import VectorRepository
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry


class CountingEmbedder(HashingEmbedder):
    """Hashing vectors, counting the texts embedded (queries included)."""

    def __init__(self, dim: int = 128) -> None:
        super().__init__(dim=dim)
        self.texts = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += len(texts)
        return super().embed(texts)


def _op(op_id: str, description: str, **params: str) -> dict[str, Any]:
    return {
        "id": op_id,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {k: {"type": "string", "description": v} for k, v in params.items()},
        },
    }


DESCRIPTORS: dict[str, dict[str, Any]] = {
    "weather": {
        "name": "Weather",
        "description": "Weather forecasts and current conditions for any city.",
        "tags": ["climate"],
        "placement": {"capabilities": ["MODEL"]},
        "operations": [
            _op("forecast", "Forecast the next days of rain, wind and temperature.", city="City"),
            _op("current", "Current temperature and humidity.", city="City name"),
        ],
    },
    "stocks": {
        "name": "Stock Market",
        "description": "Share prices and company news.",
        "operations": [
            _op("quote", "Latest share price for a ticker symbol.", ticker="Ticker, e.g. AAPL"),
            _op("news", "Recent news articles about a company.", ticker="Ticker symbol"),
        ],
    },
    "pdf-reader": {
        "name": "PDF Reader",
        "description": "Extracts the text and tables of PDF documents.",
        "operations": [_op("execute", "", path="Path of the PDF file")],
    },
    "notes-kb": {
        "name": "Notes Retriever",
        "family": "kb",
        "description": "Retrieves knowledge units from meeting notes.",
        "operations": [_op("retrieve", "Retrieve notes relevant to a prompt.", prompt="Task")],
    },
    "observer": {
        "name": "Observer",
        "description": "Records what flows through a pipeline, unchanged.",
        "placement": {"capabilities": ["ALL"]},
        "operations": [_op("execute", "Pass the payload on.", payload="Anything")],
    },
    "legacy-translate": {
        "name": "Legacy Translator",
        "description": "Translates text between languages (a Java class, descriptor only).",
    },
}


def descriptor(plugin_id: str, **changes: Any) -> PluginDescriptor:
    data = {"id": plugin_id, **DESCRIPTORS[plugin_id], **changes}
    return PluginDescriptor.model_validate(data, strict=False)


def registered(plugin_id: str, **changes: Any) -> RegisteredPlugin:
    return RegisteredPlugin.of(descriptor(plugin_id, **changes), "catalog")


def registry(*ids: str) -> Registry:
    reg = Registry()
    reg.register_many([registered(i) for i in ids or DESCRIPTORS])
    return reg


def service(
    reg: Registry | None = None,
    embedder: HashingEmbedder | None = None,
    vectors: VectorRepository | None = None,
) -> DiscoveryService:
    svc = DiscoveryService(
        reg if reg is not None else registry(),
        embedder or CountingEmbedder(),
        vectors,
    )
    svc.start()
    return svc
