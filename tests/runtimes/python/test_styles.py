"""The three styles of plugin code of the seeds load and run, sync, async and inline."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from plugyard.runtimes.base import Target
from plugyard.runtimes.python import InProcessRuntime, definition_of, tool

from .conftest import call, context, target, write

HOMECLAW_YAML = """
    id: weather
    name: Weather Plugin
    description: Current weather for a city.
    capabilities:
      - id: Fetch-Weather
        description: Returns current weather for a city.
        parameters:
          - {name: city, type: string}
          - {name: district, type: string, required: false}
      - id: fetch_forecast
        description: A forecast.
        parameters:
          - {name: city, type: string}
      - id: whoami
        description: Who calls.
      - id: loop_thread
        description: Which thread runs it.
"""


def homeclaw(folder: Path, code: str) -> Path:
    return write(folder, {"plugin.yaml": HOMECLAW_YAML, "plugin.py": code})


FUNCTIONS = """
    import threading

    def fetch_weather(city, district=None):
        return {"text": f"sunny in {city}", "district": district, "thread": threading.get_ident()}

    async def fetch_forecast(city):
        return [f"{city}: rain", f"{city}: sun"]

    def whoami(context, host, config):
        return {"request": context["request_id"], "host": host, "config": config}

    def loop_thread():
        return threading.get_ident()
    loop_thread.__plugyard_inline__ = True
"""


def test_functions_named_after_operations_get_keyword_arguments(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(homeclaw(tmp_path, FUNCTIONS))
    assert runtime.check(plugin) is None
    outcome = call(runtime, plugin, "Fetch-Weather", city="Rome")
    assert outcome.status == "success"
    assert outcome.data["text"] == "sunny in Rome"
    assert outcome.data["district"] is None


def test_async_functions_are_awaited(tmp_path: Path, runtime: InProcessRuntime) -> None:
    plugin = target(homeclaw(tmp_path, FUNCTIONS))
    assert call(runtime, plugin, "fetch_forecast", city="Oslo").data == ["Oslo: rain", "Oslo: sun"]


def test_context_host_and_config_are_passed_to_functions_that_ask(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(homeclaw(tmp_path, FUNCTIONS))
    assert call(runtime, plugin, "whoami").data == {"request": "test", "host": None, "config": {}}


def test_sync_functions_run_in_a_worker_thread_and_inline_ones_on_the_loop(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(homeclaw(tmp_path, FUNCTIONS))

    async def both() -> tuple[int, int, int]:
        loop_thread = threading.get_ident()
        threaded = await runtime.invoke(
            plugin, plugin.descriptor.operations[0], {"city": "x"}, context(), None
        )
        inline = await runtime.invoke(plugin, plugin.descriptor.operations[3], {}, context(), None)
        assert not hasattr(threaded, "__aiter__") and not hasattr(inline, "__aiter__")
        return loop_thread, threaded.data["thread"], inline.data  # type: ignore[union-attr]

    loop_thread, threaded, inline = asyncio.run(both())
    assert threaded != loop_thread
    assert inline == loop_thread


def test_a_blocked_sync_plugin_leaves_the_event_loop_free(runtime: InProcessRuntime) -> None:
    started, gate = threading.Event(), threading.Event()

    @tool
    def blocker() -> bool:
        started.set()
        return gate.wait(timeout=30)  # True only if the loop set the gate meanwhile

    definition = definition_of(blocker)
    assert definition is not None
    runtime.provide(blocker)
    plugin = Target(definition.descriptor)

    async def scenario() -> object:
        task = asyncio.create_task(
            runtime.invoke(plugin, definition.descriptor.operations[0], {}, context(), None)
        )
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, started.wait, 30)
        gate.set()  # the loop runs while the plugin blocks: it can open the gate
        return await task

    outcome = asyncio.run(scenario())
    assert outcome.data is True  # type: ignore[attr-defined]


SHU_MANIFEST = """
    name: shu_demo
    version: 1.0.0
    module: plugins.shu_demo.demo_pkg.plugin:DemoPlugin
    capabilities: [logger]
    chat_callable_ops: [echo]
"""
SHU_PLUGIN = """
    from .util import shout

    class ToolResult:
        def __init__(self, status, data=None, error=None, diagnostics=None):
            self.status, self.data, self.error = status, data, error
            self.diagnostics = diagnostics or []

    class DemoPlugin:
        def __init__(self, config=None):
            self.config = config

        def get_schema(self):
            return {"type": "object", "properties": {"op": {"enum": ["echo", "fail"]},
                    "text": {"type": "string"}}, "required": ["op"]}

        def get_output_schema(self):
            return {"type": "object", "properties": {"echo": {"type": "string"}}}

        def requires_permission(self):
            return "plugin:shu_demo"

        async def execute(self, params, context, host):
            if params["op"] == "fail":
                return ToolResult("error", error={"code": "QUOTA", "message": "over quota"})
            return ToolResult("success", {"echo": shout(params["text"])}, diagnostics=["ok"])
