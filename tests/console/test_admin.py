"""Admin pages: only for admins; audit with verify, keys, external registration, pins."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient

from .conftest import codes, csrf_of

ADMIN_PAGES = ("/console/admin/audit", "/console/admin/keys", "/console/admin/plugins",
               "/console/admin/mcp")  # fmt: skip


@pytest.mark.parametrize("url", ADMIN_PAGES)
def test_admin_pages_refuse_other_subjects(clerk: TestClient, url: str) -> None:
    reply = clerk.get(url)
    assert reply.status_code == 403 and "permission_denied" in codes(reply.text)


def test_the_nav_shows_admin_pages_to_admins_only(clerk: TestClient, admin: TestClient) -> None:
    assert "/console/admin/keys" not in clerk.get("/").text
    assert "/console/admin/keys" in admin.get("/").text


def test_the_audit_log_filters_and_verifies(admin: TestClient) -> None:
    page = admin.get("/console/admin/audit?kind=policy").text
    kinds = re.findall(r'<tr data-seq="\d+">\s*<td>\d+</td><td>[^<]*</td><td>([^<]*)</td>', page)
    assert kinds and set(kinds) == {"policy"}
    checked = admin.post("/console/admin/audit/verify", data={"csrf_token": csrf_of(page)})
    assert 'data-verified="ok"' in checked.text


def test_a_new_key_is_shown_once_and_can_be_revoked(admin: TestClient) -> None:
    page = admin.get("/console/admin/keys").text
    made = admin.post("/console/admin/keys", data={"csrf_token": csrf_of(page),
                      "subject": "dora", "roles": "reader", "label": "laptop"})  # fmt: skip
    key = re.search(r'class="new-key" type="text" readonly value="(pyk_[^"]+)"', made.text)
    assert key is not None
    key_id = key.group(1).split("_")[1]
    listing = admin.get("/console/admin/keys").text
    assert key.group(1) not in listing and f'data-key="{key_id}"' in listing
    revoked = admin.post(f"/console/admin/keys/{key_id}/revoke",
                         data={"csrf_token": csrf_of(listing)})  # fmt: skip
    assert revoked.status_code == 200 and "revoked" in revoked.text
    api = admin.get("/api/v1/plugins", headers={"X-API-Key": key.group(1)})
    assert api.status_code == 401


def test_a_registration_refused_by_the_guard_says_why(admin: TestClient) -> None:
    page = admin.get("/console/admin/plugins").text
    body = (
        '{"plugin_id": "remote", "name": "Remote", "description": "x", "type": "http",'
        ' "config": {"base_url": "http://169.254.169.254/"},'
        ' "health_check_url": "http://169.254.169.254/health",'
        ' "capabilities": [{"id": "echo", "method": "POST", "path": "/echo"}]}'
    )
    reply = admin.post("/console/admin/plugins", data={"csrf_token": csrf_of(page), "body": body})
    assert "outbound_blocked" in codes(reply.text)
    assert "169.254.169.254" in reply.text  # the body stays in the form
    bad = admin.post("/console/admin/plugins", data={"csrf_token": csrf_of(page),
                     "body": "a: &a [*a, *a]\nb: !!python/object {}"})  # fmt: skip
    assert bad.status_code >= 400 and codes(bad.text)


def test_the_pins_page_lists_none_when_no_mcp_tool_was_seen(admin: TestClient) -> None:
    page = admin.get("/console/admin/mcp").text
    assert "No changed tool waits." in page
