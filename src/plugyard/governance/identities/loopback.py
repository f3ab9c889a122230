"""A token endpoint on loopback that issues tokens: it proves ``host.auth``'s whole path
(a real HTTP exchange with the OAuth2 provider) in tests and examples, with no network.

It knows refresh tokens (each with the scopes it may grant and its account's address)
and issues an access token per grant; ``behaviour`` makes it misbehave: ``hang`` (no
answer until it is closed), ``lie`` (a 200 that is no token), ``refuse`` (HTTP 400).
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs

Behaviour = Literal["ok", "hang", "lie", "refuse"]


class LoopbackTokenServer:
    def __init__(
        self,
        accounts: Mapping[str, tuple[Sequence[str], str]] | None = None,
        *,
        codes: Mapping[str, str] | None = None,
        service_scopes: Sequence[str] = (),
    ) -> None:
        #: refresh token → (scopes it may grant, the account's address)
        self.accounts = {k: (tuple(s), t) for k, (s, t) in (accounts or {}).items()}
        #: authorisation code → refresh token it stands for
        self.codes = dict(codes or {})
        self.service_scopes = tuple(service_scopes)
        self.behaviour: Behaviour = "ok"
        self.requests: list[dict[str, str]] = []
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/token"

    def start(self) -> LoopbackTokenServer:
        self._thread.start()
        return self

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> LoopbackTokenServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def answer(self, form: dict[str, str]) -> tuple[int, Any]:
        grant = form.get("grant_type")
        asked = tuple(form.get("scope", "").split())
        if grant == "authorization_code":
            refresh = self.codes.get(form.get("code", ""))
            if refresh is None:
                return 400, {"error": "invalid_grant"}
            scopes, target = self.accounts[refresh]
            return 200, _token(scopes, target, refresh)
        if grant == "refresh_token":
            found = self.accounts.get(form.get("refresh_token", ""))
            if found is None:
                return 400, {"error": "invalid_grant"}
            scopes, target = found
            if not set(asked) <= set(scopes):
                return 400, {"error": "invalid_scope"}
            return 200, _token(asked or scopes, target, None)
        if grant == "client_credentials":
            if not set(asked) <= set(self.service_scopes):
                return 400, {"error": "invalid_scope"}
            return 200, _token(asked, form.get("subject"), None)
        return 400, {"error": "unsupported_grant_type"}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(min(length, 65536)).decode("utf-8", "replace")
                form = {k: v[0] for k, v in parse_qs(raw).items()}
                owner.requests.append(form)
                if owner.behaviour == "hang":
                    owner._released.wait()
                    return
                if owner.behaviour == "lie":
                    status, body = 200, {"token": "not-what-you-asked"}
                elif owner.behaviour == "refuse":
                    status, body = 400, {"error": "temporarily_unavailable"}
                else:
                    status, body = owner.answer(form)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

        return Handler


def _token(scopes: Sequence[str], target: str | None, refresh: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "access_token": "at-" + secrets.token_urlsafe(16),
        "token_type": "Bearer",
        "expires_in": 3600,
        "scope": " ".join(scopes),
    }
    if target:
        body["email"] = target
    if refresh:
        body["refresh_token"] = refresh
    return body
