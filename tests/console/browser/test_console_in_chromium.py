"""The console in a real browser: Debian's Chromium driven by Playwright, against
``plugyard serve``'s app on loopback.

Every page any test opens is watched: a request to anything but loopback fails the test
(and is aborted), so is a dialog (an ``alert`` some markup managed to run), and so is a
``window.__pwned`` the test plugin's markup would set if it ever executed. One browser
serves the whole module; each test opens contexts (separate cookie jars) per subject.

``PLUGYARD_CONSOLE_SCREENSHOTS=DIR`` saves a screenshot of each main page into DIR (the
pictures in docs/console/ come from there).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from plugyard.server import ServerSettings, create_app
from plugyard.yard import Yard

from ..conftest import POLICY, settings
from .live import AXE, launch_options, loopback, require, require_chromium, serving

playwright_api = pytest.importorskip("playwright.sync_api")
expect = playwright_api.expect
EXAMPLE = Path(__file__).parents[3] / "examples" / "pipelines" / "guarded-calculator.yaml"
TIMEOUT_MS = 20_000  # a shared machine under a full test run is slow; nothing waits longer
expect.set_options(timeout=TIMEOUT_MS)
MAIN_PAGES = {
    "catalog": "/",
    "plugin": "/console/plugins/hinted",
    "run-form": "/console/plugins/hinted/run/configure",
    "approvals": "/console/approvals",
    "secrets": "/console/secrets",
    "feeds": "/console/feeds",
    "feed-dialog": "/console/feeds/new?plugin=hinted",
    "pipeline-editor": "/console/pipelines/editor?name=guarded-calculator",
    "ask": "/console/ask",
    "audit": "/console/admin/audit",
    "keys": "/console/admin/keys",
    "external": "/console/admin/plugins",
}


class Site:
    def __init__(self, url: str, keys: dict[str, str], yard: Yard) -> None:
        self.url = url
        self.keys = keys
        self.yard = yard


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    require_chromium()
    folder = tmp_path_factory.mktemp("console-browser")
    with Yard.from_settings(settings(str(folder / "yard.db"))) as yard:
        admin = yard.keys.bootstrap_admin()
        assert admin is not None
        yard.admin.load_policy(POLICY, by="admin")
        yard.pipelines.save(EXAMPLE.read_text())  # groups, slots and a diagram to check
        keys = {"admin": admin, "clerk": yard.keys.create("clerk", ("clerk",))[1]}
        app = create_app(yard, ServerSettings(health_checks=False))
        with serving(app) as url:
            yield Site(url, keys, yard)


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        launched = driver.chromium.launch(**launch_options())
        yield launched
        launched.close()


class Watch:
    """What a test's pages did that they must not: leave loopback, open dialogs."""

    def __init__(self) -> None:
        self.outside: list[str] = []
        self.dialogs: list[str] = []
        self.pages: list[Any] = []


@pytest.fixture
def open_as(site: Site, browser: Any) -> Iterator[Callable[..., Any]]:
    """``open_as(subject)``: a page of a fresh context, logged in through the login form."""
    watch = Watch()
    contexts: list[Any] = []

    def route(route: Any) -> None:
        if loopback(route.request.url):
            route.continue_()
        else:
            watch.outside.append(route.request.url)
            route.abort()

    def opened(subject: str, *, axe: bool = False) -> Any:
        context = browser.new_context(base_url=site.url)
        context.set_default_timeout(TIMEOUT_MS)
        context.route("**/*", route)
        if axe:
            context.add_init_script(path=str(AXE))  # a debugger-side script: not under CSP
        contexts.append(context)
        page = context.new_page()
        page.on("dialog", lambda d: (watch.dialogs.append(d.message), d.dismiss()))
        watch.pages.append(page)
        page.goto("/")
        expect(page).to_have_url(re.compile(r"/console/login"))
        page.get_by_label("API key").fill(site.keys[subject])
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("heading", name="Catalog", level=1)).to_be_visible()
        return page

    yield opened
    for page in watch.pages:
        if not page.is_closed():
            assert page.evaluate("() => window.__pwned") is None, "markup ran"
    for context in contexts:
        context.close()
    assert watch.outside == [], f"requests left loopback: {watch.outside}"
    assert watch.dialogs == [], f"dialogs opened: {watch.dialogs}"


