"""Every console form, posted as each role, ends as its REST twin ends for the same key.

The walk reads the console's POST routes from the app itself, so a form added without a
case here fails :func:`test_every_console_form_is_walked`. A form with no REST route is
compared with the right that decides it (governance/policy/rights.py), which the REST API would ask.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from fastapi.testclient import TestClient

from plugyard import console
from plugyard.governance.policy import rights
from plugyard.governance.policy.rights import Right
from plugyard.types import Caller
from plugyard.yard import Yard

from .conftest import codes, csrf_of, signed_in
from .test_pipelines import EXAMPLE

POLICY = """
grants:
  - {to: "role:admin", plugin: "*", operation: "*", verb: "*", effect: allow}
  - {to: "role:reader", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "role:reader", plugin: ticker, effect: allow}
  - {to: "role:clerk", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "role:clerk", plugin: ticker, effect: allow}
"""
ROLES = {"admin": ("admin",), "reader": ("reader",), "nobody": ()}
#: Forms that are not actions of the yard: they open and close the session itself.
NOT_ACTIONS = {"/console/login": "signs in with a key", "/console/logout": "ends the session"}


@dataclass
class World:
    app: Any
    yard: Yard
    keys: dict[str, str]
    api: TestClient
    consoles: dict[str, TestClient] = field(default_factory=dict)

    def console(self, role: str) -> TestClient:
        if role not in self.consoles:
            self.consoles[role] = signed_in(self.app, self.keys[role])
        return self.consoles[role]

    def rest(self, role: str, method: str, url: str, **options: Any) -> Any:
        headers = {"X-API-Key": self.keys[role]}
        return self.api.request(method, url, headers=headers, **options)

    def post(self, role: str, url: str, page: str = "/console/pipelines", **data: str) -> Any:
        client = self.console(role)
        token = csrf_of(client.get(page).text)
        return client.post(url, data={"csrf_token": token, **data}, follow_redirects=False)

    def pending(self, role: str = "clerk") -> dict[str, Any]:
        """A request of ``role``'s waiting for approval: its action id and receipt."""
        reply = self.rest(
            role,
            "POST",
            "/api/v1/plugins/mailer/execute?operation=send",
            json={"parameters": {"to": "ann@example.org"}},
        )
        assert reply.json()["status"] == "pending_approval", reply.text
        return dict(reply.json()["data"])

    def feed(self, owner: str = "clerk") -> str:
        made = self.rest(
            owner,
            "POST",
            "/api/v1/feeds",
            json={
                "plugin_id": "ticker",
                "operation": "count",
                "params": {"n": 1},
                "interval_s": 3600,
            },
        )
        assert made.status_code == 201, made.text
        return str(made.json()["id"])


def console_outcome(reply: Any) -> str:
    """``allowed``, or the code the page refuses (or the call it ran failed) with."""
    found = codes(reply.text) if "text/html" in reply.headers.get("content-type", "") else []
    if reply.status_code >= 400:
        return found[0] if found else f"HTTP {reply.status_code}"
    if 'data-status="pending_approval"' in reply.text or "pending_approval" in found:
        return "pending_approval"
    if 'data-status="error"' in reply.text:
        return found[0]
    return "allowed"


def rest_outcome(reply: Any) -> str:
    if reply.status_code >= 400:
        return str(reply.json()["error"]["message"]["error"])
    body = reply.json()
    if isinstance(body, dict) and body.get("status") == "pending_approval":
        return "pending_approval"
    if isinstance(body, dict) and body.get("status") == "error":  # ask: every ending answers
        return str(body["error"]["code"])
    return "allowed"


def by_right(role: str, right: Right) -> str:
    """The REST API's answer for a form that has no REST route: the right decides."""
    return "allowed" if rights.holds(Caller(role, ROLES[role]), right) else "permission_denied"


def owned_by_another(role: str) -> str:
    """A record of another subject's: acted on by those who see every owner, else unknown."""
    return "allowed" if by_right(role, Right.OTHERS_RECORDS) == "allowed" else "feed_not_found"


