"""MRP-VM's conventions beside plugyard's protocol: typed plugins in JavaScript run in
plugyard's Node host as MRP-VM's loader loads them, and DS016 wrappers run as DS016 says
(JSON on stdin until EOF, the ``## Plugin Result`` document on stdout, exit codes)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.execution.executor import CallRequest
from plugyard.llm.types import ChatAnswer, ChatRequest, Delta, Usage
from plugyard.manifest.load import load_file
from plugyard.reasoning.bridge import ModelBridge
from plugyard.runtimes.base import CallContext, Target
from plugyard.runtimes.sandbox import unavailable_reason
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from plugyard.runtimes.subprocess.conventions import parse_result, read_result
from plugyard.yard import Settings, Yard
from runtimes.subprocess.helpers import call

FIXTURES = Path(__file__).parent / "fixtures" / "mrp"
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
DS003_CONTEXT = [
    "budgets", "conversation", "decomposer", "externalHelpers", "hookType",
    "kbRepositoryManager", "logger", "modelSettings", "parser", "requestId", "session",
]  # fmt: skip


@pytest.fixture
def yard(tmp_path: Path) -> Iterator[Yard]:
    shutil.copytree(FIXTURES, tmp_path / "plugins")
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False,
                        plugin_dirs=(tmp_path / "plugins",), governed=False)  # fmt: skip
    with Yard.from_settings(settings) as opened:
        yield opened


class Said:
    """A chat model that answers what it was asked, upper-cased."""

    identity = "said:upper"

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        text = request.messages[-1].content.upper()
        return ChatAnswer(text, "stop", Usage(3, 3), 1.0, "said-upper")

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:  # pragma: no cover
        raise NotImplementedError
        yield


def solve(yard: Yard, params: dict[str, Any], callbacks: dict[str, Any] | None = None) -> Any:
    context = CallContext("r-1", roles=("admin",), callbacks=callbacks or {})
    request = CallRequest("gs-echo-js", "solve", {"prompt": "p", **params}, context)
    return asyncio.run(yard.executor.call(request))


# ------------------------------------------------------------------ MRP-VM in Node


def test_a_plugin_json_beside_index_mjs_is_run_by_the_node_host() -> None:
    descriptor = load_file(FIXTURES / "gs-echo-js" / "plugin.json").plugins[0]
    runtime = descriptor.runtime
    assert runtime.kind == "subprocess" and runtime.command == "node"
    assert runtime.args == ("plugyard:mrp-host", "index.mjs")
    assert [op.id for op in descriptor.operations] == ["solve"]


@needs_node
def test_the_factory_gets_what_mrp_vms_loader_gives_and_the_call_the_ds003_context(
    yard: Yard,
) -> None:
    plugin = yard.registry.find("gs-echo-js")
    assert plugin is not None and plugin.available, plugin and plugin.unavailable_reason
    result = solve(yard, {"currentMessage": "hello"})
    assert result.status == "success", result.error
    assert result.data["responseMarkdown"] == "echo: hello"
    document = result.data["responseDocument"]
    assert {"entry", "llmBridge", "pluginsConfig", "typedPluginRegistry"} <= set(document["given"])
    assert document["entryModule"] == "index.mjs" and document["builtins"] is True
    assert document["registered"] is True
    assert document["context"] == DS003_CONTEXT and document["frozen"] is True
    assert document["helperOutputs"] == [] and document["said"] is None


@needs_node
def test_the_model_bridge_asks_the_calls_chat_model_over_the_pipe(yard: Yard) -> None:
    bridge = ModelBridge(lambda: Said(), 1, ("gs-fast",))  # type: ignore[arg-type,return-value]
    result = solve(yard, {"currentMessage": "is it on", "askModel": True}, {"llm": bridge})
    assert result.status == "success", result.error
    assert result.data["responseDocument"]["said"] == "IS IT ON"
    assert bridge.calls == 1 and bridge.model_names == ["said-upper"]


class Asked:
    """A chat model that answers with what the request asked of the answer's form."""

    identity = "asked:form"

    async def chat(self, request: ChatRequest) -> ChatAnswer:
        form = {"schema": request.json_schema, "max_tokens": request.max_tokens,
                "temperature": request.temperature}  # fmt: skip
        return ChatAnswer(json.dumps(form), "stop", Usage(3, 3), 1.0, "asked-form")

    async def stream(self, request: ChatRequest) -> AsyncIterator[Delta]:  # pragma: no cover
        raise NotImplementedError
        yield


@needs_node
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({"jsonSchema": {"type": "object", "required": ["verdict"]}},
         {"schema": {"type": "object", "required": ["verdict"]}}),
        ({"responseFormat": {"type": "json_schema", "json_schema": {"schema": {"type": "array"}}}},
         {"schema": {"type": "array"}}),
        ({"response_format": {"type": "json_object"}}, {"schema": {"type": "object"}}),
        ({"maxTokens": 64, "temperature": 0.5}, {"max_tokens": 64, "temperature": 0.5}),
        ({"maxTokens": "many", "temperature": -1, "responseFormat": "json"},
         {"schema": None, "max_tokens": 512, "temperature": 0.0}),
    ],
)  # fmt: skip
def test_the_plugins_own_answer_form_hints_reach_the_model_layer(
    yard: Yard, options: dict[str, Any], expected: dict[str, Any]
) -> None:
    bridge = ModelBridge(lambda: Asked(), 1, ())  # type: ignore[arg-type,return-value]
    params = {"currentMessage": "x", "askModel": True, "callOptions": options}
    result = solve(yard, params, {"llm": bridge})
    assert result.status == "success", result.error
    asked = json.loads(result.data["responseDocument"]["said"])
    assert {k: asked[k] for k in expected} == expected