def test_log_in_and_see_the_olo_sections(open_as: Callable[..., Any]) -> None:
    page = open_as("admin")
    for capability in ("ACCESS", "MODEL", "CACHING"):
        section = page.locator(f'section[data-section="{capability}"]')
        expect(section.locator('[data-plugin="observer-passthrough"]')).to_be_visible()
    expect(
        page.locator('section[data-section="ACCESS"] [data-plugin="guardrail-basic"]')
    ).to_be_visible()
    expect(
        page.locator('section[data-section="CACHING"] [data-plugin="cache-memory"]')
    ).to_be_visible()
    expect(
        page.locator('section[data-section="MODEL"] [data-plugin="cache-memory"]')
    ).to_have_count(0)
    undefined = page.locator('section[data-section="Undefined"]')
    expect(undefined.locator('[data-plugin="experimental-normalize"]')).to_be_visible()
    for role, plugin in (("CONDITION", "condition-expression"), ("ITERATOR", "iterator-batch"),
                         ("FORK", "fork-copy"), ("JOIN", "join-merge")):  # fmt: skip
        expect(
            page.locator(f'section[data-section="{role}"] [data-plugin="{plugin}"]')
        ).to_be_visible()
    # The test plugin's markup is on this page, as text.
    expect(page.locator('[data-plugin="evil"] .name')).to_contain_text("<script>")


def test_search_shows_why(open_as: Callable[..., Any]) -> None:
    page = open_as("admin")
    page.get_by_label("Search plugins").fill("convert km to miles")
    page.get_by_label("Search plugins").press("Enter")
    first = page.locator("li.match").first
    expect(first).to_have_attribute("data-plugin", "unit-convert")
    expect(first.locator(".why")).to_contain_text("matched")


def test_a_show_when_field_appears_and_disappears(open_as: Callable[..., Any]) -> None:
    page = open_as("clerk")
    page.goto("/console/plugins/hinted/run/configure")
    subject = page.get_by_label("Subject email")
    expect(subject).to_be_hidden()
    mode = page.get_by_label(re.compile(r"^mode\b"))
    mode.select_option(label="Domain delegation")
    expect(subject).to_be_visible()
    expect(page.locator(".option-help")).to_have_text("Runs as another user of the domain.")
    mode.select_option(label="Simple mode")
    expect(subject).to_be_hidden()


def test_a_streaming_run_shows_progress_then_its_result(open_as: Callable[..., Any]) -> None:
    page = open_as("clerk")
    page.goto("/console/plugins/ticker/run/count")
    page.get_by_label(re.compile(r"^n\b")).fill("3")
    page.get_by_role("button", name="Run").click()
    expect(page.locator("#progress li")).to_have_count(3)
    expect(page.locator("#progress li").last).to_have_text("step 2")
    expect(page.locator('#result-box section.result[data-status="success"]')).to_be_visible()
    expect(page.locator("#result-box pre.data")).to_contain_text('"total": 3')


def test_ask_shows_the_answer_as_a_sentence_and_each_step_once(
    site: Site, open_as: Callable[..., Any]
) -> None:
    from ..test_ask import Scripted

    vars(site.yard)["llm"] = Scripted([[{
        "name": "unit-convert__convert",
        "arguments": {"value": 350, "from_unit": "F", "to_unit": "C"},
    }]])  # fmt: skip
    page = open_as("admin")
    page.goto("/console/ask")
    page.get_by_label("Message").fill("Convert 350 F to C")
    page.get_by_role("button", name="Ask").click()
    answer = page.locator('#result-box section.answer[data-status="answered"]')
    expect(answer).to_be_visible()
    expect(answer.locator(".answer-text")).to_contain_text("176.6")
    expect(answer.locator(".answer-text")).not_to_contain_text("{")
    expect(page.locator("li.step")).to_have_count(1)  # the streamed step is not repeated
    expect(page.locator("#progress-box")).to_be_hidden()


def test_markup_from_a_plugin_never_runs(open_as: Callable[..., Any]) -> None:
    page = open_as("clerk")
    page.goto("/console/plugins/evil")
    page.goto("/console/plugins/evil/run/emit")
    page.get_by_role("button", name="Run").click()
    expect(page.locator('section.result[data-status="success"]')).to_be_visible()
    expect(page.locator("pre.data")).to_contain_text("<script>window.__pwned = 6</script>")
    expect(page.locator('.citations a[href^="javascript:"]')).to_have_count(0)
    # The watcher asserts window.__pwned is unset and that no dialog opened.