Step = Callable[[World, str], str]


@dataclass(frozen=True)
class Case:
    """One console form (``path``, a route template) and its REST twin, for one role."""

    path: str
    name: str
    console: Step
    rest: Step


def _verify_console(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/admin/audit/verify"))


def _verify_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "GET", "/api/v1/audit/verify"))


def _key_create(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/admin/keys", subject="minted", roles="reader"))


def _key_revoke(w: World, role: str) -> str:
    info, _ = w.yard.keys.create("doomed", ("reader",))
    return console_outcome(w.post(role, f"/console/admin/keys/{info.id}/revoke"))


# A registration of an external plugin that names a plugin but no way to reach it: an
# admin passes the right and is refused for the body, as on both surfaces.
_REGISTRATION = {"plugin_id": "outside", "name": "Outside", "description": "elsewhere"}


def _register_console(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/admin/plugins", body=json.dumps(_REGISTRATION)))


def _register_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "POST", "/api/v1/plugins/register", json=_REGISTRATION))


def _unregister_console(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/admin/plugins/ghost/remove"))


def _unregister_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "DELETE", "/api/v1/plugins/ghost"))


def _pin_console(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/admin/mcp/ghost/tool/approve"))


def _pin_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "POST", "/api/v1/mcp/pins/ghost/tool/approve"))


def _decide_console(w: World, role: str) -> str:
    action = w.pending()["action_id"]
    reply = w.post(
        role, f"/console/approvals/{action}/decide", page="/console/approvals", decision="approve"
    )
    return console_outcome(reply)


def _decide_rest(w: World, role: str) -> str:
    action = w.pending()["action_id"]
    return rest_outcome(w.rest(role, "POST", f"/api/v1/approvals/{action}/approve"))


def _run_approved_console(w: World, role: str) -> str:
    """Ask to send through the console; once approved, run it with the session's receipt."""
    asked = w.post(
        role,
        "/console/plugins/mailer/run/send",
        page="/console/plugins/mailer/run/send",
        **{"/to": "ann@example.org"},
    )
    if console_outcome(asked) != "pending_approval":
        return console_outcome(asked)
    action = re.search(r"#req-([^\"]+)\"", asked.text)
    assert action is not None
    w.yard.admin.decide(action.group(1), _approver(), True, None)
    ran = w.post(role, f"/console/approvals/{action.group(1)}/run", page="/console/approvals")
    return console_outcome(ran)


def _run_approved_rest(w: World, role: str) -> str:
    url = "/api/v1/plugins/mailer/execute?operation=send"
    asked = w.rest(role, "POST", url, json={"parameters": {"to": "ann@example.org"}})
    if rest_outcome(asked) != "pending_approval":
        return rest_outcome(asked)
    held = asked.json()["data"]
    w.yard.admin.decide(held["action_id"], _approver(), True, None)
    body = {"parameters": {"to": "ann@example.org"}, "approval_receipt": held["receipt"]}
    return rest_outcome(w.rest(role, "POST", url, json=body))


def _approver() -> Any:
    from plugyard.types import Caller

    return Caller("admin", ("admin",))


def _ask_console(w: World, role: str) -> str:
    return console_outcome(w.post(role, "/console/ask", page="/console/ask", message="hello"))


def _ask_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "POST", "/api/v1/ask", json={"message": "hello"}))


FORGED_RECEIPT = "pyr_" + "x" * 43


def _confirm_console(w: World, role: str) -> str:
    reply = w.post(role, "/console/ask/confirm", page="/console/ask", receipt=FORGED_RECEIPT)
    return console_outcome(reply)


def _confirm_rest(w: World, role: str) -> str:
    body = {"receipt": FORGED_RECEIPT}
    return rest_outcome(w.rest(role, "POST", "/api/v1/ask/confirm", json=body))


def _feed_console(w: World, role: str) -> str:
    reply = w.post(
        role,
        "/console/feeds",
        page="/console/feeds",
        plugin_id="ticker",
        operation="count",
        interval_s="3600",
        params="{}",
    )
    return console_outcome(reply)


