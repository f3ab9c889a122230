"""A Shu plugin that runs in plugyard's Python worker (a package with ``vendor/``, or an
untrusted one in the sandbox) keeps its Python contract: get_schema, get_output_schema,
requires_permission and list_actions are asked of the worker when it is described and
enforced as in-process (output validation, x-binding, permissions, actions), and its host
calls reach host.kb and host.query over the pipe — bytes included."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.governance.admin import context_for
from plugyard.manifest.model import SubprocessRuntime
from plugyard.runtimes.base import CallContext
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.types import Caller
from plugyard.yard import Settings, Yard
from registry.packages.zips import build

MANIFEST = """
name: worker_kb
version: 1.0.0
entrypoints:
  worker_kb: worker_kb.plugin:Plugin
capabilities: [kb, identity]
"""
CODE = """
import tinylib


class Plugin:
    def get_schema(self):
        return {"type": "object", "required": ["op"], "properties": {
            "op": {"type": "string", "enum": ["ingest", "find", "bad"]},
            "text": {"type": "string"},
            "who": {"type": "string", "x-binding": "identity:google_email"}}}

    def get_output_schema(self):
        return {"type": "object", "required": ["kind"]}

    def requires_permission(self):
        return "plugin:worker_kb"

    async def list_actions(self):
        return [{"name": "archive", "description": "Archive one document",
                 "params_schema": {"type": "object", "required": ["id"],
                                   "properties": {"id": {"type": "string"}}}}]

    async def perform_action(self, name, args, context, host):
        return {"status": "ok", "action_id": "x",
                "result": {"archived": args["id"], "key": context["idempotency_key"]}}

    async def execute(self, params, context, host):
        if params["op"] == "ingest":
            done = await host.kb.ingest_document(
                "wk", file_bytes=params["text"].encode(), filename="a.txt", source_id="s1")
            return {"kind": tinylib.KIND, "ko_id": done["ko_id"], "who": params.get("who")}
        if params["op"] == "find":
            found = await host.query.search("wk", params["text"])
            return {"kind": "find", "hits": len(found["results"])}
        return {"no": "kind"}
"""
POLICY = """
subjects: {bob: {roles: [clerk], permissions: ["plugin:worker_kb"]}}
grants: [{to: "role:clerk", plugin: "*", effect: allow}]
"""


def files() -> dict[str, str]:
    return {
        "manifest.yaml": MANIFEST,
        "worker_kb/__init__.py": "",
        "worker_kb/plugin.py": CODE,
        "vendor/tinylib/__init__.py": "KIND = 'ingest'\n",
    }


@pytest.fixture(params=["trusted", "untrusted"])
def yard(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Yard]:
    if request.param == "untrusted" and unavailable_reason() is not None:
        pytest.skip("no bubblewrap here")
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    with Yard.from_settings(settings) as opened:
        opened.admin.load_policy(POLICY, by="admin")
        opened.packages.install(build(files()), trust=request.param)  # type: ignore[arg-type]
        yield opened


def run(yard: Yard, operation: str | None, params: dict[str, Any], **context: Any) -> Any:
    async def go() -> Any:
        try:
            ctx = CallContext("r", subject="bob", roles=("clerk",), **context)
            return await yard.executor.call(CallRequest("worker_kb", operation, params, ctx))
        finally:
            await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    return asyncio.run(go())


def test_the_worker_describes_the_codes_contract(yard: Yard) -> None:
    plugin = yard.registry.require("worker_kb")
    assert isinstance(plugin.descriptor.runtime, SubprocessRuntime)
    execute = plugin.descriptor.operation("execute")
    assert execute is not None
    assert execute.parameters["required"] == ["op"]
    assert execute.output_schema == {"type": "object", "required": ["kind"]}
    assert plugin.descriptor.permissions == ("plugin:worker_kb",)
    archive = plugin.descriptor.operation("archive")
    assert archive is not None and archive.kind == "action"


def test_output_is_validated_and_bindings_filled_as_in_process(yard: Yard) -> None:
    bad = run(yard, "execute", {"op": "bad"})
    assert bad.error is not None and bad.error.code == "output_validation_error"
    unknown = run(yard, "execute", {"op": "nope"})
    assert unknown.error is not None and unknown.error.code == "invalid_parameters"
    done = run(
        yard,
        "execute",
        {"op": "ingest", "text": "worker words"},
        identities={"google_email": "bob@example.com"},
    )
    assert done.ok, done.error
    assert done.data["who"] == "bob@example.com" and done.data["ko_id"].startswith("ko_")
    found = run(yard, "execute", {"op": "find", "text": "worker words"})
    assert found.ok and found.data == {"kind": "find", "hits": 1}
    assert yard.knowledge.repository.objects("wk")[0].source_type == "plugin:worker_kb"


def test_actions_of_a_worker_plugin(yard: Yard) -> None:
    admin = yard.admin
    names = [a["name"] for a in admin.list_actions(Caller("bob", ("clerk",)))]
    assert names == ["archive"]

    async def go() -> Any:
        try:
            ctx = context_for("bob", ("clerk",), idempotency_key="k-9")
            return await admin.perform_action("worker_kb", "archive", {"id": "d1"}, ctx)
        finally:
            await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

    answer = asyncio.run(go())
    assert answer["status"] == "ok"
    assert answer["result"] == {"archived": "d1", "key": "k-9"}
