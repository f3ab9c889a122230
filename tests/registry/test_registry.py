"""The registry: DS003's interface, its rules, its events, and write-through to the store."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from plugyard.errors import NotFoundError, PlugyardError, StoreError
from plugyard.manifest.model import PluginDescriptor
from plugyard.registry.model import RegisteredPlugin
from plugyard.registry.registry import Registry
from plugyard.registry.rows import to_row
from plugyard.store.store import Store

from .conftest import descriptor, plugin
from .helpers import FlakyRepository, Recorder, assert_in_step


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def registry(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Registry]:
    if request.param == "memory":
        yield Registry()
        return
    if request.param == "sqlite":
        url = str(tmp_path / "yard.db")
    else:
        url = request.getfixturevalue("postgres_url")
    with Store.open(url) as store:
        yield Registry.over(store)


@pytest.fixture
def postgres_url(request: pytest.FixtureRequest) -> Iterator[str]:
    from plugyard.store import testing

    database = request.getfixturevalue("postgres_database")
    testing.reset_database(database)
    yield database.render_as_string(hide_password=False)
    testing.reset_database(database)


def code_of(error: pytest.ExceptionInfo[PlugyardError]) -> str:
    return error.value.code


# registering and reading ------------------------------------------------------------


def test_a_registered_plugin_is_found_by_id_family_and_listing(registry: Registry) -> None:
    recorder = Recorder()
    registry.subscribe(recorder)
    weather = plugin("weather")
    notes = plugin("kb-notes", family="kb")
    event = registry.register(weather)
    registry.register(notes)
    assert event is not None and (event.kind, event.plugin, event.previous) == (
        "registered",
        weather,
        None,
    )
    assert registry.find("weather") == weather
    assert registry.get("tool", "weather") == weather
    assert registry.get("kb", "weather") is None
    assert registry.get("kb-plugin", "kb-notes") == notes
    assert [p.id for p in registry.list()] == ["kb-notes", "weather"]
    assert registry.list_by_type("kb") == (notes,)
    assert registry.list("tool") == (weather,)
    assert registry.descriptors("kb") == (notes.descriptor,)
    assert recorder.kinds() == [("registered", "weather"), ("registered", "kb-notes")]
    assert "weather" in registry and len(registry) == 2
    assert_in_step(registry)


def test_registering_the_same_entry_again_changes_nothing(registry: Registry) -> None:
    recorder = Recorder()
    registry.register(plugin("weather"))
    registry.subscribe(recorder)
    assert registry.register(plugin("weather")) is None
    assert recorder.events == []


def test_a_newer_version_from_the_same_origin_updates(registry: Registry) -> None:
    old = plugin("weather")
    new = plugin("weather", version="1.1.0")
    registry.register(old)
    event = registry.register(new)
    assert event is not None and (event.kind, event.plugin, event.previous) == (
        "updated",
        new,
        old,
    )
    assert registry.find("weather") == new
    assert_in_step(registry)


def test_an_edit_without_a_version_bump_updates(registry: Registry) -> None:
    registry.register(plugin("weather"))
    event = registry.register(plugin("weather", description="Now with wind."))
    assert event is not None and event.kind == "updated"


def test_an_older_version_is_a_version_conflict(registry: Registry) -> None:
    registry.register(plugin("weather", version="2.0.0"))
    with pytest.raises(PlugyardError) as caught:
        registry.register(plugin("weather", version="1.9.9"))
    assert code_of(caught) == "version_conflict"
    found = registry.find("weather")
    assert found is not None and found.descriptor.version == "2.0.0"
    assert_in_step(registry)


@pytest.mark.parametrize(
    "rival",
    [
        plugin("weather", source="external"),
        plugin("weather", location="/elsewhere/weather"),
        plugin("weather", source="entrypoint", version="9.0"),
    ],
    ids=["other-source", "other-folder", "newer-from-elsewhere"],
)
def test_an_id_taken_by_another_origin_is_a_duplicate(
    registry: Registry, rival: RegisteredPlugin
) -> None:
    original = plugin("weather")
    registry.register(original)
    with pytest.raises(PlugyardError) as caught:
        registry.register(rival)
    assert code_of(caught) == "duplicate_plugin"
    assert registry.find("weather") == original
    assert_in_step(registry)


def test_ids_are_unique_across_families(registry: Registry) -> None:
    registry.register(plugin("shared"))
    with pytest.raises(PlugyardError) as caught:
        registry.register(plugin("shared", family="kb", location="/plugins/kb/shared"))
    assert code_of(caught) == "duplicate_plugin"


def test_replace_takes_an_id_over_and_may_go_back_a_version(registry: Registry) -> None:
    registry.register(plugin("weather", version="2.0.0"))
    older_elsewhere = plugin("weather", source="external", version="1.0.0")
    event = registry.register(older_elsewhere, replace=True)
    assert event is not None and event.kind == "updated"
    assert registry.find("weather") == older_elsewhere
    assert_in_step(registry)


def test_a_batch_registers_all_or_nothing(registry: Registry) -> None:
    recorder = Recorder()
    registry.register(plugin("taken", source="external"))
    registry.subscribe(recorder)
    with pytest.raises(PlugyardError) as caught:
        registry.register_many([plugin("fresh"), plugin("taken")])
    assert code_of(caught) == "duplicate_plugin"
    assert registry.find("fresh") is None
    assert recorder.events == []
    assert_in_step(registry)


def test_a_batch_naming_one_id_twice_is_refused(registry: Registry) -> None:
    with pytest.raises(PlugyardError) as caught:
        registry.register_many([plugin("twice"), plugin("twice", version="2")])
    assert code_of(caught) == "duplicate_plugin"
    assert len(registry) == 0


def test_a_wrong_content_hash_is_corrected(registry: Registry) -> None:
    honest = plugin("weather")
    registry.register(replace(honest, content_hash="forged"))
    found = registry.find("weather")
    assert found is not None and found.content_hash == honest.content_hash


# unsupported families -------------------------------------------------------------------


def test_a_family_smuggled_past_the_model_is_unsupported(registry: Registry) -> None:
    smuggled = PluginDescriptor.model_construct(**{**descriptor("odd").__dict__, "family": "cache"})
    with pytest.raises(PlugyardError) as caught:
        registry.register(replace(plugin("odd"), descriptor=smuggled))
    assert code_of(caught) == "unsupported_type"
    assert len(registry) == 0


@pytest.mark.parametrize(
    "data",
    [
        {"id": "odd", "name": "Odd", "family": "widget"},
        {"id": "odd", "type": "cache-plugin", "name": "Odd", "description": "x"},
        {"$schema": "https://plugyard.dev/schemas/plugin-descriptor.schema.json",
         "id": "odd", "name": "Odd", "family": "sd-plugin"},
    ],
    ids=["descriptor-data", "mrp-manifest", "canonical-document"],
)  # fmt: skip
def test_raw_input_with_an_unknown_family_is_unsupported(
    registry: Registry, data: dict[str, str]
) -> None:
    with pytest.raises(PlugyardError) as caught:
        registry.register_data(data)
    assert code_of(caught) == "unsupported_type"
    assert len(registry) == 0


@pytest.mark.parametrize("family", ["widget", "cache-plugin", ""])
def test_asking_for_an_unknown_family_is_unsupported(registry: Registry, family: str) -> None:
    with pytest.raises(PlugyardError) as caught:
        registry.list_by_type(family)
    assert code_of(caught) == "unsupported_type"
    with pytest.raises(PlugyardError):
        registry.get(family, "x")


def test_a_bad_manifest_keeps_its_own_error_code(registry: Registry) -> None:
    with pytest.raises(PlugyardError) as caught:
        registry.register_data({"plugin": {"name": "No id", "capability": "MODEL"}})
    assert caught.value.code.startswith("manifest_")


# raw registrations ------------------------------------------------------------------


def test_an_external_registration_is_untrusted_whatever_it_says(registry: Registry) -> None:
    body = {
        "plugin_id": "quote",
        "name": "Quote",
        "description": "Quote of the day.",
        "trust": "trusted",
        "type": "http",
        "health_check_url": "http://127.0.0.1:9/health",
        "config": {"base_url": "http://127.0.0.1:9"},
        "capabilities": [{"id": "today", "description": "Today's quote.", "method": "GET",
                          "path": "/quote"}],
    }  # fmt: skip
    (event,) = registry.register_data(body)
    assert event.plugin is not None
    assert (event.plugin.source, event.plugin.trust, event.plugin.dialect) == (
        "external",
        "untrusted",
        "homeclaw",
    )
    assert_in_step(registry)


def test_descriptor_data_registers_as_canonical(registry: Registry) -> None:
    data = descriptor("notes", family="kb").to_data()
    (event,) = registry.register_data(data, source="code", trust="trusted")
    assert event.plugin is not None
    assert event.plugin.descriptor == descriptor("notes", family="kb")
    assert event.plugin.dialect == "canonical"


# removal and availability ---------------------------------------------------------------


def test_unregistering_removes_and_tells(registry: Registry) -> None:
    recorder = Recorder()
    weather = plugin("weather")
    registry.register(weather)
    registry.subscribe(recorder)
    event = registry.unregister("weather")
    assert event is not None and (event.kind, event.plugin, event.previous) == (
        "removed",
        None,
        weather,
    )
    assert registry.find("weather") is None
    assert registry.unregister("weather") is None
    assert recorder.kinds() == [("removed", "weather")]
    assert_in_step(registry)


def test_availability_is_recorded_and_told(registry: Registry) -> None:
    recorder = Recorder()
    registry.register(plugin("svc", source="external"))
    registry.subscribe(recorder)
    event = registry.set_availability("svc", False, "3 failed health checks")
    found = registry.find("svc")
    assert found is not None
    assert (found.available, found.unavailable_reason) == (False, "3 failed health checks")
    assert event is not None and event.kind == "availability" and event.plugin == found
    assert registry.set_availability("svc", False, "3 failed health checks") is None
    registry.set_availability("svc", True)
    assert recorder.kinds() == [("availability", "svc"), ("availability", "svc")]
    assert_in_step(registry)


def test_availability_of_an_unknown_plugin_is_not_found(registry: Registry) -> None:
    with pytest.raises(NotFoundError) as caught:
        registry.set_availability("ghost", False, "gone")
    assert caught.value.code == "plugin_not_found"


def test_require_names_the_missing_plugin(registry: Registry) -> None:
    with pytest.raises(NotFoundError) as caught:
        registry.require("ghost")
    assert caught.value.code == "plugin_not_found"


# events -----------------------------------------------------------------------------


def test_a_failing_listener_is_logged_and_breaks_nothing(
    registry: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    after = Recorder()

    def explode(_event: object) -> None:
        raise RuntimeError("listener bug")

    registry.subscribe(explode)
    registry.subscribe(after)
    with caplog.at_level(logging.ERROR, logger="plugyard.registry"):
        event = registry.register(plugin("weather"))
    assert event is not None and registry.find("weather") is not None
    assert after.kinds() == [("registered", "weather")]
    assert any("listener" in r.getMessage() for r in caplog.records)
    assert_in_step(registry)


def test_unsubscribed_listeners_hear_nothing_more(registry: Registry) -> None:
    recorder = Recorder()
    unsubscribe = registry.subscribe(recorder)
    registry.register(plugin("a"))
    unsubscribe()
    unsubscribe()
    registry.register(plugin("b"))
    assert recorder.kinds() == [("registered", "a")]


def test_a_listener_may_call_back_into_the_registry(registry: Registry) -> None:
    seen: list[int] = []
    registry.subscribe(lambda event: seen.append(len(registry.list())))
    registry.register(plugin("a"))
    assert seen == [1]


# the store --------------------------------------------------------------------------


def test_a_failing_store_leaves_the_registry_as_it_was() -> None:
    repo = FlakyRepository()
    registry = Registry(repo)
    recorder = Recorder()
    registry.register(plugin("kept"))
    registry.subscribe(recorder)
    repo.broken = True
    actions: list[Callable[[], object]] = [
        lambda: registry.register(plugin("new")),
        lambda: registry.register(plugin("kept", version="2.0")),
        lambda: registry.unregister("kept"),
        lambda: registry.set_availability("kept", False, "x"),
    ]
    for action in actions:
        with pytest.raises(StoreError) as caught:
            action()
        assert caught.value.code == "store_error"
    repo.broken = False
    assert [p.id for p in registry.list()] == ["kept"]
    kept = registry.find("kept")
    assert kept is not None and kept.descriptor.version == "1.0.0" and kept.available
    assert recorder.events == []
    assert_in_step(registry)


def test_loading_reads_the_store_and_reports_rows_it_cannot_read() -> None:
    repo = Store.open(":memory:").plugins
    good = plugin("good")
    repo.upsert(to_row(good))
    repo.upsert(replace(to_row(plugin("odd")), family="widget",
                        descriptor={"id": "odd", "name": "Odd", "family": "widget"}))  # fmt: skip
    repo.upsert(replace(to_row(plugin("bent")), trust="sometimes"))
    registry = Registry(repo)
    assert len(registry) == 0
    failures = registry.load()
    assert registry.list() == (good,)
    assert sorted((f.source, f.code) for f in failures) == [
        ("store:bent", "plugin_load_error"),
        ("store:odd", "unsupported_type"),
    ]
    assert repo.get("odd") is not None


def test_the_rules_are_judged_against_the_store_not_a_stale_copy(database_url: str) -> None:
    with Store.open(database_url) as store_a, Store.open(database_url) as store_b:
        first, second = Registry.over(store_a), Registry.over(store_b)
        first.register(plugin("weather", version="3.0"))
        with pytest.raises(PlugyardError) as caught:
            second.register(plugin("weather", version="2.0"))
        assert code_of(caught) == "version_conflict"
        with pytest.raises(PlugyardError) as caught:
            second.register(plugin("weather", source="external"))
        assert code_of(caught) == "duplicate_plugin"


def test_refresh_announces_what_another_process_changed_in_the_store(tmp_path: Path) -> None:
    url = str(tmp_path / "shared.db")
    with Store.open(url) as first, Store.open(url) as second:
        writer, reader = Registry.over(first), Registry.over(second)
        reader.load()
        heard = Recorder()
        reader.subscribe(heard)
        writer.register(plugin("alpha"))
        writer.register(plugin("beta"))
        events = reader.refresh()
        assert [(e.kind, e.plugin_id) for e in events] == [
            ("registered", "alpha"),
            ("registered", "beta"),
        ]
        assert reader.find("alpha") is not None and len(heard.events) == 2
        writer.unregister("alpha")
        writer.register(replace(plugin("beta"), descriptor=descriptor("beta", version="2.0.0")))
        kinds = [(e.kind, e.plugin_id) for e in reader.refresh()]
        assert kinds == [("removed", "alpha"), ("updated", "beta")]
        assert reader.refresh() == ()
