"""A scripted OpenAI-compatible server on loopback, for tests.

It serves the real wire format (``POST /v1/chat/completions``, whole or as server-sent
events), so a test exercises the HTTP backend itself rather than a stand-in. Each
request takes the next scripted :class:`Reply` (or the script is a function of the
request body); every request is recorded. Failures are scripted too: an HTTP status
(429, 500 …), a body that is not JSON, a server that never answers.

    async with FakeModelServer([Reply.json({"tool": "weather"})]) as fake:
        model = OpenAIChatModel(fake.base_url, "fake")
        answer = await model.chat(request)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass(frozen=True, slots=True)
class Reply:
    """What the fake answers to one request."""

    content: str = ""
    status: int = 200
    finish_reason: str = "stop"
    tool_calls: tuple[Mapping[str, Any], ...] = ()
    raw_body: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    hang: bool = False
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    #: Per generated token, its alternatives and their log-probabilities, sent as
    #: OpenAI's ``logprobs`` when the request asks for them.
    top_logprobs: tuple[Mapping[str, float], ...] = ()

    @classmethod
    def text(cls, content: str, **options: Any) -> Reply:
        return cls(content=content, **options)

    @classmethod
    def json(cls, value: Any, **options: Any) -> Reply:
        return cls(content=json.dumps(value), **options)

    @classmethod
    def scored(cls, alternatives: Mapping[str, float], **options: Any) -> Reply:
        """A one-token answer, the likeliest of ``alternatives`` (token → logprob)."""
        best = max(alternatives, key=lambda token: alternatives[token])
        return cls(content=best, top_logprobs=(dict(alternatives),), **options)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any]) -> Reply:
        call = {
            "id": f"call_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        return cls(tool_calls=(call,), finish_reason="tool_calls")

    @classmethod
    def choice(cls, tool: str, calls: int = 1, **options: Any) -> Reply:
        """The first answer of llm/calls.py's protocol: the tool chosen (or ``none``)."""
        return cls.json({"tool": tool, "calls": 0 if tool == "none" else calls}, **options)

    @staticmethod
    def offered(body: Mapping[str, Any]) -> list[str]:
        """The tools a request of that protocol's first step offers (its choices)."""
        form = body.get("response_format") or {}
        schema = (form.get("json_schema") or {}).get("schema") or {}
        names = ((schema.get("properties") or {}).get("tool") or {}).get("enum") or []
        return [n for n in names if n != "none"]

    @classmethod
    def calls(cls, *calls: tuple[str, Mapping[str, Any]]) -> Reply:
        """Its second answer: the calls, as the schema built from the tools asks."""
        return cls.json([{"name": name, "arguments": dict(args)} for name, args in calls])

    @classmethod
    def error(cls, status: int, *, retry_after: float | None = None) -> Reply:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        body = json.dumps({"error": {"message": f"scripted {status}", "code": status}})
        return cls(status=status, raw_body=body.encode(), headers=headers)

    @classmethod
    def garbage(cls) -> Reply:
        return cls(raw_body=b"<html>not json</html>")

    @classmethod
    def never(cls) -> Reply:
        """No answer until the server stops: the client's deadline must end the wait."""
        return cls(hang=True)


Script = Iterable[Reply] | Callable[[Mapping[str, Any]], Reply]


