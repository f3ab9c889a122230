"""The catalog: OLO sections, filters, search with why, paging, and the plugin page."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from .conftest import codes


def section(html: str, name: str) -> list[str]:
    """The plugin ids shown in one section of the catalog page."""
    found = re.search(rf'data-section="{re.escape(name)}"(.*?)</section>', html, re.S)
    assert found is not None, name
    return re.findall(r'<li class="card[^"]*" data-plugin="([^"]+)"', found.group(1))


def test_the_bundled_placement_examples_stand_where_the_olo_rules_put_them(
    admin: TestClient,
) -> None:
    page = admin.get("/").text
    for capability in ("ACCESS", "MODEL", "CACHING"):
        assert "observer-passthrough" in section(page, capability)  # ALL: every section
    assert "guardrail-basic" in section(page, "ACCESS")
    assert "guardrail-basic" in section(page, "MODEL")
    assert "cache-memory" in section(page, "CACHING")
    assert "cache-memory" not in section(page, "MODEL")
    assert "experimental-normalize" in section(page, "Undefined")
    assert section(page, "CONDITION") == ["condition-expression"]
    assert section(page, "ITERATOR") == ["iterator-batch"]
    assert section(page, "FORK") == ["fork-copy"] and section(page, "JOIN") == ["join-merge"]
    assert "condition-expression" not in section(page, "Undefined")


def test_filters_narrow_the_sections(admin: TestClient) -> None:
    page = admin.get("/?family=kb").text
    assert section(page, "Undefined") == ["kb-embed", "kb-lexical"]
    assert admin.get("/?runtime=http").text.count('class="card') == 0
    bad = admin.get("/?family=nope")
    assert bad.status_code == 400 and "invalid_request" in codes(bad.text)


def test_search_shows_why_each_match_matched(admin: TestClient) -> None:
    page = admin.get("/?q=convert+km+to+miles").text
    matches = re.findall(r'<li class="match" data-plugin="([^"]+)"', page)
    assert matches[0] == "unit-convert"
    assert re.search(r'class="why"><strong>Why:</strong> .*matched: .*km', page)


def test_a_section_pages(admin: TestClient) -> None:
    page = admin.get("/?section=Undefined&page=1").text
    assert re.findall(r'data-section="([^"]+)"', page) == ["Undefined"]


def test_a_reader_sees_only_what_it_may_call(app: object, keys: dict[str, str]) -> None:
    from .conftest import signed_in

    page = signed_in(app, keys["clerk"]).get("/").text
    shown = set(re.findall(r'<li class="card[^"]*" data-plugin="([^"]+)"', page))
    assert shown == {"mailer", "hinted", "ticker", "evil"}


def test_the_plugin_page_shows_operations_icons_and_exports(admin: TestClient) -> None:
    page = admin.get("/console/plugins/hinted").text
    assert re.findall(r'data-operation="([^"]+)"', page) == ["configure", "digest", "whoami"]
    assert "1.2.0" in page
    icon = admin.get("/console/plugins/hinted/icon?size=large")
    assert icon.headers["content-type"] == "image/svg+xml"
    assert "sandbox" in icon.headers["content-security-policy"]
    for dialect in ("olo", "homeclaw", "mrp", "shu", "canonical", "openai", "mcp"):
        shown = admin.get(f"/console/plugins/hinted?format={dialect}")
        assert f'data-format="{dialect}"' in shown.text, dialect
    download = admin.get("/console/plugins/hinted/export?format=olo")
    assert "attachment" in download.headers["content-disposition"]
    assert "hinted" in download.text
    bad = admin.get("/console/plugins/hinted/export?format=nope")
    assert bad.status_code == 400 and "invalid_request" in codes(bad.text)


def test_an_unknown_plugin_is_a_page_with_its_code(admin: TestClient) -> None:
    reply = admin.get("/console/plugins/nope")
    assert reply.status_code == 404 and "plugin_not_found" in codes(reply.text)


def test_markup_in_a_plugin_is_shown_as_text(admin: TestClient) -> None:
    for url in ("/", "/console/plugins/evil", "/console/plugins/evil/run/emit", "/?q=evil"):
        page = admin.get(url).text
        assert "<script>window.__pwned" not in page, url
        assert "<img src=x onerror" not in page, url
        assert "<b onmouseover" not in page, url