def _feed_rest(w: World, role: str) -> str:
    body = {"plugin_id": "ticker", "operation": "count", "interval_s": 3600}
    return rest_outcome(w.rest(role, "POST", "/api/v1/feeds", json=body))


def _feed_verb(verb: str) -> Step:
    def act(w: World, role: str) -> str:
        feed_id = w.feed()
        return console_outcome(
            w.post(role, f"/console/feeds/{feed_id}/{verb}", page="/console/feeds")
        )

    return act


def _feed_delete_rest(w: World, role: str) -> str:
    return rest_outcome(w.rest(role, "DELETE", f"/api/v1/feeds/{w.feed()}"))


def _editor(w: World, role: str, **fields: str) -> Any:
    return w.post(
        role,
        "/console/pipelines/editor",
        page="/console/pipelines/editor",
        capability="MODEL",
        document=EXAMPLE.read_text(),
        **fields,
    )


def _save_console(w: World, role: str) -> str:
    return console_outcome(_editor(w, role, op="save", name="calc"))


def _save_rest(w: World, role: str) -> str:
    import yaml

    document = yaml.safe_load(EXAMPLE.read_text())
    return rest_outcome(w.rest(role, "PUT", "/api/v1/pipelines/calc", json=document))


def _run_pipeline_console(w: World, role: str) -> str:
    reply = _editor(w, role, op="run", input='{"question": "6*7"}')
    status = re.search(r'data-run-status="([^"]+)"', reply.text)
    return console_outcome(reply) if status is None else f"run {status.group(1)}"


def _run_pipeline_rest(w: World, role: str) -> str:
    import yaml

    body = {"document": yaml.safe_load(EXAMPLE.read_text()), "input": {"question": "6*7"}}
    reply = w.rest(role, "POST", "/api/v1/pipelines/run", json=body)
    return rest_outcome(reply) if reply.status_code >= 400 else f"run {reply.json()['status']}"


def _validate_console(w: World, role: str) -> str:
    return console_outcome(_editor(w, role, op="validate"))


def _validate_rest(w: World, role: str) -> str:
    import yaml

    document = yaml.safe_load(EXAMPLE.read_text())
    return rest_outcome(w.rest(role, "POST", "/api/v1/pipelines/validate", json=document))


def _plugin_run_console(w: World, role: str) -> str:
    reply = w.post(role, "/console/plugins/ticker/run/count", page="/console/pipelines")
    return console_outcome(reply)


def _plugin_run_rest(w: World, role: str) -> str:
    return rest_outcome(
        w.rest(role, "POST", "/api/v1/plugins/ticker/execute?operation=count", json={})
    )


def _secret_console(scope: str, delete: bool = False) -> Step:
    def act(w: World, role: str) -> str:
        if delete:
            owner = None if scope == "system" else role
            w.yard.admin.set_secret("token", "v", scope=scope, owner=owner, by="setup")  # type: ignore[arg-type]
            reply = w.post(
                role, "/console/secrets/delete", page="/console/secrets", scope=scope, name="token"
            )
        else:
            reply = w.post(
                role,
                "/console/secrets",
                page="/console/secrets",
                scope=scope,
                name="token",
                value="v",
            )
        return console_outcome(reply)

    return act


def _secret_rest(scope: str, delete: bool = False) -> Step:
    def act(w: World, role: str) -> str:
        if delete:
            owner = None if scope == "system" else role
            w.yard.admin.set_secret("token", "v", scope=scope, owner=owner, by="setup")  # type: ignore[arg-type]
            reply = w.rest(role, "DELETE", f"/api/v1/secrets/token?scope={scope}")
        else:
            reply = w.rest(role, "PUT", f"/api/v1/secrets/token?scope={scope}", json={"value": "v"})
        return rest_outcome(reply)

    return act


def _right(right: Right) -> Step:
    return lambda w, role: by_right(role, right)