@needs_node
def test_a_model_call_without_a_bridge_fails_the_call_not_the_worker(yard: Yard) -> None:
    refused = solve(yard, {"currentMessage": "x", "askModel": True})
    assert refused.status == "error" and refused.error.code == "capability_unavailable"
    assert "no model bridge" in refused.error.message
    assert solve(yard, {"currentMessage": "again"}).status == "success"


@needs_node
def test_a_bridge_past_its_calls_is_refused_with_budget_exceeded(yard: Yard) -> None:
    spent = ModelBridge(lambda: Said(), 0, ())  # type: ignore[arg-type,return-value]
    result = solve(yard, {"currentMessage": "x", "askModel": True}, {"llm": spent})
    assert result.status == "error" and result.error.code == "budget_exceeded"


@needs_node
def test_an_index_mjs_that_throws_on_import_is_refused_with_nodes_own_text(yard: Yard) -> None:
    plugin = yard.registry.find("gs-broken-js")
    assert plugin is not None and not plugin.available
    reason = plugin.unavailable_reason or ""
    assert reason.startswith("plugin_load_failed: ")
    assert "TypeError: gs-broken-js cannot start: the solver table is missing" in reason
    assert "mrp_host.mjs" not in reason  # the host's own frames are not the plugin's fault
    result = asyncio.run(yard.call("gs-broken-js", "solve", {"prompt": "x"}))
    assert result.status == "error" and result.error.code == "plugin_unavailable"


@needs_node
@pytest.mark.skipif(unavailable_reason() is not None, reason="no sandbox on this machine")
def test_an_untrusted_js_plugin_runs_in_the_sandbox(
    tmp_path: Path, runtime: SubprocessPluginRuntime
) -> None:
    folder = tmp_path / "gs-echo-js"
    shutil.copytree(FIXTURES / "gs-echo-js", folder)
    for path in (tmp_path, folder, *folder.iterdir()):
        mode = stat.S_IROTH | stat.S_IRGRP | (stat.S_IXOTH | stat.S_IXGRP if path.is_dir() else 0)
        os.chmod(path, path.stat().st_mode | mode)
    descriptor = load_file(folder / "plugin.json").plugins[0]
    target = Target(descriptor, str(folder), "untrusted", "js-untrusted")
    outcome = call(runtime, target, {"prompt": "p", "currentMessage": "boxed"})
    assert outcome.status == "success", outcome.error
    assert outcome.data["responseMarkdown"] == "echo: boxed"


# ------------------------------------------------------------------ DS016


def test_a_wrapper_with_ds016s_own_fields_speaks_ds016_and_one_without_plugyards() -> None:
    ds016 = load_file(FIXTURES / "ds016-verify" / "manifest.json").plugins[0]
    assert ds016.config["convention"] == "ds016"
    plain = load_file(Path(__file__).parents[3] / "examples/wrappers/node/manifest.json")
    assert plain.plugins[0].config["convention"] == "plugyard"


def test_ds016_input_goes_in_until_eof_and_the_result_document_comes_back(yard: Yard) -> None:
    plugin = yard.registry.find("ds016-verify")
    assert plugin is not None and plugin.available, plugin and plugin.unavailable_reason
    units = [{"title": "t1", "text": "a"}, {"title": "t2", "text": "b"}]
    result = asyncio.run(yard.call("ds016-verify", "solve", {"prompt": "x", "context": units}))
    assert result.status == "success", result.error
    assert result.data["status"] == "success" and result.data["confidence"] == "high"
    assert result.data["result"] == "x — checked against 2 unit(s)."


def test_a_ds016_exit_code_is_an_error_with_the_wrappers_stderr(yard: Yard) -> None:
    result = asyncio.run(yard.call("ds016-verify", "solve", {"prompt": "fail"}))
    assert result.status == "error" and result.error.code == "plugin_error"
    assert result.error.message == "cannot verify"
    assert result.error.details["wrapper_code"] == "SOLVER_ERROR"
    assert result.error.details["exit_code"] == 1


def test_a_ds016_wrapper_that_writes_nothing_is_a_stable_code_naming_the_convention(
    yard: Yard,
) -> None:
    result = asyncio.run(yard.call("ds016-silent", "solve", {"prompt": "x"}))
    assert result.status == "error" and result.error.code == "mrp_wrapper_no_result"
    assert result.error.details["convention"] == "ds016"


def test_ds016_exit_codes_and_documents_map_to_outcomes() -> None:
    assert read_result(3, b"", b"", "w").status == "timeout"
    assert read_result(2, b"", b'{"code":"PARSE_ERROR","message":"bad"}\n', "w").error.code == (
        "invalid_parameters"
    )
    said = read_result(0, b"noise\n## Plugin Result\nStatus: error\nResult: no\n", b"", "w")
    assert said.status == "error" and said.error.code == "plugin_error"
    assert read_result(0, b"Status: success\n", b"", "w").error.code == "mrp_wrapper_no_result"
    assert parse_result("## Plugin Result\nStatus: success\nOther: x\n# next\nResult: y") == {
        "Status": "success"
    }
