"""A ``host.kb`` ingestion whose call's deadline passes is stopped: its extraction worker
(and the OCR under it) is killed, nothing it would have written lands, and the next call
of the same plugin — in-process or sandboxed, over the worker's pipe — works."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.kb.budgets import CageLimits
from plugyard.kb.cage import Cage, CagedExtractor
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.yard import Settings, Yard
from registry.packages.zips import build

from .documents import png_header
from .processes import HangingOcr, HangsOnceOcr, ends

MANIFEST = """
name: slow_kb
version: 1.0.0
entrypoints:
  slow_kb: slow_kb.plugin:Plugin
capabilities: [kb]
"""
CODE = """
import base64


class Plugin:
    async def execute(self, params, context, host):
        done = await host.kb.ingest_document(
            "box", file_bytes=base64.b64decode(params["data"]), filename=params["name"],
            source_id=params["name"])
        return {"ko_id": done["ko_id"], "chunks": done["chunk_count"]}
"""
POLICY = """
subjects: {bob: {roles: [clerk]}}
grants: [{to: "role:clerk", plugin: "slow_kb", effect: allow}]
"""
FILES = {"manifest.yaml": MANIFEST, "slow_kb/__init__.py": "", "slow_kb/plugin.py": CODE}


@pytest.fixture(params=["trusted", "untrusted"])
def yard(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Yard, HangingOcr]]:
    if request.param == "untrusted" and unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    ocr = HangingOcr(tmp_path)
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    with Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="admin")
        opened.packages.install(build(FILES), trust=request.param)  # type: ignore[arg-type]
        opened.knowledge.extractor = CagedExtractor(Cage(CageLimits(workers=1), ocr=ocr.spec))
        yield opened, ocr


def as_bob(request_id: str, **more: Any) -> CallContext:
    return CallContext(request_id, subject="bob", roles=("clerk",), **more)


def params(name: str, data: bytes) -> dict[str, Any]:
    import base64

    return {"name": name, "data": base64.b64encode(data).decode()}


def test_a_deadline_during_ingestion_stops_it_and_the_next_call_works(
    yard: tuple[Yard, HangingOcr],
) -> None:
    opened, ocr = yard

    async def go() -> list[Any]:
        try:
            call = opened.executor.call
            warm = await call(CallRequest("slow_kb", None, params("warm.txt", b"warm"),
                                          as_bob("r1"), timeout_ms=20_000))  # fmt: skip
            stuck = await call(CallRequest("slow_kb", None, params("scan.png", png_header(40, 20)),
                                           as_bob("r2"), timeout_ms=1_500))  # fmt: skip
            after = await call(CallRequest("slow_kb", None, params("next.txt", b"next words"),
                                           as_bob("r3"), timeout_ms=20_000))  # fmt: skip
            return [warm, stuck, after]
        finally:
            await opened.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    warm, stuck, after = asyncio.run(go())
    assert warm.status == "success", warm.error
    assert stuck.status == "timeout", stuck.error
    assert ends(ocr.pid())
    repository = opened.knowledge.repository
    assert repository.find("box", "scan.png") is None
    assert after.status == "success", after.error
    assert repository.find("box", "next.txt") is not None


def test_an_over_budget_document_is_refused_through_the_host_and_nothing_is_stored(
    yard: tuple[Yard, HangingOcr],
) -> None:
    opened, _ = yard

    async def go() -> Any:
        try:
            request = CallRequest("slow_kb", None, params("blank.png", png_header(20_000, 20_000)),
                                  as_bob("r1"), timeout_ms=20_000)  # fmt: skip
            return await opened.executor.call(request)
        finally:
            await opened.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    refused = asyncio.run(go())
    assert refused.status == "error" and refused.error is not None
    assert refused.error.code == "document_too_complex"
    details = refused.error.details
    assert (details["budget"], details["value"], details["limit"]) == (
        "image_pixels",
        400_000_000,
        40_000_000,
    )
    assert opened.knowledge.repository.find("box", "blank.png") is None
    assert os.getpid() not in opened.knowledge.extractor.cage.pids  # type: ignore[attr-defined]


def test_the_yard_reads_documents_in_a_cage_under_the_budgets_of_its_settings(
    tmp_path: Path,
) -> None:
    env = {
        "PLUGYARD_KB_MAX_PAGES": "50",
        "PLUGYARD_KB_MAX_XML_NODES": "7000",
        "PLUGYARD_KB_WORKER_MEMORY_MB": "512",
        "PLUGYARD_KB_WORKER_CPU_S": "5.5",
        "PLUGYARD_KB_WORKERS": "3",
    }
    settings = Settings.from_env(env, database=str(tmp_path / "y.db"), builtins=False)
    assert (settings.kb_budgets.pages, settings.kb_budgets.xml_nodes) == (50, 7000)
    assert settings.kb_budgets.image_pixels == 40_000_000  # the default
    assert (settings.kb_cage.memory_mb, settings.kb_cage.cpu_s) == (512, 5.5)
    assert settings.kb_cage.workers == 3
    with Yard.from_settings(replace(settings, embedder="hashing")) as opened:
        extractor = opened.knowledge.extractor
        assert isinstance(extractor, CagedExtractor)
        assert extractor.budgets == settings.kb_budgets
        assert extractor.cage.limits == settings.kb_cage
        assert extractor.cage.pids == []  # spawned when first needed


def test_a_sandboxed_ingestion_cut_by_its_deadline_frees_its_key_and_the_retry_runs_once(
    tmp_path: Path,
) -> None:
    """Stopped in a sandbox, and nothing written: the key is released, not ``unknown``;
    the retry under it ingests one version, and a retry after that is a replay."""
    if unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    ocr = HangsOnceOcr(tmp_path)
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    with Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="admin")
        opened.packages.install(build(FILES), trust="untrusted")
        opened.knowledge.extractor = CagedExtractor(Cage(CageLimits(workers=1), ocr=ocr.spec))
        scan = params("scan.png", png_header(40, 20))

        async def go() -> list[Any]:
            try:
                call = opened.executor.call
                # The plugin's worker and the cage's are started first, so that the cut
                # call's deadline falls while the OCR hangs, not while they start.
                warm = await call(CallRequest("slow_kb", None, params("warm.txt", b"warm"),
                                              as_bob("r0"), timeout_ms=20_000))  # fmt: skip
                assert warm.status == "success", warm.error
                answers = []
                for ident, timeout_ms in (("r1", 1_500), ("r2", 20_000), ("r3", 20_000)):
                    context = as_bob(ident, idempotency_key="scan-1")
                    answers.append(await call(CallRequest("slow_kb", None, scan, context,
                                                          timeout_ms=timeout_ms)))  # fmt: skip
                return answers
            finally:
                await opened.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

        cut, retry, again = asyncio.run(go())
        assert cut.status == "timeout", cut.error
        assert ends(ocr.pid())
        assert retry.status == "success", retry.error
        assert again.status == "success" and again.data == retry.data
        assert ocr.count() == 2  # the cut run and the retry; the replay ran nothing
        objects = [
            o for o in opened.knowledge.repository.objects("box") if o.source_id == "scan.png"
        ]
        assert len(objects) == 1
        assert objects[0].created_at == objects[0].updated_at  # one version
        assert opened.governance is not None
        released = [r for r in opened.governance.audit.tail(50) if r.request_id == "r1"]
        assert released and released[-1].detail == {
            "idempotency": "released",
            "reason": "stopped; nothing landed",
        }
