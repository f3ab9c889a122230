"""The HomeClaw dialect: plugin.yaml, config.yml sidecars and registration bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import ManifestError
from plugyard.manifest.dialects import HOMECLAW
from plugyard.manifest.exporters.dialect import DIALECT_NAMES, to_dialect
from plugyard.manifest.load import ManifestDocument, detect, load_data, load_text, read_sidecars
from plugyard.manifest.model import NoRuntime, Operation, PluginDescriptor
from plugyard.manifest.reading import OVERLAY_KEY

FIXTURES = Path(__file__).parent.parent / "fixtures" / "homeclaw"
IDS = {
    "seed_weather.plugin.yaml": ["weather"],
    "seed_news.plugin.yaml": ["news"],
    "seed_slack_register.json": ["slack-bot"],
    "weather/plugin.yaml": ["forecast"],
    "mailer/plugin.yaml": ["mailer"],
    "bridge/plugin.yaml": ["editor-bridge"],
    "external_plugins.json": ["clock", "pal"],
    "register_quote.json": ["quote-go"],
    "subprocess.plugin.yaml": ["wordcount"],
    "mcp.plugin.yaml": ["notes-mcp"],
}


def load_fixture(name: str) -> ManifestDocument:
    path = FIXTURES / name
    return load_text(path.read_bytes(), path=str(path), sidecars=read_sidecars(path.parent))


def only(name: str) -> PluginDescriptor:
    (plugin,) = load_fixture(name).plugins
    return plugin


def read(doc: Any, sidecars: dict[str, Any] | None = None) -> ManifestDocument:
    return load_data([doc], sidecars=sidecars)


def faults(doc: Any) -> set[tuple[str, str]]:
    with pytest.raises(ManifestError) as caught:
        read(doc)
    return {(p.code, p.pointer) for p in caught.value.problems}


def warnings(document: ManifestDocument) -> set[tuple[str, str]]:
    return {(w.code, w.pointer) for w in document.warnings}


BODY: dict[str, Any] = {
    "plugin_id": "echo",
    "name": "Echo",
    "description": "Echo text back.",
    "health_check_url": "http://127.0.0.1:3500/health",
    "type": "http",
    "config": {"base_url": "http://127.0.0.1:3500", "path": "/run", "timeout_sec": 5},
    "capabilities": [
        {
            "id": "echo",
            "name": "Echo",
            "description": "Echo the text.",
            "parameters": [{"name": "text", "type": "string"}],
            "method": "POST",
            "path": "/run",
        }
    ],
}


def body(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(BODY))
    doc.update(changes)
    return doc


# reading ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(IDS))
def test_every_fixture_reads_as_homeclaw_tool_plugins(name: str) -> None:
    document = load_fixture(name)
    assert document.dialect == "homeclaw"
    assert [p.id for p in document.plugins] == IDS[name]
    assert {p.family for p in document.plugins} == {"tool"}


def test_seed_weather_example_reads_its_capability_contract() -> None:
    plugin = only("seed_weather.plugin.yaml")
    assert plugin.name == "Weather Plugin"
    assert plugin.description_long is not None
    assert plugin.runtime.kind == "python"
    assert plugin.runtime.entrypoint is None
    assert plugin.source == "built-in"
    (op,) = plugin.operations
    assert op.id == "fetch_weather"
    assert op.post_process is True
    assert op.post_process_prompt is not None
    assert op.output_description is not None
    assert op.output_description.startswith('{"text"')
    assert op.parameters["required"] == ["city"]
    assert set(op.parameters["properties"]) == {"city", "district"}  # type: ignore[arg-type]


def test_seed_registration_body_is_an_external_http_plugin() -> None:
    plugin = only("seed_slack_register.json")
    assert plugin.source == "external"
    runtime = plugin.runtime
    assert runtime.kind == "http"
    assert runtime.base_url == "http://127.0.0.1:3100"
    assert runtime.health_check_url == "http://127.0.0.1:3100/health"
    assert runtime.timeout_s == 30
    assert runtime.config == {"path": "/run"}
    (op,) = plugin.operations
    assert (op.http_method, op.http_path, op.post_process) == ("POST", "/post", False)
    assert op.parameters["required"] == ["channel", "text"]


def test_parameters_are_required_unless_they_say_otherwise() -> None:
    doc = body()
    doc["capabilities"][0]["parameters"] = [
        {"name": "a", "type": "string"},
        {"name": "b", "type": "integer", "required": False},
        {"name": "c", "type": "number", "required": True},
    ]
    (op,) = read(doc).plugins[0].operations
    assert op.parameters["required"] == ["a", "c"]
    assert op.parameters["properties"]["b"] == {"type": "integer"}  # type: ignore[index,call-overload]


def test_null_parameter_keys_are_absent_and_other_keys_stay_in_the_schema() -> None:
    clock = load_fixture("external_plugins.json").plugins[0]
    properties = clock.operations[0].parameters["properties"]
    assert properties == {
        "timezone": {"type": "string", "description": "IANA timezone, e.g. Asia/Tokyo."},
        "hours": {"type": "integer", "description": "12 or 24.", "default": 24},
    }
    forecast = only("weather/plugin.yaml").operations[0].parameters["properties"]
    assert forecast["town"]["config_key"] == "town"  # type: ignore[index,call-overload]


def test_method_is_read_upper_case() -> None:
    assert only("register_quote.json").operations[0].http_method == "POST"


def test_empty_capabilities_is_the_single_run_operation() -> None:
    plugin = only("mailer/plugin.yaml")
    assert plugin.operations == (Operation(id="run", description=plugin.description),)


def test_without_capabilities_run_takes_the_legacy_config_yml_parameters() -> None:
    sidecars = {"config.yml": {"parameters": [{"name": "city", "type": "string"}]}}
    document = read({"id": "w", "description": "Weather.", "type": "inline"}, sidecars)
    (op,) = document.plugins[0].operations
    assert op.id == "run"
    assert op.parameters == {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
    }  # fmt: skip
    assert ("legacy_field", "/config/parameters") in warnings(document)


def test_legacy_plugin_parameters_beside_capabilities_are_ignored_with_a_warning() -> None:
    document = load_fixture("weather/plugin.yaml")
    assert ("ignored_field", "/config/parameters") in warnings(document)
    assert "parameters" not in document.plugins[0].config


def test_config_yml_settings_become_config_and_keywords_become_tags() -> None:
    plugin = only("weather/plugin.yaml")
    assert plugin.config == {
        "config_file": "config.yml",
        "tasks": {"get_forecast": {"type": "fixed", "frequency": "daily", "time": "07:30:00"}},
        "town": "Lyon",
        "area": "Croix-Rousse",
        "version_hint": 1.1,
    }
    assert plugin.tags == ("weather", "forecast", "will it rain")
    assert plugin.description.startswith("Weather forecast")  # plugin.yaml wins


def test_config_yml_keys_win_over_plugin_yaml_config() -> None:
    doc = {"id": "b", "description": "B.", "type": "http",
           "config": {"base_url": "http://127.0.0.1:1", "path": "/run"}}  # fmt: skip
    sidecars = {"config.yml": {"base_url": "http://bridge.internal:3104"}}
    runtime = read(doc, sidecars).plugins[0].runtime
    assert runtime.kind == "http"
    assert runtime.base_url == "http://bridge.internal:3104"


def test_registration_bodies_ignore_config_yml() -> None:
    document = read(body(), {"config.yml": {"apiKey": "k", "keywords": ["x"]}})
    assert document.plugins[0].secrets == ()
    assert document.plugins[0].tags == ()


@pytest.mark.parametrize(
    ("name", "secret", "pointer"),
    [
        ("weather/plugin.yaml", "apiKey", "/config/apiKey"),
        ("mailer/plugin.yaml", "smtp_password", "/config/smtp_password"),
    ],
)
def test_secrets_in_config_are_named_but_their_values_left_out(
    name: str, secret: str, pointer: str
) -> None:
    document = load_fixture(name)
    (plugin,) = document.plugins
    assert plugin.secrets == (secret,)
    assert secret not in plugin.config
    assert ("secret_in_config", pointer) in warnings(document)
    for dialect in ("homeclaw", "canonical"):
        exported = json.dumps(to_dialect(plugin, dialect))
        assert "not-a-real-key" not in exported
        assert "hunter2" not in exported


def test_a_secret_key_without_a_value_is_named_silently() -> None:
    config = {"api_key": None, "bridge_api_key": ""}
    doc = {"id": "n", "description": "N.", "config": config, "capabilities": []}
    document = read(doc)
    assert document.plugins[0].secrets == ("api_key", "bridge_api_key")
    assert not {code for code, _ in warnings(document)} & {"secret_in_config"}


def test_setting_names_that_only_look_alike_are_not_secrets() -> None:
    config = {"max_tokens": 5, "smtp_port": 465}
    doc = {"id": "n", "description": "N.", "config": config, "capabilities": []}
    plugin = read(doc).plugins[0]
    assert plugin.secrets == ()
    assert plugin.config == {"max_tokens": 5, "smtp_port": 465}


def test_legacy_description_from_config_yml_is_a_fallback() -> None:
    document = read({"id": "q", "capabilities": []}, {"config.yml": {"description": "Quotes."}})
    assert document.plugins[0].description == "Quotes."
    assert ("legacy_field", "/config/description") in warnings(document)


def test_no_description_at_all_is_a_warning() -> None:
    document = read({"id": "q", "capabilities": []})
    assert document.plugins[0].description == ""
    assert ("missing_description", "/description") in warnings(document)


def test_capability_without_description_is_a_warning() -> None:
    document = load_fixture("bridge/plugin.yaml")
    assert ("missing_description", "/capabilities/2/description") in warnings(document)


def test_config_yml_naming_another_plugin_warns() -> None:
    document = read({"id": "a", "capabilities": []}, {"config.yml": {"id": "b"}})
    assert ("conflicting_field", "/config/id") in warnings(document)


def test_persisted_entries_keep_ui_in_x_and_drop_null_tools() -> None:
    clock, pal = load_fixture("external_plugins.json").plugins
    assert set(clock.x) == {"/ui"}
    assert clock.x["/ui"]["dashboard"] == "http://127.0.0.1:3302/"  # type: ignore[index,call-overload]
    assert pal.x == {}


def test_non_empty_legacy_tools_are_kept_with_a_warning() -> None:
    document = read(body(tools=[{"name": "echo"}]))
    assert document.plugins[0].x == {"/tools": [{"name": "echo"}]}
    assert ("legacy_field", "/tools") in warnings(document)


def test_unknown_fields_are_kept_in_x_with_their_pointer() -> None:
    doc = body(homepage="https://example.org")
    doc["capabilities"][0]["streaming"] = True
    document = read(doc)
    assert document.plugins[0].x == {
        "/homepage": "https://example.org", "/capabilities/0/streaming": True
    }  # fmt: skip
    assert {("unknown_field", "/homepage"), ("unknown_field", "/capabilities/0/streaming")} <= (
        warnings(document)
    )


def test_subprocess_type_maps_config_to_the_wrapper_runtime() -> None:
    plugin = only("subprocess.plugin.yaml")
    runtime = plugin.runtime
    assert runtime.kind == "subprocess"
    assert runtime.command == "/usr/local/bin/wordcount-wrapper"
    assert runtime.args == ("--json",)
    assert runtime.env == {"LANG": "C.UTF-8"}
    assert runtime.protocol_version == "1"
    assert plugin.config == {"max_input_kb": 256}
    assert plugin.source == "external"


def test_mcp_type_with_a_url_is_streamable_http() -> None:
    runtime = only("mcp.plugin.yaml").runtime
    assert runtime.kind == "mcp"
    assert runtime.transport == "streamable-http"
    assert runtime.url == "http://127.0.0.1:3400/mcp"
    assert runtime.health_check_url == "http://127.0.0.1:3400/health"
    assert runtime.config == {"session_ttl_sec": 600}


def test_health_check_url_of_an_inline_plugin_is_kept_in_x() -> None:
    doc = {"id": "i", "type": "inline", "health_check_url": "http://127.0.0.1:1/health"}
    document = read(doc)
    assert document.plugins[0].x == {"/health_check_url": "http://127.0.0.1:1/health"}
    assert ("ignored_field", "/health_check_url") in warnings(document)


def test_registration_without_health_check_url_is_refused() -> None:
    doc = body()
    del doc["health_check_url"]
    with pytest.raises(ManifestError) as caught:
        read(doc)
    assert [(p.code, p.pointer) for p in caught.value.problems] == [
        ("manifest_missing_field", "/health_check_url")
    ]


@pytest.mark.parametrize(
    ("written", "kind", "code"),
    [("HTTP", "http", "coerced_case"), ("python", "python", "type_synonym")],
)
def test_type_spellings_are_read_with_a_warning(written: str, kind: str, code: str) -> None:
    document = read(body(type=written))
    assert document.plugins[0].runtime.kind == kind
    assert (code, "/type") in warnings(document)


def test_explicit_source_is_kept() -> None:
    assert read(body(source="built-in")).plugins[0].source == "built-in"


# faults -------------------------------------------------------------------------------


def _capability(**changes: Any) -> dict[str, Any]:
    doc = body()
    doc["capabilities"][0].update(changes)
    return doc


def _parameter(**changes: Any) -> dict[str, Any]:
    doc = body()
    doc["capabilities"][0]["parameters"][0].update(changes)
    return doc


@pytest.mark.parametrize(
    ("doc", "fault"),
    [
        (body(plugin_id=None), ("manifest_missing_field", "/plugin_id")),
        ({"description": "x", "capabilities": [{"id": "a", "parameters": []}]},
         ("manifest_missing_field", "/id")),
        (body(plugin_id="two words"), ("manifest_invalid_value", "/plugin_id")),
        (body(id="other"), ("manifest_invalid_value", "/id")),
        (body(name=["x"]), ("manifest_invalid_value", "/name")),
        (body(type="grpc"), ("manifest_invalid_value", "/type")),
        (body(source="cloud"), ("manifest_invalid_value", "/source")),
        (body(config="http://x"), ("manifest_invalid_value", "/config")),
        (body(config={"path": "/run"}), ("manifest_missing_field", "/config/base_url")),
        (body(config={"base_url": "u", "timeout_sec": "5"}),
         ("manifest_invalid_value", "/config/timeout_sec")),
        (body(config={"base_url": "u", "timeout_sec": 0}),
         ("manifest_invalid_value", "/config/timeout_sec")),
        (body(ui=["x"]), ("manifest_invalid_value", "/ui")),
        (body(capabilities="echo"), ("manifest_invalid_value", "/capabilities")),
        (body(capabilities=["echo"]), ("manifest_invalid_value", "/capabilities/0")),
        (_capability(id=None), ("manifest_missing_field", "/capabilities/0/id")),
        (_capability(id="a b"), ("manifest_invalid_value", "/capabilities/0/id")),
        (_capability(post_process="maybe"),
         ("manifest_invalid_value", "/capabilities/0/post_process")),
        (_capability(output_description={"text": "string"}),
         ("manifest_invalid_value", "/capabilities/0/output_description")),
        (_capability(parameters={"text": "string"}),
         ("manifest_invalid_value", "/capabilities/0/parameters")),
        (_parameter(required="yes"),
         ("manifest_invalid_value", "/capabilities/0/parameters/0/required")),
        (_parameter(name=None), ("manifest_missing_field", "/capabilities/0/parameters/0/name")),
        (body(capabilities=[BODY["capabilities"][0], BODY["capabilities"][0]]),
         ("manifest_duplicate_key", "/capabilities/1/id")),
        ({"type": "subprocess", "id": "s", "config": {"args": ["x"]}},
         ("manifest_missing_field", "/config/command")),
        ({"type": "subprocess", "id": "s", "config": {"command": "c", "env": {"A": ["b"]}}},
         ("manifest_invalid_value", "/config/env/A")),
        ({"type": "mcp", "id": "m", "config": {"transport": "pigeon"}},
         ("manifest_invalid_value", "/config/transport")),
    ],
)  # fmt: skip
def test_wrong_values_are_errors_at_their_pointer(doc: Any, fault: tuple[str, str]) -> None:
    assert fault in faults(doc)


def test_faults_in_a_list_entry_carry_the_entry_index() -> None:
    entries = [body(), body(plugin_id="ok2", capabilities=[{"name": "no id"}])]
    assert ("manifest_missing_field", "/1/capabilities/0/id") in faults(entries)


def test_post_process_written_as_text_is_read_with_a_warning() -> None:
    document = read(_capability(post_process="true"))
    assert document.plugins[0].operations[0].post_process is True
    assert ("coerced_to_boolean", "/capabilities/0/post_process") in warnings(document)


def test_a_capability_fragment_is_no_manifest() -> None:
    fragment = BODY["capabilities"][0]
    assert faults(fragment) == {("manifest_unknown_dialect", "")}


# detection ----------------------------------------------------------------------------

FOREIGN = [
    {"schemaVersion": 1, "plugin": {"id": "o", "name": "O", "capability": "MODEL"}},
    {"id": "kb-balanced", "type": "kb-plugin", "name": "KB", "description": "d",
     "costClass": "cheap", "plannerHints": {"expectedLatencyMs": 1}},
    {"id": "w", "name": "W", "description": "d", "command": "node", "protocolVersion": "1"},
    {"name": "gchat_digest", "version": "1.0.0", "capabilities": ["cache", "http"],
     "entrypoints": {"gchat_digest": "pkg.mod:Plugin"}},
    {"name": "shu_x", "display_name": "X", "module": "pkg.mod", "capabilities": []},
    {"name": "shu_y", "op_auth": {}, "allowed_feed_ops": ["sync"], "capabilities": []},
    {"$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json", "id": "c",
     "name": "C", "capabilities": [{"id": "x", "parameters": []}]},
]  # fmt: skip


@pytest.mark.parametrize("doc", FOREIGN)
def test_documents_of_other_dialects_score_zero(doc: dict[str, Any]) -> None:
    assert HOMECLAW.score(doc) == 0


@pytest.mark.parametrize(
    "doc",
    [
        {"id": "m", "description": "d", "type": "inline", "capabilities": []},
        {"id": "m", "description": "d", "capabilities": [{"id": "a", "parameters": []}]},
        body(),
    ],
)
def test_homeclaw_documents_are_detected(doc: dict[str, Any]) -> None:
    assert detect(doc) is HOMECLAW


def test_registration_bodies_outscore_plugin_yaml_shapes() -> None:
    assert HOMECLAW.score(body()) > HOMECLAW.score({"id": "m", "capabilities": []}) > 0


# writing ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(IDS))
def test_homeclaw_round_trip_is_lossless_without_an_overlay(name: str) -> None:
    for plugin in load_fixture(name).plugins:
        doc = to_dialect(plugin, "homeclaw")
        assert OVERLAY_KEY not in doc
        assert read(json.loads(json.dumps(doc))).plugins == (plugin,)


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@pytest.mark.parametrize("name", sorted(IDS))
def test_round_trip_through_every_dialect_is_lossless(name: str, dialect: str) -> None:
    for plugin in load_fixture(name).plugins:
        doc = to_dialect(plugin, dialect)
        assert read(json.loads(json.dumps(doc))).plugins == (plugin,)


def test_writer_uses_plugin_id_for_external_plugins_and_id_for_built_in() -> None:
    assert "plugin_id" in to_dialect(only("seed_slack_register.json"), "homeclaw")
    written = to_dialect(only("mailer/plugin.yaml"), "homeclaw")
    assert written["id"] == "mailer"
    assert written["capabilities"] == []
    assert written["config"]["smtp_password"] is None


def test_descriptors_from_elsewhere_survive_a_homeclaw_round_trip() -> None:
    plugin = PluginDescriptor(
        id="java.Stage",
        name="",
        runtime=NoRuntime(reason="Java class"),
        tags=("a",),
        secrets=("google_service_account_json", "api_token"),
        config={"keywords": "kept", "mode": "x"},
        operations=(
            Operation(
                id="execute",
                effect="destructive",
                output_schema={"type": "object"},
                parameters={"type": "object", "properties": {}, "additionalProperties": False},
            ),
        ),
        x={"/plugin/extra": 1, "/schemaVersion": 2, "/homepage": "h"},
    )
    doc = to_dialect(plugin, "homeclaw")
    assert "plugin" not in doc
    assert detect(doc) is HOMECLAW
    assert read(doc).plugins == (plugin,)


def test_a_descriptor_without_operations_round_trips() -> None:
    plugin = PluginDescriptor(id="bare", name="Bare", description="Nothing to call.")
    assert read(to_dialect(plugin, "homeclaw")).plugins == (plugin,)
