"""The OpenAI-compatible HTTP backend (``POST {base_url}/chat/completions``).

It speaks to OpenAI, Ollama's ``/v1``, vLLM, llama.cpp's server and LM Studio alike.
The model layer may not import the runtimes beside it, so it does not take their
outbound client: it takes the outbound guard's socket factory instead, which the
composition root wires in (``Yard.llm``). Every socket is then judged on the address
it really connects to, and a model server on loopback or a private address answers
only when the operator's allowlist opens it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Mapping
from typing import Any, Protocol

import aiohttp

from plugyard.llm import wire
from plugyard.llm.errors import LlmError, context_exceeded, invalid_answer, timed_out, unavailable
from plugyard.llm.retry import RETRY_STATUSES, RetryPolicy, retry_after
from plugyard.llm.types import ChatAnswer, ChatRequest, Delta

MAX_ANSWER_BYTES = 4 * 1024 * 1024


class SocketFactory(Protocol):
    """aiohttp's ``TCPConnector(socket_factory=…)``: raise ``OSError`` to refuse."""

    def __call__(self, addr_info: tuple[Any, ...], /) -> socket.socket: ...


class _Refused(OSError):
    """The socket factory refused the address: no retry can change that."""


class OpenAIChatModel:
    """A :class:`~plugyard.llm.model.ChatModel` over HTTP."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key: str | None = None,
        socket_factory: SocketFactory | None = None,
        retry: RetryPolicy | None = None,
        continues: bool = False,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"the model server URL must be http(s), not {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key
        self._socket_factory = socket_factory
        self.retry = retry or RetryPolicy()
        #: The server continues an answer begun by the request (llama.cpp's does); off by
        #: default, since OpenAI's API starts a new message instead.
        self.continues = continues

    @property
    def identity(self) -> str:
        return f"openai:{self.base_url}:{self.model}"

    @property
    def name(self) -> str:
        return self.model

    def __repr__(self) -> str:  # the key stays out of logs
        return f"OpenAIChatModel({self.base_url!r}, {self.model!r})"

    # the two calls ------------------------------------------------------------------

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        started = time.perf_counter()
        body = json.dumps(wire.request_body(request, self.model)).encode()
        async with self._session() as session:
            payload, attempts = await self._post(session, body, request.deadline_s, started)
            raw = await _read_json(payload)
        return wire.answer_from(
            raw,
            request,
            model=self.model,
            duration_ms=(time.perf_counter() - started) * 1000,
            attempts=attempts,
        )

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:
        started = time.perf_counter()
        body = json.dumps(wire.request_body(request, self.model, stream=True)).encode()
        text: list[str] = []
        finish = "stop"
        async with self._session() as session:
            response, _ = await self._post(session, body, request.deadline_s, started)
            try:
                async for delta in _sse_deltas(response, started + request.deadline_s):
                    text.append(delta.text)
                    finish = delta.finish_reason or finish
                    yield delta
            except TimeoutError:
                raise timed_out(f"{self.identity} stopped streaming at the deadline") from None
            finally:
                response.release()
        if request.json_schema is not None:
            wire.checked_json("".join(text), request.json_schema, finish_reason=finish)

    # transport ----------------------------------------------------------------------

    def _session(self) -> aiohttp.ClientSession:
        # One session per call: a flow's calls take seconds each, so a pool saves little,
        # and nothing stays bound to an event loop that has ended (a CLI's asyncio.run).
        factory = self._socket_factory
        connector = aiohttp.TCPConnector(
            limit=4,
            socket_factory=_refusing(factory) if factory is not None else None,
            resolver=aiohttp.ThreadedResolver(),
        )
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        # trust_env=False: no proxy from the environment carries a request past the guard.
        return aiohttp.ClientSession(connector=connector, headers=headers, trust_env=False)

    async def _post(
        self, session: aiohttp.ClientSession, body: bytes, deadline_s: float, started: float
    ) -> tuple[aiohttp.ClientResponse, int]:
        """The first response that is not worth retrying, with the number of attempts;
        retried on 408/429/5xx and failed connections while the deadline allows."""
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            attempt += 1
            remaining = deadline_s - (time.perf_counter() - started)
            if remaining <= 0:
                raise timed_out(f"{self.identity} did not answer within {deadline_s} s")
            try:
                async with asyncio.timeout(remaining):
                    response = await session.post(url, data=body)
                    if response.status < 400:
                        return response, attempt
                    detail = (await response.content.read(2000)).decode("utf-8", "replace")
                    response.release()
            except TimeoutError:
                raise timed_out(
                    f"{self.identity} did not answer within {deadline_s} s", attempts=attempt
                ) from None
            except aiohttp.ClientConnectorError as exc:
                if isinstance(exc.os_error, _Refused):
                    raise LlmError(
                        f"{self.base_url} is not open to outbound connections: {exc.os_error}"
                        " (an operator allowlist entry opens a local model server)",
                        code="outbound_blocked",
                    ) from None
                status, detail, wait_hint = 0, str(exc), None
            except aiohttp.ClientError as exc:
                status, detail, wait_hint = 0, str(exc), None
            else:
                status, wait_hint = (
                    response.status,
                    retry_after(response.headers.get("Retry-After")),
                )
            retryable = status == 0 or status in RETRY_STATUSES
            wait = self.retry.delay(attempt, wait_hint)
            left = deadline_s - (time.perf_counter() - started)
            if not retryable or attempt >= self.retry.attempts or wait >= left:
                raise _failure(self.identity, status, detail, attempt)
            await asyncio.sleep(wait)


#: How servers say a prompt is over the context window: llama.cpp's error type, OpenAI's
#: (and vLLM's) error code.
_TOO_LONG = ("exceed_context_size_error", "context_length_exceeded")


def _failure(identity: str, status: int, detail: str, attempts: int) -> LlmError:
    if status == 0:
        return unavailable(f"{identity} is unreachable: {detail}", attempts=attempts)
    if status == 400 and any(marker in detail for marker in _TOO_LONG):
        return context_exceeded(
            f"{identity}: the prompt is longer than the model's context window: {detail[:300]}",
            status=status,
            attempts=attempts,
        )
    return unavailable(
        f"{identity} answered HTTP {status}: {detail[:300]}",
        status=status,
        attempts=attempts,
    )


def _refusing(factory: SocketFactory) -> SocketFactory:
    def make(addr_info: tuple[Any, ...], /) -> socket.socket:
        try:
            return factory(addr_info)
        except OSError as exc:
            raise _Refused(str(exc)) from exc

    return make


async def _read_json(response: aiohttp.ClientResponse) -> Any:
    try:
        body = await response.content.read(MAX_ANSWER_BYTES + 1)
    finally:
        response.release()
    if len(body) > MAX_ANSWER_BYTES:
        raise invalid_answer("the model server's answer is larger than 4 MiB")
    try:
        return json.loads(body)
    except ValueError:
        raise invalid_answer(
            "the model server's answer is not JSON", body=body[:300].decode("utf-8", "replace")
        ) from None


async def _sse_deltas(response: aiohttp.ClientResponse, deadline: float) -> AsyncIterator[Delta]:
    """Server-sent events of ``chat.completion.chunk`` objects, up to ``[DONE]``.

    Each read is bounded by what is left of the deadline rather than one timeout around
    the loop, which would also cut into whatever the consumer does between pieces."""
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            raise TimeoutError
        raw = await asyncio.wait_for(response.content.readline(), left)
        if not raw:
            return
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data:"):
            continue  # comments, keep-alives, event names
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            chunk: Mapping[str, Any] = json.loads(data)
        except ValueError:
            raise invalid_answer("a streamed chunk is not JSON", chunk=data[:300]) from None
        if isinstance(chunk, Mapping) and "error" in chunk:
            raise unavailable(f"the model server failed mid-stream: {chunk['error']}")
        delta = wire.delta_from(chunk)
        if delta is not None:
            yield delta