CASES = [
    Case("/console/admin/audit/verify", "verify the audit chain", _verify_console, _verify_rest),
    Case("/console/admin/keys", "create a key", _key_create, _right(Right.KEY_MANAGE)),
    Case(
        "/console/admin/keys/{key_id}/revoke", "revoke a key", _key_revoke, _right(Right.KEY_MANAGE)
    ),
    Case("/console/admin/plugins", "register", _register_console, _register_rest),
    Case(
        "/console/admin/plugins/{plugin_id}/remove",
        "unregister",
        _unregister_console,
        _unregister_rest,
    ),
    Case("/console/admin/mcp/{plugin_id}/{tool}/approve", "approve a pin", _pin_console, _pin_rest),
    Case("/console/approvals/{action_id}/decide", "decide", _decide_console, _decide_rest),
    Case(
        "/console/approvals/{action_id}/run",
        "run approved",
        _run_approved_console,
        _run_approved_rest,
    ),
    Case("/console/ask", "ask", _ask_console, _ask_rest),
    Case("/console/ask/confirm", "confirm a held call", _confirm_console, _confirm_rest),
    Case("/console/feeds", "schedule a feed", _feed_console, _feed_rest),
    Case(
        "/console/feeds/{feed_id}/{verb}", "delete a feed", _feed_verb("delete"), _feed_delete_rest
    ),
    *(
        Case(
            "/console/feeds/{feed_id}/{verb}",
            f"{verb} a feed",
            _feed_verb(verb),
            lambda w, role: owned_by_another(role),
        )
        for verb in ("pause", "resume", "run")
    ),
    Case("/console/pipelines/editor", "save a pipeline", _save_console, _save_rest),
    Case("/console/pipelines/editor", "run a pipeline", _run_pipeline_console, _run_pipeline_rest),
    Case("/console/pipelines/editor", "validate", _validate_console, _validate_rest),
    Case(
        "/console/plugins/{plugin_id}/run/{operation}",
        "run a plugin",
        _plugin_run_console,
        _plugin_run_rest,
    ),
    *(
        Case(
            path,
            f"{verb} a {scope} secret",
            _secret_console(scope, delete),
            _secret_rest(scope, delete),
        )
        for path, verb, delete in (
            ("/console/secrets", "set", False),
            ("/console/secrets/delete", "delete", True),
        )
        for scope in ("user", "system")
    ),
]


@pytest.fixture
def world(app: Any, yard: Yard, keys: dict[str, str]) -> Iterator[World]:
    yard.admin.load_policy(POLICY, by="admin")
    every = {**keys, "nobody": yard.keys.create("nobody", ())[1]}
    with TestClient(app, base_url="https://testserver", raise_server_exceptions=False) as api:
        found = World(app, yard, every, api)
        yield found
        for client in found.consoles.values():
            client.close()


def test_every_console_form_is_walked() -> None:
    forms = {
        route.path
        for router in console.routers()
        for route in router.routes
        if "POST" in (getattr(route, "methods", None) or ())
    }
    walked = {case.path for case in CASES} | set(NOT_ACTIONS)
    assert forms - walked == set(), f"console forms with no case in this walk: {forms - walked}"
    assert walked - forms == set(), f"cases for forms the console lacks: {walked - forms}"


@pytest.mark.parametrize("role", list(ROLES))
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_console_form_ends_as_its_rest_twin(world: World, case: Case, role: str) -> None:
    on_console = case.console(world, role)
    on_rest = case.rest(world, role)
    assert on_console == on_rest, f"{case.name} as {role}: console {on_console}, REST {on_rest}"


def test_the_walk_sees_refusals_and_passes(world: World) -> None:
    """The walk compares real outcomes: a reader is refused a pipeline save on both, an
    admin saves on both, and a reader's approved request runs on both."""
    save = next(c for c in CASES if c.name == "save a pipeline")
    assert (save.console(world, "reader"), save.rest(world, "reader")) == ("permission_denied",) * 2
    assert (save.console(world, "admin"), save.rest(world, "admin")) == ("allowed",) * 2
    approved = next(c for c in CASES if c.name == "run approved")
    assert approved.console(world, "reader") == approved.rest(world, "reader") == "allowed"
