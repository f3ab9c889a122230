"""Embedders served over HTTP: OpenAI-compatible `/v1/embeddings` and Ollama.

Both re-normalise what the server returns: not every server does (Ollama's
older models do not), and the index relies on unit vectors. The width is
learnt from the first answer when not given, because `identity` must name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from plugyard.discovery.embedders import Vectors, l2_normalise


class EmbeddingServiceError(RuntimeError):
    """The service answered, but not with what the wire format promises."""


class _HttpEmbedder:
    _kind = "http"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        dim: int | None = None,
        batch_size: int = 64,
        timeout: float = 30.0,
        headers: dict[str, str] | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._dim = dim
        self._batch = batch_size
        self._client = client or httpx.Client(timeout=timeout, headers=headers or {})

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    @property
    def identity(self) -> str:
        return f"{self._kind}:{self.base_url}:{self.model}:{self.dim}"

    def _post(self, path: str, payload: dict[str, Any]) -> Any:
        response = self._client.post(self.base_url + path, json=payload)
        response.raise_for_status()
        return response.json()

    def _batch_vectors(self, texts: list[str]) -> list[list[float]]:  # pragma: no cover
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> Vectors:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self._batch):
            chunk = list(texts[start : start + self._batch])
            got = self._batch_vectors(chunk)
            if len(got) != len(chunk):
                raise EmbeddingServiceError(f"asked for {len(chunk)} vectors, got {len(got)}")
            rows.extend(got)
        if not rows:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        out = np.asarray(rows, dtype=np.float32)
        if out.ndim != 2 or (self._dim is not None and out.shape[1] != self._dim):
            raise EmbeddingServiceError(f"expected width {self._dim}, got shape {out.shape}")
        self._dim = int(out.shape[1])
        return l2_normalise(out)

    def close(self) -> None:
        self._client.close()


class OpenAIEmbedder(_HttpEmbedder):
    """Any server speaking OpenAI's embeddings API (OpenAI, vLLM, LiteLLM,
    llama.cpp, LM Studio...). `base_url` ends before `/embeddings`,
    e.g. ``https://api.openai.com/v1``."""

    _kind = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        dim: int | None = None,
        request_dimensions: bool = False,
        **kwargs: Any,
    ) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        super().__init__(base_url, model, dim=dim, headers=headers, **kwargs)
        # Only models that can shorten their output accept `dimensions`.
        self._request_dimensions = request_dimensions and dim is not None

    def _batch_vectors(self, texts: list[str]) -> list[list[float]]:
        payload: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._request_dimensions:
            payload["dimensions"] = self._dim
        body = self._post("/embeddings", payload)
        try:
            items = sorted(body["data"], key=lambda item: int(item["index"]))
            return [list(item["embedding"]) for item in items]
        except (KeyError, TypeError, ValueError) as exc:
            raise EmbeddingServiceError(f"unexpected /embeddings answer: {exc!r}") from exc


class OllamaEmbedder(_HttpEmbedder):
    """Ollama's batch endpoint `POST /api/embed` (Ollama >= 0.3)."""

    _kind = "ollama"

    def __init__(self, model: str, base_url: str = "http://127.0.0.1:11434", **kwargs: Any) -> None:
        super().__init__(base_url, model, **kwargs)

    def _batch_vectors(self, texts: list[str]) -> list[list[float]]:
        body = self._post("/api/embed", {"model": self.model, "input": texts, "truncate": True})
        try:
            return [list(v) for v in body["embeddings"]]
        except (KeyError, TypeError) as exc:
            raise EmbeddingServiceError(f"unexpected /api/embed answer: {exc!r}") from exc
