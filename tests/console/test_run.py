"""Runs from generated forms: results, wrong types, streams, output validation, escaping."""

from __future__ import annotations

import json
import re

from fastapi.testclient import TestClient

from .conftest import codes, csrf_of


def test_the_form_renders_the_hints(admin: TestClient) -> None:
    page = admin.get("/console/plugins/hinted/run/configure").text
    names = re.findall(r'name="(/[^"]+)"', page)
    assert names == ["/mode", "/subject_email", "/since_hours", "/query", "/level",
                     "/options/verbose", "/options/tags"]  # fmt: skip
    assert "Domain delegation" in page and 'data-help="Runs as you."' in page
    assert "Auto level" in page and 'placeholder="Any"' in page
    assert "data-show-when=" in page and "Look-back window in hours" in page
    bound = admin.get("/console/plugins/hinted/run/whoami").text
    assert 'name="/email"' not in bound and "identity:email" in bound


def test_a_run_shows_its_result(admin: TestClient) -> None:
    page = admin.get("/console/plugins/hinted/run/configure").text
    reply = admin.post("/console/plugins/hinted/run/configure", data={
        "csrf_token": csrf_of(page), "/mode": '"delegate"', "/subject_email": "ann@example.org",
        "/since_hours": "12", "/level": "", "/options/tags": "a\nb"})  # fmt: skip
    assert reply.status_code == 200
    assert 'data-status="success"' in reply.text
    data = re.search(r'<pre class="data">(.*?)</pre>', reply.text, re.S)
    assert data is not None
    shown = json.loads(data.group(1).replace("&#34;", '"').replace("&quot;", '"'))
    assert shown == {"mode": "delegate", "subject_email": "ann@example.org", "since_hours": 12,
                     "query": None, "level": None,
                     "options": {"verbose": False, "tags": ["a", "b"]}}  # fmt: skip


def test_wrong_types_are_a_clear_message_and_the_form_again(admin: TestClient) -> None:
    page = admin.get("/console/plugins/hinted/run/configure").text
    reply = admin.post("/console/plugins/hinted/run/configure", data={
        "csrf_token": csrf_of(page), "/mode": '"simple"', "/since_hours": "soon"})  # fmt: skip
    assert reply.status_code == 422 and "invalid_parameters" in codes(reply.text)
    assert "expected a whole number, got &#39;soon&#39;" in reply.text
    assert 'value="soon"' in reply.text  # what was typed stays


def test_the_schema_refusal_of_the_executor_is_shown_with_its_code(admin: TestClient) -> None:
    page = admin.get("/console/plugins/hinted/run/configure").text
    reply = admin.post("/console/plugins/hinted/run/configure",
                       data={"csrf_token": csrf_of(page)})  # fmt: skip
    assert "invalid_parameters" in codes(reply.text)


def test_an_output_validation_error_is_a_summary_with_raw_details(admin: TestClient) -> None:
    page = admin.get("/console/plugins/liar/run/lie").text
    reply = admin.post("/console/plugins/liar/run/lie", data={"csrf_token": csrf_of(page)})
    assert "output_validation_error" in codes(reply.text)
    assert "<summary>Raw details</summary>" in reply.text


def test_a_streaming_run_sends_progress_then_the_rendered_result(admin: TestClient) -> None:
    page = admin.get("/console/plugins/ticker/run/count").text
    assert 'data-stream="1"' in page
    reply = admin.post("/console/plugins/ticker/run/count",
                       data={"csrf_token": csrf_of(page), "/n": "3"},
                       headers={"accept": "text/event-stream"})  # fmt: skip
    events = re.findall(r"event: (\w+)\ndata: (.*)\n", reply.text)
    assert [name for name, _ in events] == ["progress"] * 3 + ["result"]
    result = json.loads(events[-1][1])
    assert result["status"] == "success" and 'data-status="success"' in result["html"]
    assert "content-security-policy" in reply.headers


def test_a_streamed_form_with_wrong_types_answers_the_errors(admin: TestClient) -> None:
    page = admin.get("/console/plugins/ticker/run/count").text
    reply = admin.post("/console/plugins/ticker/run/count",
                       data={"csrf_token": csrf_of(page), "/n": "many"},
                       headers={"accept": "text/event-stream"})  # fmt: skip
    assert reply.text.startswith("event: invalid")


def test_a_plugins_output_and_citations_are_escaped(admin: TestClient) -> None:
    page = admin.get("/console/plugins/evil/run/emit").text
    reply = admin.post("/console/plugins/evil/run/emit", data={"csrf_token": csrf_of(page)})
    assert "<script>window.__pwned" not in reply.text
    assert 'href="javascript:' not in reply.text
    assert 'href="https://example.org/doc"' in reply.text
    assert '<table class="skips">' in reply.text


def test_diagnostics_show_only_for_a_debug_run(admin: TestClient) -> None:
    page = admin.get("/console/plugins/unit-convert/run/convert").text
    values = {"csrf_token": csrf_of(page), "/value": "3", "/from_unit": "km", "/to_unit": "mi"}
    plain = admin.post("/console/plugins/unit-convert/run/convert", data=values)
    assert 'data-status="success"' in plain.text, codes(plain.text)
    assert '<ul class="diagnostics">' not in plain.text
