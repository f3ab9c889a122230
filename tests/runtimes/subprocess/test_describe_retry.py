"""A describe that fails without a verdict on the plugin (its wrapper crashed: the machine
may have been out of processes) is tried again by a later call, after a backoff, so the
plugin recovers once the cause is gone; a wrapper that lies stays refused."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plugyard.runtimes.base import CallContext, Outcome
from plugyard.runtimes.subprocess import SubprocessPluginRuntime
from plugyard.runtimes.subprocess.retry import DESCRIBE_RETRY_S, Refusal, describe_failed
from runtimes.subprocess.helpers import chaos_target


def test_a_crashed_describe_is_tried_again_once_its_cause_is_gone(tmp_path: Path) -> None:
    target, _ = chaos_target(tmp_path, env={"LIE": "crash_unless_ready"})
    op = target.descriptor.operations[0]
    runtime = SubprocessPluginRuntime()

    async def go() -> tuple[str | None, Outcome, Outcome, int]:
        registered = await asyncio.to_thread(runtime.check, target)
        refused = await runtime.invoke(target, op, {"do": "echo"}, CallContext("a"), None)
        (tmp_path / "ready").touch()
        deadline = asyncio.get_running_loop().time() + DESCRIBE_RETRY_S + 10
        tries = 0
        while True:
            tries += 1
            answer = await runtime.invoke(target, op, {"do": "echo"}, CallContext("b"), None)
            assert isinstance(answer, Outcome)
            if answer.status == "success" or asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.05)
        await runtime.aclose()
        assert isinstance(refused, Outcome)
        return registered, refused, answer, tries

    registered, refused, recovered, tries = asyncio.run(go())
    assert registered is None  # no verdict on the plugin: it stays registered, available
    assert refused.error is not None
    assert refused.error.code == "plugin_unavailable"
    assert "describe" in refused.error.message
    assert recovered.status == "success", recovered.error
    assert tries > 1  # refused at once until the backoff passed, not described per call


def test_the_backoff_doubles_and_a_lie_is_never_tried_again() -> None:
    first = describe_failed("plugin_error", "describe: crashed", None)
    second = describe_failed("plugin_error", "describe: crashed", first)
    assert (first.failures, second.failures) == (1, 2)
    assert first.retry_at is not None and second.retry_at is not None
    assert second.retry_at - first.retry_at >= DESCRIBE_RETRY_S * 0.9
    lie = describe_failed("wrapper_protocol_error", "describe names another plugin", second)
    assert lie == Refusal("wrapper_protocol_error", "describe names another plugin")
    assert not lie.passing
    assert lie.answer() == ("wrapper_protocol_error", "describe names another plugin")