class FakeModelServer:
    """An async context manager: a loopback server on a free port while it is open."""

    def __init__(self, script: Script, *, model: str = "fake-model") -> None:
        self._next: Callable[[Mapping[str, Any]], Reply]
        if callable(script):
            self._next = script
        else:
            replies = iter(list(script))
            self._next = lambda _body: next(replies, Reply.error(500))
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._stopping = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeModelServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        self._runner = web.AppRunner(app, handle_signals=False)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def __aexit__(self, *_: object) -> None:
        self._stopping.set()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        reply = self._next(body)
        if reply.hang:
            await self._stopping.wait()
            return web.Response(status=503)
        if reply.raw_body is not None:
            return web.Response(
                status=reply.status,
                body=reply.raw_body,
                headers=dict(reply.headers),
                content_type="application/json" if reply.status != 200 else "text/html",
            )
        usage = self._usage(body, reply)
        if body.get("stream"):
            return await self._stream(request, reply, usage)
        message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_calls:
            message["tool_calls"] = list(reply.tool_calls)
        choice: dict[str, Any] = {"index": 0, "message": message,
                                  "finish_reason": reply.finish_reason}  # fmt: skip
        if body.get("logprobs") and reply.top_logprobs:
            choice["logprobs"] = {"content": [_logprobs(alts) for alts in reply.top_logprobs]}
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "model": self.model,
                "choices": [choice],
                "usage": usage,
            }
        )

    async def _stream(
        self, request: web.Request, reply: Reply, usage: dict[str, int]
    ) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            event = {
                "object": "chat.completion.chunk",
                "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(event)}\n\n".encode()

        await response.write(chunk({"role": "assistant"}))
        for piece in _pieces(reply.content):
            await response.write(chunk({"content": piece}))
        await response.write(chunk({}, reply.finish_reason))
        tail = {"object": "chat.completion.chunk", "choices": [], "usage": usage}
        await response.write(f"data: {json.dumps(tail)}\n\ndata: [DONE]\n\n".encode())
        await response.write_eof()
        return response

    @staticmethod
    def _usage(body: Mapping[str, Any], reply: Reply) -> dict[str, int]:
        # Rough counts (4 characters a token) unless scripted: enough to test accounting.
        prompt = reply.prompt_tokens
        if prompt is None:
            prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4
        completion = reply.completion_tokens
        if completion is None:
            completion = max(1, len(reply.content) // 4)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }


@contextlib.contextmanager
def in_thread(script: Script, *, model: str = "fake-model") -> Iterator[FakeModelServer]:
    """The fake on an event loop of its own, in a thread, for synchronous code (a test
    that drives a server, a command, an SDK client): open while the block runs.

        with in_thread([Reply.text("hello")]) as fake:
            ...  # a model at fake.base_url
    """
    loop = asyncio.new_event_loop()
    fake = FakeModelServer(script, model=model)
    thread = threading.Thread(target=loop.run_forever, name="fake-model", daemon=True)
    thread.start()
    try:
        asyncio.run_coroutine_threadsafe(fake.__aenter__(), loop).result(timeout=30)
        yield fake
    finally:
        asyncio.run_coroutine_threadsafe(fake.__aexit__(), loop).result(timeout=30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        loop.close()


class ScriptedModel:
    """A fake in a thread that outlives one test: each test scripts its own replies
    (:meth:`script`) against a server or a yard built once. A request with no reply left
    gets ``otherwise``, by default an HTTP 400, which the HTTP backend does not retry.

        with ScriptedModel.running() as model:
            settings = Settings(llm=model.spec, outbound_allow=(model.allow,))
            model.script(Reply.text("hello"))
    """

    def __init__(self, otherwise: Reply | None = None) -> None:
        self.replies: list[Reply] = []
        self.otherwise = otherwise or Reply.error(400)
        self.fake: FakeModelServer | None = None

    @classmethod
    @contextlib.contextmanager
    def running(cls, otherwise: Reply | None = None) -> Iterator[ScriptedModel]:
        scripted = cls(otherwise)
        with in_thread(scripted) as fake:
            scripted.fake = fake
            yield scripted

    def __call__(self, body: Mapping[str, Any]) -> Reply:
        return self.replies.pop(0) if self.replies else self.otherwise

    def script(self, *replies: Reply) -> None:
        """The replies to the next requests, in order; forgets the requests so far."""
        self.replies[:] = replies
        self.requests.clear()

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self._fake.requests

    @property
    def spec(self) -> str:
        """The ``PLUGYARD_LLM`` setting of this model."""
        return f"openai:{self._fake.base_url}:{self._fake.model}"

    @property
    def allow(self) -> str:
        """The ``PLUGYARD_OUTBOUND_ALLOW`` entry that lets a yard reach it."""
        return f"127.0.0.1:{self._fake.port}"

    @property
    def _fake(self) -> FakeModelServer:
        if self.fake is None:
            raise RuntimeError("the scripted model is not running")
        return self.fake


def _logprobs(alternatives: Mapping[str, float]) -> dict[str, Any]:
    ranked = sorted(alternatives.items(), key=lambda item: -item[1])
    top = [{"token": token, "logprob": logprob} for token, logprob in ranked]
    return {"token": ranked[0][0], "logprob": ranked[0][1], "top_logprobs": top}


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]
