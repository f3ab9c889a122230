"""The embedded backend: a GGUF model run in-process by llama.cpp (``xllamacpp``).

Offline once scripts/setup.sh has installed the model's package; nothing is fetched at
run time. The model is loaded once per process and shared; one thread by default,
because on a two-core machine shared with the server and its plugins a second thread
bought no steady speed-up and made generation slower and erratic under load (measured in
docs/llm.md). The request is the same OpenAI body the HTTP backend sends, handed
to llama.cpp's server core in-process, which turns a JSON schema into a grammar, so a
finished answer is always valid JSON.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from plugyard.llm import wire
from plugyard.llm.errors import LlmError, context_exceeded, timed_out, unavailable
from plugyard.llm.pinned import DEFAULT, PinnedModel, verified
from plugyard.llm.types import ChatAnswer, ChatRequest, Delta

DEFAULT_THREADS = 1
#: Tokens of prompt and answer together. A client may offer dozens of tools (BFCL's live
#: entries run to 7,000 tokens); the cache for 8,192 costs the 0.5B model about 70 MB
#: more than 2,048 did, and a short prompt is no slower (docs/llm.md).
DEFAULT_CONTEXT = 8192


@dataclass(frozen=True, slots=True)
class _Key:
    path: str
    threads: int
    context: int


_loaded: dict[_Key, Any] = {}
_load_lock = threading.Lock()


def _server(key: _Key) -> Any:
    """The process's one llama.cpp server core for ``key``, loaded on first use."""
    with _load_lock:
        found = _loaded.get(key)
        if found is not None:
            return found
        try:
            import xllamacpp  # type: ignore[import-untyped,import-not-found,unused-ignore]
        except ImportError:
            raise unavailable(
                "the embedded model needs the xllamacpp package (scripts/setup.sh installs it)"
            ) from None
        params = xllamacpp.CommonParams()
        params.model.path = key.path
        params.n_ctx = key.context
        params.n_parallel = 1
        params.cpuparams.n_threads = key.threads
        params.cpuparams_batch.n_threads = key.threads
        params.verbosity = -1
        params.warmup = False
        # The core also listens on a loopback port; a key nobody holds closes it, since
        # plugyard only calls it in-process.
        params.api_keys = [secrets.token_hex(32)]
        try:
            server = xllamacpp.Server(params)
        except Exception as exc:
            raise unavailable(f"llama.cpp could not load {key.path}: {exc}") from None
        _loaded[key] = server
        return server


class EmbeddedChatModel:
    """A :class:`~plugyard.llm.model.ChatModel` on a pinned local GGUF file."""

    #: llama.cpp continues a request's trailing assistant message under its grammar.
    continues = True

    def __init__(
        self,
        model: PinnedModel = DEFAULT,
        *,
        path: Path | None = None,
        threads: int = DEFAULT_THREADS,
        context: int = DEFAULT_CONTEXT,
    ) -> None:
        self.pinned = model
        self._path = path
        self.threads = threads
        self.context = context

    @property
    def identity(self) -> str:
        return f"embedded:{self.pinned.name}"

    @property
    def name(self) -> str:
        return self.pinned.name

    def load(self) -> None:
        """Check the file against its pin and load it now rather than on the first call."""
        self._core()

    def _core(self) -> Any:
        path = self._path or self.pinned.locate()
        checked = verified(path, self.pinned.sha256, name=self.pinned.name)
        return _server(_Key(str(checked), self.threads, self.context))

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        started = time.perf_counter()
        body = wire.request_body(request, self.pinned.name)
        try:
            async with asyncio.timeout(request.deadline_s):
                core = await asyncio.to_thread(self._core)
                raw = await asyncio.to_thread(_complete, core, body)
        except TimeoutError:
            # llama.cpp finishes the generation in its thread (max_tokens bounds it);
            # the caller is released at the deadline.
            raise timed_out(
                f"{self.identity} did not answer within {request.deadline_s} s"
            ) from None
        answer = wire.answer_from(
            raw,
            request,
            model=self.pinned.name,
            duration_ms=(time.perf_counter() - started) * 1000,
        )
        # llama.cpp reports the file's path as the model; the pinned name says more.
        return replace(answer, model=self.pinned.name)

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:
        body = wire.request_body(request, self.pinned.name, stream=True)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        done = object()
        stop = threading.Event()

        def on_chunk(chunk: Any) -> bool:
            loop.call_soon_threadsafe(queue.put_nowait, chunk)
            # True asks llama.cpp to stop generating: the consumer left or timed out.
            return stop.is_set()

        def produce(core: Any) -> None:
            try:
                _complete(core, body, on_chunk)
            except BaseException as exc:  # handed to the consumer, raised there
                loop.call_soon_threadsafe(queue.put_nowait, exc)
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, done)

        deadline = time.perf_counter() + request.deadline_s
        core = await asyncio.to_thread(self._core)
        worker = loop.run_in_executor(None, produce, core)
        text: list[str] = []
        finish = "stop"
        try:
            while True:
                left = deadline - time.perf_counter()
                try:
                    item = await asyncio.wait_for(queue.get(), max(left, 0.001))
                except TimeoutError:
                    raise timed_out(f"{self.identity} stopped streaming at the deadline") from None
                if item is done:
                    break
                if isinstance(item, BaseException):
                    raise item
                delta = wire.delta_from(item)
                if delta is not None:
                    text.append(delta.text)
                    finish = delta.finish_reason or finish
                    yield delta
        finally:
            stop.set()
        await worker
        if request.json_schema is not None:
            wire.checked_json("".join(text), request.json_schema, finish_reason=finish)


def _complete(core: Any, body: dict[str, Any], on_chunk: Any = None) -> Any:
    try:
        if on_chunk is None:
            raw = core.handle_chat_completions(body)
        else:
            raw = core.handle_chat_completions(body, on_chunk)
    except ValueError as exc:
        # llama.cpp refuses a request it cannot serve, e.g. a schema it cannot compile.
        raise LlmError(
            f"the embedded model refused the request: {exc}", code="invalid_request"
        ) from None
    if isinstance(raw, dict) and "error" in raw:
        error = raw["error"]
        if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
            raise context_exceeded(
                f"the prompt ({error.get('n_prompt_tokens')} tokens) is longer than the "
                f"model's context window ({error.get('n_ctx')} tokens)",
                prompt_tokens=error.get("n_prompt_tokens"),
                context=error.get("n_ctx"),
            )
        raise unavailable(f"the embedded model failed: {error}")
    return raw
