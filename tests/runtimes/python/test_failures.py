"""A plugin that cannot load, raises, or answers the wrong shape: a reason or an error code."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from plugyard.manifest.model import HttpRuntime, PluginDescriptor
from plugyard.runtimes.base import Outcome, Target
from plugyard.runtimes.python import InProcessRuntime

from .conftest import call, context, target, write

MANIFEST = """
    id: faulty
    name: Faulty
    description: Goes wrong in every way.
    capabilities:
      - {id: boom, description: Raises.}
      - {id: coded, description: Raises with a code.}
      - {id: bad_status, description: A bad envelope status.}
      - {id: bad_cost, description: A bad envelope cost.}
      - {id: exits, description: Calls sys.exit.}
      - {id: hangs, description: Never returns.}
      - id: add
        description: Adds.
        parameters: [{name: a, type: integer}, {name: b, type: integer}]
"""
CODE = """
    import asyncio
    import sys

    class Refused(ValueError):
        code = "invalid_parameters"

    def boom():
        raise KeyError("missing thing")

    def coded():
        raise Refused("not like that")

    def bad_status():
        return {"status": "ok-ish", "data": 1}

    def bad_cost():
        return {"status": "success", "data": 1, "cost": {"tokens": "many"}}

    def exits():
        sys.exit(3)

    async def hangs():
        await asyncio.Event().wait()

    def add(a, b):
        return a + b
"""


@pytest.fixture
def faulty(tmp_path: Path) -> Target:
    return target(write(tmp_path, {"plugin.yaml": MANIFEST, "plugin.py": CODE}))


def _code(outcome: Outcome) -> str:
    assert outcome.status == "error" and outcome.error is not None
    return outcome.error.code


def test_a_plugin_that_raises_answers_plugin_error_with_type_and_message(
    faulty: Target, runtime: InProcessRuntime
) -> None:
    outcome = call(runtime, faulty, "boom")
    assert _code(outcome) == "plugin_error"
    assert outcome.error is not None
    assert "KeyError" in outcome.error.message and "missing thing" in outcome.error.message
    assert outcome.error.details == {"type": "KeyError"}


def test_the_traceback_comes_only_with_debug(faulty: Target, runtime: InProcessRuntime) -> None:
    operation = faulty.descriptor.operation("boom")
    assert operation is not None
    answer = asyncio.run(runtime.invoke(faulty, operation, {}, context(debug=True), None))
    assert isinstance(answer, Outcome) and answer.error is not None
    assert "Traceback" in answer.error.details["traceback"]


def test_an_exception_with_a_known_code_keeps_it(faulty: Target, runtime: InProcessRuntime) -> None:
    assert _code(call(runtime, faulty, "coded")) == "invalid_parameters"


def test_sys_exit_in_a_plugin_is_a_plugin_error(faulty: Target, runtime: InProcessRuntime) -> None:
    assert _code(call(runtime, faulty, "exits")) == "plugin_error"


@pytest.mark.parametrize("op", ["bad_status", "bad_cost"])
def test_a_malformed_envelope_is_invalid_output(
    op: str, faulty: Target, runtime: InProcessRuntime
) -> None:
    assert _code(call(runtime, faulty, op)) == "invalid_output"


def test_unknown_or_missing_parameters_are_invalid_parameters(
    faulty: Target, runtime: InProcessRuntime
) -> None:
    assert call(runtime, faulty, "add", a=1, b=2).data == 3
    assert _code(call(runtime, faulty, "add", a=1, b=2, c=3)) == "invalid_parameters"
    assert _code(call(runtime, faulty, "add", a=1)) == "invalid_parameters"


def test_cancellation_propagates_out_of_a_hanging_plugin(
    faulty: Target, runtime: InProcessRuntime
) -> None:
    operation = faulty.descriptor.operation("hangs")
    assert operation is not None

    async def scenario() -> None:
        task = asyncio.ensure_future(runtime.invoke(faulty, operation, {}, context(), None))
        await asyncio.sleep(0)  # a yield to the loop so the plugin starts waiting
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())


def test_an_import_error_is_a_reason_and_the_call_is_unavailable(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    folder = write(tmp_path, {"plugin.yaml": MANIFEST, "plugin.py": "import no_such_module_xyz\n"})
    plugin = target(folder)
    reason = runtime.check(plugin)
    assert reason is not None and "no_such_module_xyz" in reason
    assert _code(call(runtime, plugin, "boom")) == "plugin_unavailable"
    assert runtime.describe(plugin) is None


def test_code_raising_at_import_is_a_reason(tmp_path: Path, runtime: InProcessRuntime) -> None:
    folder = write(tmp_path, {"plugin.yaml": MANIFEST, "plugin.py": "raise SystemExit(1)\n"})
    assert runtime.check(target(folder)) is not None


def test_operations_without_code_are_a_reason(tmp_path: Path, runtime: InProcessRuntime) -> None:
    folder = write(tmp_path, {"plugin.yaml": MANIFEST, "plugin.py": "def boom():\n    pass\n"})
    reason = runtime.check(target(folder))
    assert reason is not None and "coded" in reason


def test_a_folder_without_code_is_a_reason(tmp_path: Path, runtime: InProcessRuntime) -> None:
    folder = write(tmp_path, {"plugin.yaml": MANIFEST})
    assert runtime.check(target(folder)) is not None


def test_untrusted_code_never_runs_in_process(faulty: Target, runtime: InProcessRuntime) -> None:
    untrusted = Target(faulty.descriptor, faulty.location, "untrusted", faulty.content_hash)
    assert runtime.check(untrusted) is not None


def test_a_plugin_of_another_runtime_is_a_reason(runtime: InProcessRuntime) -> None:
    descriptor = PluginDescriptor(id="web", name="Web", runtime=HttpRuntime(base_url="http://x"))
    assert runtime.check(Target(descriptor)) is not None


def test_an_entrypoint_that_names_nothing_is_a_reason(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    manifest = """
        plugin:
          id: java.thing
          name: A Java class
          className: com.example.plugins.Thing
    """
    folder = write(tmp_path, {"plugin.yaml": manifest})
    reason = runtime.check(target(folder))
    assert reason is not None and "com.example" in reason
