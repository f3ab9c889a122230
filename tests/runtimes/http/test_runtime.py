"""The http runtime against a real plugin server on loopback (allowlisted)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from plugyard.manifest.model import HttpRuntime, Operation, PluginDescriptor
from plugyard.runtimes.base import CallContext, Outcome, Target
from plugyard.runtimes.http import HttpPluginRuntime
from plugyard.runtimes.http.runtime import operation_url
from plugyard.runtimes.outbound import OutboundClient, OutboundGuard

from .servers import Canary, PluginServer


def _target(base_url: str, **runtime: Any) -> Target:
    descriptor = PluginDescriptor(
        id="remote",
        name="Remote",
        runtime=HttpRuntime(base_url=base_url, **runtime),
    )
    return Target(descriptor, trust="untrusted")


def _call(
    server: PluginServer, method: str, path: str, params: dict[str, Any], **runtime: Any
) -> Outcome:
    client = OutboundClient(OutboundGuard.of([server.allow]))
    operation = Operation(id="op", http_method=method, http_path=path)
    context = CallContext(request_id="req-7")
    answer = HttpPluginRuntime(client).invoke(
        _target(server.url, **runtime), operation, params, context, None
    )
    outcome = asyncio.run(answer)  # type: ignore[arg-type]
    assert isinstance(outcome, Outcome)
    return outcome


def test_post_sends_the_parameters_as_a_json_body(plugin_server: PluginServer) -> None:
    outcome = _call(plugin_server, "POST", "/echo", {"city": "Lisbon", "n": [1, 2]})
    assert outcome.status == "success"
    assert outcome.data == {"echo": {"city": "Lisbon", "n": [1, 2]}, "request_id": "req-7"}


def test_get_sends_the_parameters_as_a_query_string(plugin_server: PluginServer) -> None:
    outcome = _call(plugin_server, "GET", "add", {"a": 2, "b": 3.5})
    assert outcome.data == {"sum": 5.5}


def test_a_result_envelope_is_read_as_one(plugin_server: PluginServer) -> None:
    outcome = _call(plugin_server, "POST", "/envelope", {"x": 1})
    assert outcome.data == {"got": {"x": 1}}
    assert outcome.cost == {"api_calls": 1}


def test_text_becomes_text_data(plugin_server: PluginServer) -> None:
    assert _call(plugin_server, "POST", "/text", {}).data == {"text": "plain words"}


@pytest.mark.parametrize(
    ("path", "code"),
    [("/fail", "plugin_error"), ("/garbage", "invalid_output"), ("/big", "invalid_output"),
     ("/missing", "plugin_error")],
)  # fmt: skip
def test_a_failing_plugin_server_is_an_error_result(
    plugin_server: PluginServer, path: str, code: str
) -> None:
    outcome = _call(plugin_server, "POST", path, {})
    assert outcome.status == "error"
    assert outcome.error is not None and outcome.error.code == code


def test_a_hanging_plugin_server_times_out_at_its_own_deadline(
    plugin_server: PluginServer,
) -> None:
    outcome = _call(plugin_server, "POST", "/hang", {}, timeout_s=0.3)
    assert outcome.status == "timeout"
    assert outcome.error is not None and outcome.error.code == "timeout"


def test_the_response_cap_is_per_plugin(plugin_server: PluginServer) -> None:
    outcome = _call(plugin_server, "POST", "/text", {}, config={"max_response_bytes": 4})
    assert outcome.error is not None and outcome.error.code == "invalid_output"


def test_a_dead_server_is_unavailable(canary: Canary) -> None:
    port = canary.port
    canary.close()  # nothing listens there any more
    server = PluginServer(port=port)
    outcome = _call(server, "POST", "/echo", {})
    assert outcome.error is not None and outcome.error.code == "plugin_unavailable"


def test_a_call_to_a_blocked_address_never_connects(canary: Canary) -> None:
    runtime = HttpPluginRuntime(OutboundClient(OutboundGuard()))
    operation = Operation(id="op", http_method="POST", http_path="/x")
    target = _target(f"http://localhost:{canary.port}")
    answer = runtime.invoke(target, operation, {}, CallContext(request_id="r"), None)
    outcome = asyncio.run(answer)  # type: ignore[arg-type]
    assert isinstance(outcome, Outcome)
    assert outcome.error is not None and outcome.error.code == "outbound_blocked"
    assert canary.accepted == []


def test_the_path_is_relative_to_the_base_url() -> None:
    runtime = HttpRuntime(base_url="http://h:1/v1/", config={"path": "/run"})
    assert operation_url(runtime, Operation(id="a", http_path="/post")) == "http://h:1/v1/post"
    assert operation_url(runtime, Operation(id="a")) == "http://h:1/v1/run"


def test_check_refuses_a_base_url_that_is_not_http() -> None:
    runtime = HttpPluginRuntime()
    assert runtime.check(_target("ftp://h/")) is not None
    assert runtime.check(_target("http://h:1/")) is None
