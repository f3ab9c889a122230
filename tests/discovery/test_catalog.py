"""Registered plugins become one index entry per plugin and one per operation."""

from __future__ import annotations

from plugyard.discovery import catalog
from plugyard.discovery.catalog import EntryKey

from .sample_catalog import descriptor


def test_a_plugin_gives_its_own_entry_then_one_per_operation() -> None:
    pairs = catalog.documents(descriptor("weather"))
    assert [key for key, _ in pairs] == [
        EntryKey("weather"),
        EntryKey("weather", "forecast"),
        EntryKey("weather", "current"),
    ]
    assert [doc.doc_id for _, doc in pairs] == ["weather", "weather/forecast", "weather/current"]


def test_a_descriptor_without_operations_is_one_entry() -> None:
    pairs = catalog.documents(descriptor("legacy-translate"))
    assert [doc.doc_id for _, doc in pairs] == ["legacy-translate"]


def test_the_plugin_entry_reads_like_a_listing() -> None:
    fields = catalog.plugin_document(descriptor("weather")).fields()
    assert fields["name"] == "Weather (climate)"
    assert fields["description"] == "Weather forecasts and current conditions for any city."
    assert "forecast: Forecast the next days" in fields["details"]
    assert fields["details"].endswith("Parameters: city")


def test_an_operation_entry_carries_its_plugin_as_context() -> None:
    fields = catalog.operation_document(
        descriptor("stocks"), descriptor("stocks").operations[0]
    ).fields()
    assert fields["name"] == "Stock Market: quote"
    assert fields["description"] == "Latest share price for a ticker symbol."
    assert "Share prices and company news." in fields["details"]
    assert "ticker: Ticker, e.g. AAPL" in fields["details"]


def test_an_operation_without_description_borrows_its_plugins() -> None:
    d = descriptor("pdf-reader")
    op_fields = catalog.operation_document(d, d.operations[0]).fields()
    assert op_fields["description"] == d.description
    # A generic "execute" adds nothing to the plugin's own listing.
    assert "execute" not in catalog.plugin_document(d).fields()["details"]


def test_topic_tags_of_planner_hints_count_as_tags() -> None:
    d = descriptor("observer", planner_hints={"topic_tags": ["tracing"]})
    assert catalog.plugin_document(d).fields()["name"] == "Observer (tracing)"


def test_changing_any_indexed_text_changes_the_hash_and_nothing_else_does() -> None:
    before = {doc.doc_id: doc.content_hash() for _, doc in catalog.documents(descriptor("stocks"))}
    bumped = descriptor("stocks", version="9.9.9")
    assert {d.doc_id: d.content_hash() for _, d in catalog.documents(bumped)} == before
    edited = descriptor("stocks", description="Share prices, dividends and company news.")
    after = {d.doc_id: d.content_hash() for _, d in catalog.documents(edited)}
    assert all(after[doc_id] != before[doc_id] for doc_id in before)
