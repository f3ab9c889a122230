"""Picking a chat model from one setting (``PLUGYARD_LLM``).

``embedded`` (the default) or ``embedded:<name>``
    A pinned GGUF model run in-process (docs/models.md); offline after set-up. ``<name>``
    is a file's name in the catalog or an alias: ``quality`` (the 1.5B model, installed
    when set-up is asked for it), ``fast`` (the 135M smoke model).
``openai:<base_url>:<model>``
    Any OpenAI-compatible ``/chat/completions`` server, e.g.
    ``openai:https://api.openai.com/v1:gpt-4o-mini`` or a vLLM, llama.cpp or LM Studio
    server; the key from ``PLUGYARD_LLM_API_KEY`` or ``OPENAI_API_KEY``.
``ollama:<model>``
    A local Ollama server's OpenAI endpoint (``OLLAMA_HOST`` or http://127.0.0.1:11434).
"""

from __future__ import annotations

from plugyard.llm.http import OpenAIChatModel, SocketFactory
from plugyard.llm.model import ChatModel
from plugyard.llm.pinned import ALIASES, CATALOG

DEFAULT = "embedded"


def llm_from_spec(
    spec: str | None,
    *,
    api_key: str | None = None,
    ollama_url: str | None = None,
    socket_factory: SocketFactory | None = None,
) -> ChatModel:
    """The chat model ``spec`` names; ``ValueError`` says what is wrong with it.

    ``socket_factory`` is the outbound guard's (the composition root passes it), so a
    server on loopback or a private address answers only when an operator opened it.
    Nothing is loaded or contacted here.
    """
    spec = (spec or DEFAULT).strip()
    kind, _, rest = spec.partition(":")
    if kind == "embedded":
        from plugyard.llm.embedded import EmbeddedChatModel

        if not rest:
            return EmbeddedChatModel()
        pinned = ALIASES.get(rest) or CATALOG.get(rest)
        if pinned is None:
            known = ", ".join([*ALIASES, *CATALOG])
            raise ValueError(f"unknown embedded model {rest!r}; one of {known}")
        return EmbeddedChatModel(pinned)
    if kind == "openai":
        base_url, sep, model = rest.rpartition(":")
        if not sep or not base_url.startswith(("http://", "https://")) or not model:
            raise ValueError(f"expected openai:<base_url>:<model>, got {spec!r}")
        return OpenAIChatModel(base_url, model, api_key=api_key, socket_factory=socket_factory)
    if kind == "ollama":
        if not rest:
            raise ValueError("expected ollama:<model>")
        url = ollama_url or "http://127.0.0.1:11434"
        if not url.startswith(("http://", "https://")):
            url = f"http://{url}"  # OLLAMA_HOST is often written as host:port
        return OpenAIChatModel(f"{url.rstrip('/')}/v1", rest, socket_factory=socket_factory)
    raise ValueError(
        f"unknown chat model {spec!r}; one of embedded, embedded:<name>, "
        "openai:<base_url>:<model>, ollama:<model>"
    )