"""


def shu(folder: Path) -> Path:
    return write(
        folder,
        {
            "manifest.yaml": SHU_MANIFEST,
            "demo_pkg/__init__.py": "",
            "demo_pkg/util.py": "def shout(text):\n    return text.upper()\n",
            "demo_pkg/plugin.py": SHU_PLUGIN,
        },
    )


def test_a_shu_class_runs_execute_with_params_context_and_host(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(shu(tmp_path), "manifest.yaml")
    assert runtime.check(plugin) is None
    outcome = call(runtime, plugin, "execute", op="echo", text="hi")
    assert (outcome.status, outcome.data, outcome.diagnostics) == (
        "success",
        {"echo": "HI"},
        ("ok",),
    )


def test_a_shu_tool_result_error_keeps_the_plugin_code_in_details(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(shu(tmp_path), "manifest.yaml")
    outcome = call(runtime, plugin, "execute", op="fail")
    assert outcome.status == "error"
    assert outcome.error is not None
    assert outcome.error.code == "plugin_error"
    assert outcome.error.details["plugin_code"] == "QUOTA"


def test_describe_takes_schemas_and_permissions_from_a_shu_class(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    plugin = target(shu(tmp_path), "manifest.yaml")
    refined = runtime.describe(plugin)
    assert refined is not None
    op = refined.operations[0]
    assert op.parameters["required"] == ["op"]
    assert op.output_schema == {"type": "object", "properties": {"echo": {"type": "string"}}}
    assert refined.permissions == ("plugin:shu_demo",)


PER_OP = """
    class PerOp:
        def get_schema(self):
            return {"type": "object", "properties": {"query": {"type": "string"}},
                    "required": ["query"], "additionalProperties": False}

        async def execute(self, params, context, host):
            return {"op": params["op"], "query": params["query"]}
"""


def test_the_op_member_shus_executor_adds_is_declared(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    manifest = SHU_MANIFEST.replace("demo_pkg.plugin:DemoPlugin", "demo_pkg.plugin:PerOp")
    folder = write(tmp_path, {"manifest.yaml": manifest, "demo_pkg/__init__.py": "",
                              "demo_pkg/plugin.py": PER_OP})  # fmt: skip
    refined = runtime.describe(target(folder, "manifest.yaml"))
    assert refined is not None
    parameters = refined.operations[0].parameters
    assert parameters["properties"]["op"] == {"type": "string"}
    assert parameters["required"] == ["query"]  # a plugyard caller may leave it out
    outcome = call(runtime, target(folder, "manifest.yaml"), "execute", op="find", query="q")
    assert outcome.data == {"op": "find", "query": "q"}


MRP_JSON = """
    {"id": "kb-demo", "type": "kb-plugin", "description": "A demo retriever.",
     "plannerHints": {"expectedLatencyMs": 1}}
"""
MRP_PLUGIN = """
    class DemoKB:
        async def retrieve(self, input, ctx):
            found = [u for u in input.get("context", []) if input["prompt"] in u["text"]]
            return {"status": "success" if found else "insufficient",
                    "resolvedIntents": found or None, "sufficient": bool(found),
                    "error": None, "request": ctx["request_id"]}

        def onSourceText(self, input, ctx):
            return {"status": "accepted", "artifacts": [{"n": len(input["text"])}], "error": None}
"""


def test_typed_family_methods_answer_their_family_status(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    folder = write(tmp_path, {"plugin.json": MRP_JSON, "plugin.py": MRP_PLUGIN})
    plugin = target(folder, "plugin.json")
    assert runtime.check(plugin) is None
    hit = call(runtime, plugin, "retrieve", prompt="cat", context=[{"text": "a cat sat"}])
    assert (hit.status, hit.data["sufficient"], hit.data["request"]) == ("success", True, "test")
    miss = call(runtime, plugin, "retrieve", prompt="dog", context=[{"text": "a cat sat"}])
    assert miss.status == "insufficient"


def test_camel_case_family_methods_are_found(tmp_path: Path, runtime: InProcessRuntime) -> None:
    folder = write(tmp_path, {"plugin.json": MRP_JSON, "plugin.py": MRP_PLUGIN})
    plugin = target(folder, "plugin.json")
    outcome = call(runtime, plugin, "on_source_text", text="abcd")
    assert (outcome.status, outcome.data["artifacts"]) == ("accepted", [{"n": 4}])


def test_a_missing_optional_kb_hook_answers_skipped(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    folder = write(tmp_path, {"plugin.json": MRP_JSON, "plugin.py": MRP_PLUGIN})
    plugin = target(folder, "plugin.json")
    outcome = call(runtime, plugin, "on_session_event", eventType="kb-loaded", sessionId="s")
    assert outcome.status == "skipped"


def test_a_family_error_status_becomes_a_plugin_error(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    code = """
        def retrieve(input, ctx):
            return {"status": "error", "error": {"code": "NO_INDEX", "message": "no index"}}
    """
    folder = write(tmp_path, {"plugin.json": MRP_JSON, "plugin.py": code})
    outcome = call(runtime, target(folder, "plugin.json"), "retrieve", prompt="x")
    assert outcome.status == "error"
    assert outcome.error is not None
    assert (outcome.error.code, outcome.error.details["plugin_code"]) == (
        "plugin_error",
        "NO_INDEX",
    )


def test_a_homeclaw_plugin_class_answers_when_the_module_has_no_functions(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    code = """
        class WeatherPlugin:
            def __init__(self, config):
                self.config = config

            def fetch_weather(self, city, district=None):
                return f"{city}: {self.config['unit']}"

            def fetch_forecast(self, city):
                return []

            def whoami(self):
                return "me"

            def loop_thread(self):
                return 0
    """
    yaml = HOMECLAW_YAML + "    config: {unit: celsius}\n"
    folder = write(tmp_path, {"plugin.yaml": yaml, "plugin.py": code})
    assert call(runtime, target(folder), "Fetch-Weather", city="Rome").data == "Rome: celsius"
