"""The Shu dialect: ``PLUGIN_MANIFEST`` dicts and ``manifest.yaml`` files, as the contract
writes them (``entrypoints``) and as real Shu plugins do (``module``, ``display_name``,
``chat_callable_ops``, ``allowed_modes``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from plugyard.errors import ERROR_CODES, ManifestError
from plugyard.manifest.dialects.shu import DIALECT, NO_ENTRYPOINT
from plugyard.manifest.exporters.dialect import DIALECT_NAMES, to_dialect
from plugyard.manifest.load import ManifestDocument, load_data, load_text
from plugyard.manifest.model import (
    EMPTY_PARAMETERS,
    NoRuntime,
    OpAuth,
    Operation,
    PluginDescriptor,
    PythonRuntime,
)
from plugyard.manifest.reading import OVERLAY_KEY

FIXTURES = Path(__file__).parent.parent / "fixtures" / "shu"
#: Every fixture that declares a plugin, with the ids it declares.
COMPLETE = {
    "seed_manifest.py": ["gchat_digest"],
    "seed_manifest.yaml": ["gchat_digest"],
    "seed_feeds.py": ["gmail_digest"],
    "mail_digest.py": ["inbox_digest"],
    "repo_activity.py": ["repo_activity"],
    "minimal.py": ["slow_probe"],
    "labelled.py": ["scope_probe"],
    "chat_sync.py": ["chat_sync"],
    "explicit_cursor.yaml": ["calendar_pull"],
    "suite.yaml": ["mail_reader", "drive_reader"],
    "spec_demo.yaml": ["weekly_digest"],
}


def load(name: str) -> ManifestDocument:
    return load_text((FIXTURES / name).read_bytes(), path=name)


def read(text: str) -> ManifestDocument:
    return load_text(text)


def problems(text: str | dict[str, Any]) -> list[tuple[str, str]]:
    if isinstance(text, str):
        with pytest.raises(ManifestError) as info:
            load_text(text)
    else:
        with pytest.raises(ManifestError) as info:
            load_data([text])
    return [(p.code, p.pointer) for p in info.value.problems]


def warnings(document: ManifestDocument) -> list[tuple[str, str]]:
    return [(w.code, w.pointer) for w in document.warnings]


# -- every fixture ------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "ids"), sorted(COMPLETE.items()))
def test_fixture_loads_as_shu_tool_plugins(name: str, ids: list[str]) -> None:
    document = load(name)
    assert document.dialect == "shu"
    assert [p.id for p in document.plugins] == ids
    assert all(p.family == "tool" for p in document.plugins)


@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_fixture_round_trips_through_shu_without_overlay(name: str) -> None:
    for plugin in load(name).plugins:
        written = to_dialect(plugin, "shu")
        assert OVERLAY_KEY not in written
        assert load_data([written]).plugins == (plugin,)


@pytest.mark.parametrize("dialect", DIALECT_NAMES)
@pytest.mark.parametrize("name", sorted(COMPLETE))
def test_fixture_round_trips_through_every_dialect(name: str, dialect: str) -> None:
    for plugin in load(name).plugins:
        assert load_data([to_dialect(plugin, dialect)]).plugins == (plugin,)


# -- the seed's examples ---------------------------------------------------------------


def test_seed_python_and_yaml_manifests_give_the_same_plugin() -> None:
    (from_python,) = load("seed_manifest.py").plugins
    (from_yaml,) = load("seed_manifest.yaml").plugins
    assert from_python == from_yaml
    assert from_python.version == "1.0.0"
    assert from_python.runtime == PythonRuntime(entrypoint="my_gchat_plugin.plugin:Plugin")
    assert from_python.host_capabilities == ("cache", "identity", "secrets", "http")
    assert from_python.secrets == ("google_service_account_json",)
    assert from_python.operations == (Operation(id="execute"),)


def test_seed_feeds_snippet_loads_around_its_elision() -> None:
    document = load("seed_feeds.py")
    (plugin,) = document.plugins
    assert plugin.default_feed_op == "digest"
    assert plugin.allowed_feed_ops == ("digest",)
    assert plugin.runtime == NoRuntime(reason=NO_ENTRYPOINT)
    assert ("placeholder_value", "") in warnings(document)
    assert ("no_entrypoint", "/module") in warnings(document)


def test_seed_op_auth_fragment_without_a_name_is_a_missing_field() -> None:
    text = (FIXTURES / "seed_op_auth_secrets.json").read_text()
    assert problems(text) == [("manifest_missing_field", "/name")]


# -- runtime and identity ----------------------------------------------------------------


def test_module_names_the_python_entrypoint_and_is_written_back_as_module() -> None:
    (plugin,) = load("mail_digest.py").plugins
    assert plugin.runtime == PythonRuntime(
        entrypoint="plugins.inbox_digest.plugin:InboxDigestPlugin"
    )
    written = DIALECT.write(plugin)
    assert written["module"] == "plugins.inbox_digest.plugin:InboxDigestPlugin"
    assert "entrypoints" not in written


def test_entrypoints_source_is_written_back_as_entrypoints() -> None:
    (plugin,) = load("seed_manifest.yaml").plugins
    written = DIALECT.write(plugin)
    assert written["entrypoints"] == {"gchat_digest": "my_gchat_plugin.plugin:Plugin"}
    assert "module" not in written


def test_each_entrypoint_is_a_plugin_sharing_the_package_fields() -> None:
    mail, drive = load("suite.yaml").plugins
    assert mail.runtime == PythonRuntime(entrypoint="office_suite.mail:MailPlugin")
    assert drive.runtime == PythonRuntime(entrypoint="office_suite.drive:DrivePlugin")
    for plugin in (mail, drive):
        assert plugin.name == "Office Suite"
        assert plugin.version == "2.0.0"
        assert plugin.secrets == ("office_client_secret",)
        assert plugin.required_identities[0].scopes == ("Mail.Read", "Files.Read")
        assert plugin.x["/name"] == "office_suite"
    written = DIALECT.write(drive)
    assert written["name"] == "office_suite"
    assert written["entrypoints"] == {"drive_reader": "office_suite.drive:DrivePlugin"}


def test_module_beside_entrypoints_is_kept_and_a_mismatch_warned() -> None:
    document = read("name: a\nmodule: pkg.other:Other\nentrypoints:\n  a: pkg.mod:Plugin\n")
    (plugin,) = document.plugins
    assert plugin.runtime == PythonRuntime(entrypoint="pkg.mod:Plugin")
    assert plugin.x["/module"] == "pkg.other:Other"
    assert ("ignored_field", "/module") in warnings(document)
    assert load_data([to_dialect(plugin, "shu")]).plugins == (plugin,)


@pytest.mark.parametrize("name", ["mcp-bridge", "int", "ns:tool"])
def test_names_shus_loader_refuses_are_read_with_a_warning(name: str) -> None:
    document = load_data([{"name": name, "module": "pkg.mod:Plugin"}])
    assert document.plugins[0].id == name
    assert ("reserved_name", "/name") in warnings(document)


def test_display_name_falls_back_to_title_then_label_then_the_name() -> None:
    assert load("explicit_cursor.yaml").plugins[0].name == "Calendar Pull"
    assert load("labelled.py").plugins[0].name == "Scope Probe"
    assert load("minimal.py").plugins[0].name == "slow_probe"


def test_a_second_display_key_is_kept_and_a_different_one_warned() -> None:
    document = read("name: a\nmodule: p.m:C\ndisplay_name: Shown\ntitle: Other\nlabel: Shown\n")
    (plugin,) = document.plugins
    assert plugin.name == "Shown"
    assert plugin.x == {"/title": "Other", "/label": "Shown"}
    assert warnings(document) == [("ignored_field", "/title")]
    assert load_data([to_dialect(plugin, "shu")]).plugins == (plugin,)


def test_numeric_version_is_read_as_written() -> None:
    document = load("explicit_cursor.yaml")
    assert document.plugins[0].version == "1.10"
    assert ("coerced_to_string", "/version") in warnings(document)


# -- host capabilities --------------------------------------------------------------------


def test_kb_implies_cursor_and_the_writer_leaves_it_implied() -> None:
    (plugin,) = load("mail_digest.py").plugins
    assert plugin.host_capabilities[-2:] == ("kb", "cursor")
    assert "cursor" not in DIALECT.write(plugin)["capabilities"]


def test_explicit_cursor_reads_the_same_as_implied() -> None:
    (explicit,) = read("name: a\ncapabilities: [http, kb, cursor]\n").plugins
    (implied,) = read("name: a\ncapabilities: [http, kb]\n").plugins
    assert explicit == implied
    (middle,) = load("chat_sync.py").plugins
    assert middle.host_capabilities == (
        "http", "identity", "auth", "storage", "kb", "cursor", "cache",
    )  # fmt: skip


def test_unknown_host_capability_is_kept_with_a_warning_but_sdk_ones_are_known() -> None:
    document = read("name: a\ncapabilities: [log, utils, ocr, teleport]\n")
    assert document.plugins[0].host_capabilities == ("log", "utils", "ocr", "teleport")
    assert sorted(warnings(document)) == [
        ("no_entrypoint", "/module"),
        ("unknown_host_capability", "/capabilities/3"),
    ]


# -- feeds, operations, auth ---------------------------------------------------------------


def test_default_feed_op_outside_allowed_feed_ops_is_invalid() -> None:
    text = "name: a\ndefault_feed_op: digest\nallowed_feed_ops: [ingest]\n"
    assert problems(text) == [("manifest_invalid_value", "/default_feed_op")]


def test_default_feed_op_alone_is_allowed() -> None:
    (plugin,) = read("name: a\ndefault_feed_op: digest\n").plugins
    assert plugin.default_feed_op == "digest"


def test_ops_the_manifest_names_become_examples_of_the_op_parameter() -> None:
    (plugin,) = load("mail_digest.py").plugins
    (operation,) = plugin.operations
    assert operation.id == "execute"
    assert operation.kind == "call"
    assert operation.parameters == {
        "type": "object",
        "properties": {
            "op": {"type": "string", "examples": ["ingest", "list", "summarize", "flag"]}
        },
    }


def test_a_manifest_naming_no_op_gives_execute_with_empty_parameters() -> None:
    (plugin,) = load("minimal.py").plugins
    assert plugin.operations == (Operation(id="execute", parameters=dict(EMPTY_PARAMETERS)),)


def test_op_auth_and_identities_map_to_the_canonical_fields() -> None:
    (plugin,) = load("spec_demo.yaml").plugins
    auth = plugin.op_auth["digest"]
    assert auth == OpAuth(
        provider="google",
        mode="service_account",
        scopes=("https://example.test/auth/read",),
        secrets={"service_key": {"allowed_scope": "system"}},  # type: ignore[dict-item]
    )
    (identity,) = load("chat_sync.py").plugins[0].required_identities
    assert (identity.provider, identity.mode, identity.optional) == ("microsoft", "user", True)


def test_real_shu_op_auth_keys_are_kept_in_x_without_warnings() -> None:
    document = load("repo_activity.py")
    (plugin,) = document.plugins
    assert warnings(document) == []
    assert plugin.x["/op_auth/fetch_activity/secrets/forge_user/description"] == "Your user name"
    assert plugin.op_auth["fetch_activity"].secrets["forge_user"].allowed_scope == "user"
    (mail,) = load("mail_digest.py").plugins
    assert mail.x["/op_auth/list/allowed_modes"] == ["user", "domain_delegate"]
    assert mail.x["/chat_callable_ops"] == ["list", "summarize"]


def test_unknown_fields_are_kept_at_their_pointer_with_a_warning() -> None:
    document = read(
        "name: a\nmodule: p.m:C\nicon: bell.svg\n"
        "op_auth:\n  list:\n    provider: google\n    retries: 3\n"
        "    secrets:\n      k: {allowed_scope: user, rotate: weekly}\n"
        "required_identities:\n  - {provider: google, hint: x}\n"
    )
    (plugin,) = document.plugins
    pointers = ["/icon", "/op_auth/list/retries", "/op_auth/list/secrets/k/rotate",
                "/required_identities/0/hint"]  # fmt: skip
    assert sorted(plugin.x) == sorted(pointers)
    assert sorted(warnings(document)) == sorted(("unknown_field", p) for p in pointers)
    written = to_dialect(plugin, "shu")
    assert OVERLAY_KEY not in written
    assert load_data([written]).plugins == (plugin,)


# -- faults -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"name": "a", "capabilities": {"kb": True}}, ("manifest_invalid_value", "/capabilities")),
        ({"name": "a", "version": ["1"]}, ("manifest_invalid_value", "/version")),
        ({"name": "a", "entrypoints": {"a": ["x"]}}, ("manifest_invalid_value", "/entrypoints/a")),
        ({"name": "a", "entrypoints": ["x"]}, ("manifest_invalid_value", "/entrypoints")),
        ({"name": "a", "op_auth": {"list": "google"}}, ("manifest_invalid_value", "/op_auth/list")),
        ({"name": "a", "op_auth": []}, ("manifest_invalid_value", "/op_auth")),
        (
            {"name": "a", "op_auth": {"x": {"secrets": {"k": {"allowed_scope": "world"}}}}},
            ("manifest_invalid_value", "/op_auth/x/secrets/k/allowed_scope"),
        ),
        (
            {"name": "a", "op_auth": {"x": {"scopes": [{}]}}},
            ("manifest_invalid_value", "/op_auth/x/scopes/0"),
        ),
        (
            {"name": "a", "required_identities": [{"mode": "user"}]},
            ("manifest_missing_field", "/required_identities/0/provider"),
        ),
        (
            {"name": "a", "required_identities": [{"provider": "g", "optional": "maybe"}]},
            ("manifest_invalid_value", "/required_identities/0/optional"),
        ),
        (
            {"name": "a", "required_identities": {}},
            ("manifest_invalid_value", "/required_identities"),
        ),
        ({"name": "two words", "module": "p.m:C"}, ("manifest_invalid_value", "/name")),
        ({"name": "a", "display_name": {}}, ("manifest_invalid_value", "/display_name")),
        (
            {"name": "a", "allowed_feed_ops": "x", "default_feed_op": "y"},
            ("manifest_invalid_value", "/default_feed_op"),
        ),
        ({"module": "p.m:C"}, ("manifest_missing_field", "/name")),
    ],
)
def test_wrong_types_give_errors_at_their_pointer(
    document: dict[str, Any], expected: tuple[str, str]
) -> None:
    assert expected in problems(document)


@pytest.mark.parametrize(
    "text",
    [
        "PLUGIN_MANIFEST = {'name': None, 'op_auth': {'a': {'secrets': 3}}}",
        "PLUGIN_MANIFEST = {'module': 1, 'entrypoints': {'': ''}, 'chat_callable_ops': 1}",
        "PLUGIN_MANIFEST = {'name': 'a', 'op_auth': {'a': {'secrets': {'k': None}}}}",
        "PLUGIN_MANIFEST = {'name': 'a', 'required_identities': [None, 3], 'secrets': {}}",
        "PLUGIN_MANIFEST = {'name': 'a', 'x-plugyard': [1], 'capabilities': None}",
        "PLUGIN_MANIFEST = {'name': 'a', 'x-plugyard': {'family': 'robot'}, 'op_auth': {}}",
    ],
)
def test_hostile_manifests_raise_only_manifest_errors(text: str) -> None:
    try:
        outcome: object = load_text(text).dialect
    except ManifestError as exc:
        outcome = {p.code for p in exc.problems}
    assert outcome == "shu" or (isinstance(outcome, set) and outcome <= set(ERROR_CODES))


# -- detection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "document",
    [
        {"plugin": {"id": "x", "capability": "MODEL", "className": "a.B"}},
        {"id": "w", "name": "W", "type": "inline", "capabilities": [{"id": "f"}]},
        {"plugin_id": "b", "name": "B", "health_check_url": "http://h/health"},
        {"id": "kb-fast", "name": "K", "type": "kb-plugin", "version": "1.0.0"},
        {"id": "p", "name": "P", "plannerHints": {}},
        {"id": "t", "name": "T", "command": "echo", "protocolVersion": "1"},
        {"id": "t", "name": "T", "command": "echo", "args": ["hi"]},
        {"$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json", "id": "a"},
    ],
)
def test_score_does_not_claim_other_dialects(document: dict[str, Any]) -> None:
    assert DIALECT.score(document) == 0


def test_score_prefers_specific_shu_keys() -> None:
    bare = DIALECT.score({"name": "a"})
    assert bare > 0
    assert DIALECT.score({"name": "a", "module": "p.m:C"}) > bare + 4
    assert DIALECT.score({"op_auth": {}}) > 0
    assert DIALECT.score({"name": "a", "capabilities": ["kb"], "allowed_feed_ops": []}) > 4


def test_plugin_of_another_dialect_round_trips_through_shu_via_the_overlay() -> None:
    plugin = PluginDescriptor(
        id="weather",
        name="Weather",
        description_long="More words.",
        tags=("forecast",),
        operations=(
            Operation(id="fetch", parameters={"type": "object", "properties": {"city": {}}}),
        ),
        runtime=PythonRuntime(entrypoint="weather.plugin.Weather"),
        host_capabilities=("kb", "cursor", "cursor"),
        default_feed_op="digest",
        allowed_feed_ops=("ingest",),
        permissions=("plugin:weather",),
        x={"/plugin/schemaVersion": 2, "/id": "weather", "/capabilities/0/id": "f", "/note": 1},
    )
    written = to_dialect(plugin, "shu")
    assert DIALECT.score(written) > 0
    assert written["module"] == "weather.plugin.Weather"
    assert "default_feed_op" not in written
    assert load_data([written]).plugins == (plugin,)


def test_declared_origins_are_read_in_order_without_repeats_and_written_back() -> None:
    text = "name: mail\nmodule: p.m:C\norigins: [gmail, gmail-label, gmail]\n"
    document = read(text)
    (plugin,) = document.plugins
    assert plugin.origins == ("gmail", "gmail-label")
    assert document.warnings == ()  # the contract's own key: no unknown-field warning
    assert to_dialect(plugin, "shu")["origins"] == ["gmail", "gmail-label"]
    # A plugin that declares none writes none (real Shu manifests have no such key).
    (bare,) = read("name: mail\nmodule: p.m:C\n").plugins
    assert bare.origins == ()
    assert "origins" not in to_dialect(bare, "shu")


@pytest.mark.parametrize("origins", ["{gmail: 1}", "[gmail, {a: 1}]", "[gmail, [x]]"])
def test_origins_that_are_not_labels_are_invalid_at_their_pointer(origins: str) -> None:
    found = problems(f"name: mail\nmodule: p.m:C\norigins: {origins}\n")
    assert found and {code for code, _ in found} == {"manifest_invalid_value"}
    assert all(pointer.startswith("/origins") for _, pointer in found)
