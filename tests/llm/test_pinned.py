"""Model files are loaded only with the digest plugyard pins."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import pytest

from plugyard.llm import ChatRequest, LlmError
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import PinnedModel, sha256_of, verified


def _file(tmp_path: Path, content: bytes) -> tuple[Path, str]:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


def test_the_pinned_digest_lets_the_file_through(tmp_path: Path) -> None:
    path, digest = _file(tmp_path, b"GGUF weights")
    assert verified(path, digest) == path


def test_another_digest_is_refused(tmp_path: Path) -> None:
    path, _ = _file(tmp_path, b"GGUF weights")
    with pytest.raises(LlmError, match="refusing to load") as caught:
        verified(path, "0" * 64, name="tiny")
    assert caught.value.code == "llm_unavailable"
    assert caught.value.details["expected"] == "0" * 64


def test_a_changed_file_is_hashed_again(tmp_path: Path) -> None:
    path, digest = _file(tmp_path, b"GGUF weights")
    assert sha256_of(path) == digest
    path.write_bytes(b"GGUF other weights")
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    with pytest.raises(LlmError):
        verified(path, digest)


def test_a_missing_package_is_unavailable() -> None:
    absent = PinnedModel("absent", "plugyard-no-such-model", "x.gguf", "0" * 64, 1, "none")
    with pytest.raises(LlmError, match="not installed") as caught:
        absent.locate()
    assert caught.value.code == "llm_unavailable"


def test_the_embedded_model_refuses_a_file_off_its_pin(tmp_path: Path) -> None:
    path, _ = _file(tmp_path, b"not the reviewed weights")
    pinned = PinnedModel("tiny", "plugyard-no-such-model", "x.gguf", "0" * 64, 1, "none")
    model = EmbeddedChatModel(pinned, path=path)
    with pytest.raises(LlmError) as caught:
        asyncio.run(model.chat(ChatRequest.of(("user", "hi"))))
    assert caught.value.code == "llm_unavailable"
    assert model.identity == "embedded:tiny"
