"""One setting names the embedder: minilm (default), hashing, OpenAI-compatible, Ollama."""

from __future__ import annotations

import pytest

from plugyard.discovery.choose import embedder_from_spec
from plugyard.discovery.embedders import HashingEmbedder
from plugyard.discovery.remote import OllamaEmbedder, OpenAIEmbedder


def test_hashing_with_and_without_a_width() -> None:
    assert isinstance(embedder_from_spec("hashing"), HashingEmbedder)
    assert embedder_from_spec("hashing:64").dim == 64


def test_openai_splits_the_url_from_the_model_at_the_last_colon() -> None:
    emb = embedder_from_spec("openai:http://127.0.0.1:8000/v1:bge-small", api_key="k")
    assert isinstance(emb, OpenAIEmbedder)
    assert (emb.base_url, emb.model) == ("http://127.0.0.1:8000/v1", "bge-small")


def test_ollama_keeps_a_tagged_model_name_whole() -> None:
    emb = embedder_from_spec("ollama:nomic-embed-text:latest", ollama_url="10.0.0.5:11434")
    assert isinstance(emb, OllamaEmbedder)
    assert (emb.model, emb.base_url) == ("nomic-embed-text:latest", "http://10.0.0.5:11434")
    assert embedder_from_spec("ollama:m").base_url == "http://127.0.0.1:11434"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "spec",
    [
        "bogus",
        "hashing:0",
        "hashing:wide",
        "openai:bge",
        "openai:ftp://x:m",
        "ollama:",
        "minilm:fp16",
    ],
)
def test_a_malformed_setting_says_what_is_wrong(spec: str) -> None:
    with pytest.raises(ValueError, match=r"unknown|expected|needs"):
        embedder_from_spec(spec)
