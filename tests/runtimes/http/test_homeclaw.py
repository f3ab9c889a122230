"""HomeClaw's envelope: a plugin registered with a HomeClaw body is posted the
``PluginRequest`` HomeClaw's Core builds and answers a ``PluginResult``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.intake import read_plugins
from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.http import HttpPluginRuntime
from plugyard.runtimes.http.homeclaw import read_plugin_result
from plugyard.runtimes.outbound import OutboundClient, OutboundGuard

from .servers import PluginServer


def _body(url: str, path: str = "/homeclaw/run") -> dict[str, Any]:
    """A registration body as HomeClaw's time plugin sends it (its register.py)."""
    return {
        "plugin_id": "Time",
        "name": "Time Plugin",
        "description": "Get current time or list timezones.",
        "health_check_url": f"{url}/health",
        "type": "http",
        "config": {"base_url": url, "path": "run", "timeout_sec": 10},
        "capabilities": [
            {
                "id": "get_time",
                "name": "Get current time",
                "parameters": [
                    {"name": "timezone", "type": "string", "required": False},
                    {"name": "format", "type": "string", "required": False},
                ],
                "post_process": True,
                "method": "POST",
                "path": path,
            },
            {"id": "list_timezones", "parameters": [], "method": "POST", "path": path},
        ],
    }


def _descriptor(server: PluginServer, path: str = "/homeclaw/run") -> PluginDescriptor:
    ((descriptor, dialect),) = read_plugins(_body(server.url, path))
    assert dialect == "homeclaw"
    return descriptor


def _call(
    server: PluginServer,
    capability: str,
    params: dict[str, Any],
    *,
    path: str = "/homeclaw/run",
    context: CallContext | None = None,
) -> Outcome:
    descriptor = _descriptor(server, path)
    operation = descriptor.operation(capability)
    assert operation is not None
    client = OutboundClient(OutboundGuard.of([server.allow]))
    context = context or CallContext(request_id="req-9", subject="ana")
    answer = HttpPluginRuntime(client).invoke(
        Target(descriptor, trust="untrusted"), operation, params, context, None
    )
    outcome = asyncio.run(answer)  # type: ignore[arg-type]
    assert isinstance(outcome, Outcome)
    return outcome


def test_the_capability_and_its_parameters_reach_the_plugin(plugin_server: PluginServer) -> None:
    tokyo = _call(plugin_server, "get_time", {"timezone": "Asia/Tokyo", "format": "12h"})
    listed = _call(plugin_server, "list_timezones", {})
    assert tokyo.status == "success"
    assert tokyo.data["text"] == "12:00:00 (Asia/Tokyo, 12h)"
    assert listed.data["text"] == "Common timezones: UTC, Asia/Tokyo"


def test_the_request_is_the_plugin_request_homeclaw_core_builds(
    plugin_server: PluginServer,
) -> None:
    context = CallContext(
        request_id="req-9",
        subject="ana",
        user_context={"message": "time in Tokyo?", "channel_name": "web", "user_id": "eve"},
    )
    outcome = _call(plugin_server, "get_time", {"timezone": "Asia/Tokyo"}, context=context)
    sent = outcome.data["metadata"]["request"]
    assert sent == {
        "request_id": "req-9",
        "plugin_id": "time",
        "user_input": "time in Tokyo?",
        "user_id": "ana",  # the authenticated subject, not the body's user_id
        "user_name": "",
        "channel_name": "web",
        "channel_type": "",
        "app_id": "",
        "chat_context": None,
        "metadata": {
            "capability_id": "get_time",
            "capability_parameters": {"timezone": "Asia/Tokyo"},
        },
        "capability_id": "get_time",
        "capability_parameters": {"timezone": "Asia/Tokyo"},
    }


def test_success_false_is_an_error_with_the_plugins_text(plugin_server: PluginServer) -> None:
    outcome = _call(plugin_server, "get_time", {}, path="/homeclaw/refuse")
    assert outcome.status == "error"
    assert outcome.error is not None
    assert (outcome.error.code, outcome.error.message) == ("plugin_error", "no such city")


def test_a_result_without_success_is_invalid_output_naming_the_convention(
    plugin_server: PluginServer,
) -> None:
    outcome = _call(plugin_server, "get_time", {}, path="/homeclaw/bare")
    assert outcome.status == "error"
    assert outcome.error is not None
    assert outcome.error.code == "invalid_output"
    assert outcome.error.details == {"convention": "HomeClaw PluginResult", "pointer": "/success"}


@pytest.mark.parametrize("answer", ["/garbage", "/text"])
def test_a_body_that_is_not_a_plugin_result_is_invalid_output(
    plugin_server: PluginServer, answer: str
) -> None:
    outcome = _call(plugin_server, "get_time", {}, path=answer)
    assert outcome.error is not None
    assert outcome.error.code == "invalid_output"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from(["success", "text", "error", "metadata", "x"]), _JSON))
def test_any_json_object_is_a_result_an_error_or_invalid_output_never_a_crash(
    body: dict[str, Any],
) -> None:
    outcome = read_plugin_result(body)
    if not isinstance(body.get("success"), bool):
        assert outcome.error is not None and outcome.error.code == "invalid_output"
    elif outcome.status == "success":
        assert body["success"] is True and set(outcome.data) == {"text", "metadata"}
    else:
        assert outcome.error is not None
        assert outcome.error.code in {"plugin_error", "invalid_output"}
        assert body["success"] is False or outcome.error.code == "invalid_output"
