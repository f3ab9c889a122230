"""Shu's host as Shu's plugins call it — in process and in the sandboxed worker alike:
awaited services with Shu's keywords, ``fetch(method, url)``, the ``ExecuteContext``
attributes, ``identity.get_current_user_identity()``, ``host.kb``'s knowledge objects
and field searches; and the gate stays where it was."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.python.shuhost import ShuHost
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.yard import Settings, Yard
from registry.packages.zips import build

MANIFEST = """
name: shu_conventions
version: 1.0.0
entrypoints:
  shu_conventions: shu_conventions.plugin:Plugin
capabilities: [cache, storage, secrets, identity, kb, http]
secrets: [api_key]
"""
# Written as Shu's own plugins are (plugins/test_hostcaps, test_kowrite, shu_kb_search).
CODE = """
class Plugin:
    async def execute(self, params, context, host):
        op = params.get("op")
        if op == "host":
            await host.cache.set("c", {"n": 1}, ttl_seconds=60)
            safe = await host.cache.set_safe("d", 2, ttl_seconds=5)
            await host.storage.put("s", [1, 2], namespace="notes")
            return {
                "cached": await host.cache.get("c"),
                "missing": await host.cache.get("nothing"),
                "safe": safe,
                "stored": await host.storage.get("s", namespace="notes"),
                "elsewhere": await host.storage.get("s"),
                "secret": len(await host.secrets.get("api_key")),
                "who": host.identity.get_current_user_identity(),
                "user_id": context.user_id,
                "agent_key": getattr(context, "agent_key", None),
            }
        if op == "undeclared":
            await host.secrets.get("other_key")
        if op == "egress":
            await host.http.fetch("GET", "https://example.invalid/x", params={"q": 1})
        if op == "write":
            ko = {"type": "note", "external_id": "n-1", "title": "Otter note",
                  "content": "Otters hold hands while they sleep.", "attributes": {}}
            return {"ko_id": await host.kb.upsert_knowledge_object("notes", ko)}
        if op == "search":
            found = await host.kb.search_chunks(
                field="content", operator="icontains", value="OTTERS")
            docs = await host.kb.search_documents(
                field="title", operator="eq", value="Otter note")
            return {"chunks": found, "documents": docs}
        return {"op": op}
"""


def files() -> dict[str, str]:
    return {
        "manifest.yaml": MANIFEST,
        "shu_conventions/__init__.py": "",
        "shu_conventions/plugin.py": CODE,
    }


@pytest.fixture(params=["trusted", "untrusted"])
def yard(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Yard]:
    if request.param == "untrusted" and unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    with Yard.from_settings(settings) as opened:
        opened.packages.install(build(files()), trust=request.param)  # type: ignore[arg-type]
        opened.admin.set_secret("api_key", "s3cret", scope="system", owner=None, by="admin")
        yield opened


def run(yard: Yard, params: dict[str, Any]) -> Any:
    async def go() -> Any:
        try:
            context = CallContext(
                "r", subject="ana", roles=("admin",), identities={"email": "ana@example.com"}
            )
            request = CallRequest("shu_conventions", "execute", params, context)
            return await yard.executor.call(request)
        finally:
            await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    return asyncio.run(go())


def test_awaited_services_with_shus_keywords_and_the_execute_context(yard: Yard) -> None:
    result = run(yard, {"op": "host"})
    assert result.status == "success", result.error
    assert result.data == {
        "cached": {"n": 1},
        "missing": None,
        "safe": True,
        "stored": [1, 2],
        "elsewhere": None,  # a namespace is a key space of its own
        "secret": 6,  # read (its value would be redacted from the output)
        "who": {"user_id": "ana", "email": "ana@example.com"},
        "user_id": "ana",
        "agent_key": None,
    }


def test_the_gate_is_unchanged_behind_shus_spelling(yard: Yard) -> None:
    undeclared = run(yard, {"op": "undeclared"})
    assert undeclared.error is not None
    assert undeclared.error.code == "capability_not_granted"
    egress = run(yard, {"op": "egress"})  # fetch(method, url): still the egress allowlist
    assert egress.error is not None
    assert egress.error.code == "egress_denied"


def test_knowledge_objects_and_field_searches_of_bound_knowledge_bases(yard: Yard) -> None:
    written = run(yard, {"op": "write"})
    assert written.status == "success", written.error
    unbound = run(yard, {"op": "search"})
    assert unbound.data["chunks"]["error"]["code"] == "no_knowledge_bases"  # as Shu answers
    bound = run(yard, {"op": "search", "__host": {"kb": {"knowledge_base_ids": ["notes"]}}})
    chunks, documents = bound.data["chunks"], bound.data["documents"]
    assert chunks["total_results"] == 1
    assert chunks["results"][0]["ko_id"] == written.data["ko_id"]
    assert [d["title"] for d in documents["results"]] == ["Otter note"]


def test_shu_host_passes_the_gate_through() -> None:
    class Gate:
        def __getattr__(self, name: str) -> Any:
            raise PermissionError(name)

    with pytest.raises(PermissionError):
        ShuHost(Gate()).cache  # noqa: B018
    with pytest.raises(AttributeError):
        ShuHost(Gate())._host_secrets  # noqa: B018