def outbox(page: Any, admin_key: str) -> int:
    reply = page.request.post("/api/v1/plugins/mailer/execute?operation=outbox", data={},
                              headers={"X-API-Key": admin_key})  # fmt: skip
    return int(reply.json()["data"]["count"])


def test_an_action_goes_pending_is_approved_then_runs_once(
    open_as: Callable[..., Any], site: Site
) -> None:
    clerk = open_as("clerk")
    before = outbox(clerk, site.keys["admin"])
    clerk.goto("/console/plugins/mailer/run/send")
    clerk.get_by_label(re.compile(r"^to\b")).fill("ann@example.org")
    clerk.get_by_role("button", name="Run").click()
    expect(clerk.locator('[data-code="pending_approval"]')).to_be_visible()
    clerk.get_by_role("link", name="Go to approvals").click()
    pending = clerk.locator('table.mine tr[data-state="pending"]')
    expect(pending).to_have_count(1)
    action = pending.get_attribute("data-action")

    admin = open_as("admin")
    admin.goto("/console/approvals")
    row = admin.locator(f'table.to-decide tr[data-action="{action}"]')
    expect(row).to_contain_text("ann@example.org")
    row.get_by_label("Note").fill("ok to send")
    row.get_by_role("button", name="Approve").click()
    expect(admin.get_by_role("status")).to_contain_text("approved")

    clerk.reload()
    mine = clerk.locator(f'table.mine tr[data-action="{action}"]')
    expect(mine).to_have_attribute("data-state", "approved")
    expect(mine).to_contain_text("by admin")
    mine.get_by_role("button", name="Run it now").click()
    expect(clerk.locator('section.result[data-status="success"]')).to_be_visible()
    expect(clerk.locator(f'table.mine tr[data-action="{action}"]')).to_have_attribute(
        "data-state", "used"
    )
    expect(clerk.get_by_role("button", name="Run it now")).to_have_count(0)
    assert outbox(clerk, site.keys["admin"]) == before + 1


def test_a_refused_drop_in_the_pipeline_editor(open_as: Callable[..., Any]) -> None:
    page = open_as("admin")
    # Tall enough that the palette item and the slot are both in view: a drag that had
    # to scroll on the way would be cancelled, as it would under a person's mouse.
    page.set_viewport_size({"width": 1280, "height": 2400})
    page.goto("/console/pipelines/editor?capability=MODEL")
    root = page.locator('.slot[data-slot="/capabilities/0/flow"]')
    condition = page.locator(
        '[data-palette-section="CONDITION"] [data-component="condition-expression"]'
    )
    condition.drag_to(root)
    expect(page.locator('#drop-status [data-code="role_misplaced"]')).to_be_visible()
    expect(root).to_have_class(re.compile(r"\brefused\b"))
    expect(page.locator("#document")).not_to_have_value(re.compile("condition-expression"))
    # The same with the keyboard: pick a component, then press a slot.
    page.locator('[data-palette-section="MODEL"] [data-component="guardrail-basic"]').focus()
    page.keyboard.press("Enter")
    root.focus()
    page.keyboard.press("Enter")
    expect(page.locator('#drop-status [data-code="ok"]')).to_be_visible()
    expect(page.locator("#document")).to_have_value(re.compile("guardrail-basic"))
    expect(page.locator("#diagram svg.pipeline-diagram")).to_contain_text("guardrail-basic")


def test_keyboard_first_stop_is_the_skip_link(open_as: Callable[..., Any]) -> None:
    page = open_as("admin")
    page.keyboard.press("Tab")
    expect(page.locator("a.skip")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#main")).to_be_focused()


def test_main_pages_have_no_serious_accessibility_violations(open_as: Callable[..., Any]) -> None:
    require(AXE, "axe-core", "scripts/mcp-clients.sh installs tests/clients/node with npm")
    page = open_as("admin", axe=True)
    shots = os.environ.get("PLUGYARD_CONSOLE_SCREENSHOTS")
    found: dict[str, list[str]] = {}
    for name, url in MAIN_PAGES.items():
        page.goto(url)
        violations = page.evaluate(
            """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations
                .filter(v => v.impact === "serious" || v.impact === "critical")
                .map(v => v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", "))"""
        )
        if violations:
            found[name] = violations
        if shots:
            Path(shots).mkdir(parents=True, exist_ok=True)
            whole = name in ("catalog", "pipeline-editor")
            page.screenshot(path=str(Path(shots) / f"{name}.png"), full_page=whole)
    assert found == {}
