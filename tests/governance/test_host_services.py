"""The effects ledger of one call: what it wrote through the host decides whether its
idempotency key may be released after the call was stopped, or stays ``unknown``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.execution.host import CapabilityError
from plugyard.governance.host.services import Effects, Recorded
from plugyard.kb.cancel import Cancel
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.yard import Settings, Yard
from registry.packages.zips import build

POLICY = """
subjects: {bob: {roles: [clerk]}}
grants: [{to: "role:clerk", plugin: "*", effect: allow}]
"""
WRITES_THEN_HANGS = """
import asyncio


class Plugin:
    async def execute(self, params, context, host):
        if params.get("warm"):
            return {}
        host.storage.put("order", params["order"])
        await asyncio.sleep(600)
"""
HANGS = """
import asyncio


class Plugin:
    async def execute(self, params, context, host):
        if params.get("warm"):
            return {}
        await asyncio.sleep(600)
"""


def files(name: str, code: str) -> dict[str, str]:
    manifest = (
        f"name: {name}\nversion: 1.0.0\nentrypoints:\n  {name}: {name}.plugin:Plugin\n"
        "capabilities: [storage]\n"
    )
    return {"manifest.yaml": manifest, f"{name}/__init__.py": "", f"{name}/plugin.py": code}


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    with Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="admin")
        yield opened


def twice(yard: Yard, plugin: str) -> list[Any]:
    """The call cut by its deadline, then its retry under the same key. A first call
    without the key starts the plugin's worker, so that the cut call's deadline falls
    while its plugin runs, not while its sandbox is still being set up."""

    async def go() -> list[Any]:
        try:
            warm = CallContext("r0", subject="bob", roles=("clerk",))
            started = await yard.executor.call(CallRequest(plugin, None, {"warm": True}, warm))
            assert started.status == "success", started.error
            answers = []
            for ident in ("r1", "r2"):
                context = CallContext(ident, subject="bob", roles=("clerk",),
                                      idempotency_key="order-7")  # fmt: skip
                request = CallRequest(plugin, None, {"order": 7}, context, timeout_ms=1_500)
                answers.append(await yard.executor.call(request))
            return answers
        finally:
            await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    return asyncio.run(go())


def test_a_sandboxed_call_that_wrote_to_storage_before_its_deadline_leaves_its_key_unknown(
    yard: Yard,
) -> None:
    if unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    yard.packages.install(build(files("writer", WRITES_THEN_HANGS)), trust="untrusted")
    cut, retry = twice(yard, "writer")
    assert cut.status == "timeout", cut.error
    assert retry.error is not None and retry.error.code == "idempotency_unknown"


def test_a_sandboxed_call_stopped_before_writing_anything_frees_its_key(yard: Yard) -> None:
    """The retry runs again (and is cut again), rather than answering ``unknown``."""
    if unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    yard.packages.install(build(files("hanger", HANGS)), trust="untrusted")
    cut, retry = twice(yard, "hanger")
    assert cut.status == "timeout", cut.error
    assert retry.status == "timeout", retry.error


def test_a_trusted_in_process_call_cut_by_its_deadline_leaves_its_key_unknown(
    yard: Yard,
) -> None:
    """It wrote nothing through the host, but trusted code may act outside it."""
    yard.packages.install(build(files("hanger", HANGS)), trust="trusted")
    cut, retry = twice(yard, "hanger")
    assert cut.status == "timeout", cut.error
    assert retry.error is not None and retry.error.code == "idempotency_unknown"


def test_a_write_asked_for_after_the_call_ended_is_refused() -> None:
    effects = Effects()
    kept: dict[str, Any] = {}
    storage = Recorded(kept, "storage", frozenset({"setdefault"}), effects)
    storage.setdefault("a", 1)
    assert effects.close() == ("storage.setdefault",)
    with pytest.raises(CapabilityError) as refused:
        storage.setdefault("b", 2)
    assert refused.value.code == "cancelled"
    assert kept == {"a": 1}


def test_an_ingestion_past_its_point_of_no_return_counts_as_landed() -> None:
    effects = Effects()
    committed, stopped = Cancel(), Cancel()
    effects.track("kb.ingest")(committed)
    effects.track("kb.ingest")(stopped)
    committed.commit()
    assert effects.close() == ("kb.ingest",)
    assert stopped.cancelled and not committed.cancelled
    with pytest.raises(CapabilityError):
        effects.track("kb.ingest")(Cancel())
