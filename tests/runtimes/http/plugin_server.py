"""A tiny external plugin server for the tests: standard library only, run in a
subprocess on loopback. It prints ``PORT <n>`` once it listens.

Routes: ``GET /health`` (answers 503 while unhealthy), ``POST /control`` (set
``healthy``), ``POST /echo`` (the JSON body back), ``GET /add?a=&b=``, ``POST
/envelope`` (a Shu result envelope), ``POST /fail`` (HTTP 500), ``POST /garbage`` (a
body that says JSON and is not), ``POST /text`` (text/plain), ``POST /hang`` (never
answers), ``POST /big`` (5 MiB), ``GET /redirect?to=URL`` (302 there).

HomeClaw's convention (a ``PluginRequest`` in, a ``PluginResult`` out), as HomeClaw's
time plugin answers it: ``POST /homeclaw/run`` dispatches on ``capability_id``
(``list_timezones``; ``echo`` and ``add``, whose answer is also in ``metadata``;
anything else tells the time zone asked for in ``capability_parameters``) and puts the
request it got in ``metadata``;
``POST /homeclaw/refuse`` answers ``success: false``; ``POST /homeclaw/bare`` answers
a result without ``success``.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

STATE = {"healthy": True, "calls": 0}
RELEASE = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: object) -> None:
        pass

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, value: object, status: int = 200) -> None:
        self._send(status, json.dumps(value).encode())

    def _body(self) -> object:
        size = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(size) if size else b""
        return json.loads(raw) if raw else None

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path == "/health":
            self._json({"ok": STATE["healthy"]}, 200 if STATE["healthy"] else 503)
        elif url.path == "/add":
            STATE["calls"] += 1
            self._json({"sum": float(query["a"][0]) + float(query["b"][0])})
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", query["to"][0])
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/stats":
            self._json(STATE)
        else:
            self._json({"error": "no route"}, 404)

    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        body = self._body()
        STATE["calls"] += 1
        if path == "/control":
            assert isinstance(body, dict)
            STATE.update(body)
            self._json(STATE)
        elif path == "/echo":
            self._json({"echo": body, "request_id": self.headers.get("X-Plugyard-Request-Id")})
        elif path == "/envelope":
            self._json({"status": "success", "data": {"got": body}, "cost": {"api_calls": 1}})
        elif path == "/homeclaw/run":
            assert isinstance(body, dict)
            params = body.get("capability_parameters") or {}
            capability = body.get("capability_id")
            metadata: dict[str, object] = {"request": body}
            if capability == "list_timezones":
                text = "Common timezones: UTC, Asia/Tokyo"
            elif capability == "echo":
                text, metadata["echo"] = json.dumps(params), params
            elif capability == "add":
                metadata["sum"] = float(params["a"]) + float(params["b"])
                text = str(metadata["sum"])
            else:
                text = f"12:00:00 ({params.get('timezone') or 'UTC'}, {params.get('format')})"
            self._json({"request_id": body.get("request_id"), "plugin_id": body.get("plugin_id"),
                        "success": True, "text": text, "error": None,
                        "metadata": metadata})  # fmt: skip
        elif path == "/homeclaw/refuse":
            self._json({"success": False, "text": "", "error": "no such city", "metadata": {}})
        elif path == "/homeclaw/bare":
            self._json({"text": "it is noon", "metadata": {}})
        elif path == "/fail":
            self._json({"error": "boom"}, 500)
        elif path == "/garbage":
            self._send(200, b"{not json at all")
        elif path == "/text":
            self._send(200, b"plain words", "text/plain; charset=utf-8")
        elif path == "/hang":
            RELEASE.wait(60)
            self._json({"late": True})
        elif path == "/big":
            self._send(200, b'"' + b"x" * (5 * 1024 * 1024) + b'"')
        else:
            self._json({"error": "no route"}, 404)


def main() -> None:
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
