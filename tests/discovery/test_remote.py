"""HTTP embedders against a fake server on loopback that speaks the real formats."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from plugyard.discovery.remote import EmbeddingServiceError, OllamaEmbedder, OpenAIEmbedder

REQUESTS: list[tuple[str, dict[str, object], str | None]] = []


def _vector(text: str) -> list[float]:
    # Unnormalised on purpose: the client must normalise.
    return [float(len(text)), 1.0, 2.0]


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        REQUESTS.append((self.path, body, self.headers.get("Authorization")))
        if self.path == "/v1/embeddings":
            data = [
                {"object": "embedding", "index": i, "embedding": _vector(t)}
                for i, t in enumerate(body["input"])
            ]
            data.reverse()  # servers may answer out of order; `index` decides
            answer: dict[str, object] = {"object": "list", "data": data, "model": body["model"]}
        elif self.path == "/api/embed":
            answer = {"model": body["model"], "embeddings": [_vector(t) for t in body["input"]]}
        elif self.path == "/bad/embeddings":
            answer = {"unexpected": True}
        else:
            self.send_error(404)
            return
        raw = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_openai_wire_format(server: str) -> None:
    REQUESTS.clear()
    emb = OpenAIEmbedder(server + "/v1", "text-embedding-3-small", api_key="k", batch_size=2)
    out = emb.embed(["a", "bbb", "cc"])
    assert out.shape == (3, 3) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-6)
    expected = np.array([1.0, 1.0, 2.0]) / np.sqrt(6.0)
    np.testing.assert_allclose(out[0], expected, rtol=1e-6)  # order restored by `index`
    assert [len(r[1]["input"]) for r in REQUESTS] == [2, 1]  # type: ignore[arg-type]
    path, body, auth = REQUESTS[0]
    assert path == "/v1/embeddings" and auth == "Bearer k"
    assert body["model"] == "text-embedding-3-small" and "dimensions" not in body
    assert emb.identity == f"openai:{server}/v1:text-embedding-3-small:3"


def test_ollama_wire_format_and_dim_probe(server: str) -> None:
    REQUESTS.clear()
    emb = OllamaEmbedder("nomic-embed-text", base_url=server)
    assert emb.dim == 3  # learnt with one probe request
    assert REQUESTS[0][0] == "/api/embed"
    assert emb.embed(["xy"]).shape == (1, 3)
    assert emb.identity.startswith("ollama:")


def test_malformed_answer_raises(server: str) -> None:
    emb = OpenAIEmbedder(server + "/bad", "m")
    with pytest.raises(EmbeddingServiceError):
        emb.embed(["a"])
    with pytest.raises(Exception, match="404"):
        OpenAIEmbedder(server + "/nowhere", "m").embed(["a"])
