"""Secrets by op_auth with presence only, and feeds with the op locked when one is allowed."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from .conftest import codes, csrf_of


def test_secret_requirements_show_scope_and_presence_never_values(clerk: TestClient) -> None:
    page = clerk.get("/console/secrets").text
    assert 'data-secret="hinted/digest/api_key"' in page
    assert 'data-secret="hinted/digest/user_token"' in page
    row = re.search(r'data-secret="hinted/digest/user_token">(.*?)</tr>', page, re.S)
    assert row is not None and "<td>user</td>" in row.group(1)
    done = clerk.post("/console/secrets", data={"csrf_token": csrf_of(page), "name": "user_token",
                      "scope": "user", "value": "s3cr3t-value-42"})  # fmt: skip
    assert done.status_code == 200 and "s3cr3t-value-42" not in done.text
    row = re.search(r'data-secret="hinted/digest/user_token">(.*?)</tr>', done.text, re.S)
    assert row is not None and 'data-present="yes"' in row.group(1)


def test_only_an_admin_sets_a_system_secret(clerk: TestClient) -> None:
    page = clerk.get("/console/secrets").text
    reply = clerk.post("/console/secrets", data={"csrf_token": csrf_of(page), "name": "api_key",
                       "scope": "system", "value": "x"})  # fmt: skip
    assert reply.status_code == 403 and "permission_denied" in codes(reply.text)


def test_the_feed_dialog_locks_the_only_allowed_op(clerk: TestClient) -> None:
    page = clerk.get("/console/feeds/new?plugin=hinted").text
    assert 'data-locked-op="digest"' in page
    assert '<input type="hidden" name="operation" value="digest">' in page
    assert 'id="operation"' not in page
    free = clerk.get("/console/feeds/new?plugin=mailer").text
    assert '<select id="operation" name="operation">' in free


def test_a_feed_is_created_paused_run_and_deleted(clerk: TestClient) -> None:
    page = clerk.get("/console/feeds/new?plugin=hinted").text
    made = clerk.post("/console/feeds", data={"csrf_token": csrf_of(page), "plugin_id": "hinted",
                      "operation": "digest", "params": '{"topic": "news"}',
                      "interval_s": "3600"})  # fmt: skip
    assert made.status_code == 200
    feed = re.search(r'data-feed="([^"]+)" data-enabled="yes"', made.text)
    assert feed is not None
    feed_id = feed.group(1)
    token = csrf_of(made.text)
    paused = clerk.post(f"/console/feeds/{feed_id}/pause", data={"csrf_token": token})
    assert f'data-feed="{feed_id}" data-enabled="no"' in paused.text
    ran = clerk.post(f"/console/feeds/{feed_id}/run", data={"csrf_token": token})
    assert "missing_secrets" in codes(ran.text)  # digest needs api_key and user_token
    gone = clerk.post(f"/console/feeds/{feed_id}/delete", data={"csrf_token": token})
    assert f'data-feed="{feed_id}"' not in gone.text


def test_an_op_the_plugin_does_not_allow_in_feeds_is_refused(clerk: TestClient) -> None:
    page = clerk.get("/console/feeds/new?plugin=hinted").text
    reply = clerk.post("/console/feeds", data={"csrf_token": csrf_of(page), "plugin_id": "hinted",
                       "operation": "configure", "interval_s": "3600"})  # fmt: skip
    assert reply.status_code == 400 and "invalid_feed_op" in codes(reply.text)


def test_editing_a_feed_replaces_it(clerk: TestClient) -> None:
    page = clerk.get("/console/feeds/new?plugin=mailer").text
    made = clerk.post("/console/feeds", data={"csrf_token": csrf_of(page), "plugin_id": "mailer",
                      "operation": "outbox", "interval_s": "600"})  # fmt: skip
    old = re.search(r'data-feed="([^"]+)"', made.text)
    assert old is not None
    form = clerk.get(f"/console/feeds/{old.group(1)}/edit").text
    assert f'name="replaces" value="{old.group(1)}"' in form
    saved = clerk.post("/console/feeds", data={"csrf_token": csrf_of(form), "plugin_id": "mailer",
                       "operation": "outbox", "replaces": old.group(1),
                       "cron": "0 * * * *"})  # fmt: skip
    assert f'data-feed="{old.group(1)}"' not in saved.text and "cron <code>0 * * * *" in saved.text
