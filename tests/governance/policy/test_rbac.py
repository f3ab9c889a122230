"""RBAC: a golden matrix, and 1,000 random policies judged by the evaluator and by a
plain reference implementation of docs/governance.md — they must never disagree."""

from __future__ import annotations

import logging
import logging.config
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plugyard.errors import GovernanceError
from plugyard.governance.policy.document import parse_document, parse_text
from plugyard.governance.policy.rbac import Rbac
from plugyard.manifest.model import Operation, PluginDescriptor
from plugyard.types import Caller

GOLDEN = """
version: 1
subjects:
  alice: {roles: [admin]}
  bob: {roles: [analyst]}
  carol: {roles: [viewer], permissions: ["plugin:mailer"]}
  dave: {permissions: ["gmail.read"]}
roles:
  analyst: {inherits: [viewer]}
  admin: {inherits: [analyst], permissions: ["gmail.read"]}
grants:
  - {to: "role:viewer", plugin: "*", operation: "*", effect: allow}
  - {to: "role:analyst", plugin: mailer, operation: send, effect: allow_with_approval}
  - {to: "*", plugin: sqlite-query, effect: deny}
  - {to: "role:admin", plugin: "*", verb: approve, effect: allow}
  - {to: "subject:bob", plugin: "secret-*", effect: deny}
  - {to: "role:admin", plugin: "secret-*", effect: allow}
  - {to: "subject:dave", plugin: gmail, action: "draft_*", effect: allow}
"""

# (subject, roles from the surface, plugin, operation, verb, required permissions,
#  operation requires approval) → outcome
MATRIX: list[tuple[str | None, tuple[str, ...], str, str, str, tuple[str, ...], bool, str]] = [
    ("alice", (), "calculator", "execute", "call", (), False, "allow"),
    ("bob", (), "calculator", "execute", "call", (), False, "allow"),  # inherited viewer
    ("bob", (), "mailer", "send", "call", (), False, "allow_with_approval"),
    ("bob", (), "mailer", "read", "call", (), False, "allow"),
    ("alice", (), "mailer", "send", "call", (), False, "allow_with_approval"),  # inherits
    ("bob", (), "sqlite-query", "run", "call", (), False, "deny"),  # deny wins
    ("alice", (), "sqlite-query", "run", "call", (), False, "deny"),
    ("bob", (), "secret-vault", "x", "call", (), False, "deny"),
    ("alice", (), "secret-vault", "x", "call", (), False, "allow"),
    ("alice", (), "mailer", "send", "approve", (), False, "allow"),
    ("bob", (), "mailer", "send", "approve", (), False, "deny"),  # default deny
    ("carol", (), "mailer", "send", "call", (), False, "allow"),  # viewer grant
    ("carol", (), "gmail", "read", "call", ("gmail.read",), False, "deny"),  # missing perm
    ("alice", (), "gmail", "read", "call", ("gmail.read",), False, "allow"),  # via role
    ("dave", (), "gmail", "draft_reply", "call", ("gmail.read",), False, "allow"),
    ("dave", (), "gmail", "send", "call", ("gmail.read",), False, "deny"),
    ("dave", (), "calculator", "execute", "call", (), False, "deny"),  # no grant
    ("erin", (), "calculator", "execute", "call", (), False, "deny"),  # unknown subject
    (None, (), "calculator", "execute", "call", (), False, "deny"),  # anonymous
    ("erin", ("viewer",), "calculator", "execute", "call", (), False, "allow"),  # vouched
    ("bob", (), "calculator", "execute", "call", (), True, "allow_with_approval"),
    ("bob", (), "sqlite-query", "run", "call", (), True, "deny"),
]


@pytest.mark.parametrize(
    ("subject", "roles", "plugin", "op", "verb", "needs", "approval", "expected"), MATRIX
)
def test_the_golden_matrix(
    subject: str | None,
    roles: tuple[str, ...],
    plugin: str,
    op: str,
    verb: str,
    needs: tuple[str, ...],
    approval: bool,
    expected: str,
) -> None:
    rbac = Rbac(parse_text(GOLDEN))
    decision = rbac.decide(
        Caller(subject, roles),
        plugin,
        op,
        verb=verb,
        required_permissions=needs,
        requires_approval=approval,
    )
    assert decision.outcome == expected, decision.reason
    assert decision.policy_version == rbac.version
    assert decision.reason


def test_the_permission_plugin_id_allows_that_plugin_only() -> None:
    rbac = Rbac(parse_text("subjects: {zed: {permissions: ['plugin:web_search']}}"))
    assert rbac.decide(Caller("zed"), "web_search", "execute").outcome == "allow"
    assert rbac.decide(Caller("zed"), "web", "execute").outcome == "deny"
    surface = Caller("zed", (), ("plugin:calculator",))
    assert rbac.decide(surface, "calculator", "execute").outcome == "allow"


def test_a_changed_document_has_another_version() -> None:
    one = parse_text(GOLDEN)
    two = parse_text(GOLDEN.replace("verb: approve", "verb: call"))
    assert one.digest() != two.digest()
    assert one.digest() == parse_text(GOLDEN).digest()


@pytest.mark.parametrize(
    "text",
    [
        "version: 2",  # a format this code does not know
        "grants: [{to: 'role:a', effect: maybe}]",
        "grants: [{to: 'group:a', effect: allow}]",
        "grants: [{to: 'role:a', effect: allow, extra: 1}]",
        "grants: [{to: 'role:a', effect: allow, operation: x, action: y}]",
        "roles: {a: {inherits: [b]}, b: {inherits: [a]}}",  # a cycle
        "roles: {" + ", ".join(f"r{i}: {{inherits: [r{i + 1}]}}" for i in range(12)) + "}",
        "unknown_section: {}",
        "subjects: [alice]",
        "- just a list",
        "{bad yaml",
        "subjects: {'has space': {}}",
        "",
    ],
)
def test_a_malformed_or_unknown_policy_is_refused(text: str) -> None:
    with pytest.raises(GovernanceError) as caught:
        parse_text(text)
    assert caught.value.code == "policy_invalid"


# ------------------------------------------------------------- the reference model


def reference(
    doc: dict[str, Any],
    subject: str,
    roles: tuple[str, ...],
    plugin: str,
    op: str,
    verb: str,
    needs: tuple[str, ...],
    approval: bool,
) -> str:
    """docs/governance.md's rules, written out plainly."""
    subjects, role_map, grants = doc["subjects"], doc["roles"], doc["grants"]
    if subject not in subjects and not roles:
        return "deny"
    held_roles: set[str] = set()
    todo = list(subjects.get(subject, {}).get("roles", [])) + list(roles)
    while todo:
        role = todo.pop()
        if role not in held_roles:
            held_roles.add(role)
            todo.extend(role_map.get(role, {}).get("inherits", []))
    principals = {f"subject:{subject}", "*"} | {f"role:{r}" for r in held_roles}

    def wild(value: str, pattern: str) -> bool:
        return re.fullmatch(".*".join(map(re.escape, pattern.split("*"))), value) is not None

    matched = [
        g["effect"]
        for g in grants
        if g["to"] in principals
        and wild(plugin, g["plugin"])
        and wild(op, g["operation"])
        and g["verb"] in (verb, "*")
    ]
    if "deny" in matched:
        return "deny"
    perms = set(subjects.get(subject, {}).get("permissions", []))
    for role in held_roles:
        perms.update(role_map.get(role, {}).get("permissions", []))
    if verb == "call" and any(p not in perms for p in needs):
        return "deny"
    if "allow_with_approval" in matched:
        return "allow_with_approval"
    if "allow" in matched or (verb == "call" and f"plugin:{plugin}" in perms):
        return "allow_with_approval" if approval and verb == "call" else "allow"
    return "deny"


NAMES = ["a", "b", "c"]
PLUGINS = ["p1", "p2", "px"]
OPS = ["read", "write", "rw"]
PERMS = ["k1", "k2", "plugin:p1", "plugin:px"]


@st.composite
def documents(draw: st.DrawFn) -> dict[str, Any]:
    roles = {
        r: {
            "inherits": draw(
                st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=2, unique=True).map(
                    lambda xs, r=r: [x for x in xs if x > r]
                )
            ),
            "permissions": draw(st.lists(st.sampled_from(PERMS), max_size=2, unique=True)),
        }
        for r in ["r1", "r2", "r3"]
    }
    subjects = {
        s: {
            "roles": draw(st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=2, unique=True)),
            "permissions": draw(st.lists(st.sampled_from(PERMS), max_size=2, unique=True)),
        }
        for s in draw(st.lists(st.sampled_from(NAMES), max_size=3, unique=True))
    }
    grant = st.fixed_dictionaries(
        {
            "to": st.sampled_from(["*", "subject:a", "subject:b", "role:r1", "role:r2", "role:r3"]),
            "plugin": st.sampled_from(["*", "p1", "p2", "p*", "*x"]),
            "operation": st.sampled_from(["*", "read", "write", "r*", "*w*"]),
            "verb": st.sampled_from(["call", "approve", "*"]),
            "effect": st.sampled_from(["allow", "deny", "allow_with_approval"]),
        }
    )
    grants = draw(st.lists(grant, max_size=6))
    return {"version": 1, "subjects": subjects, "roles": roles, "grants": grants}


@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    doc=documents(),
    subject=st.sampled_from(NAMES),
    roles=st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=1).map(tuple),
    plugin=st.sampled_from(PLUGINS),
    op=st.sampled_from(OPS),
    verb=st.sampled_from(["call", "approve"]),
    needs=st.lists(st.sampled_from(["k1", "k2"]), max_size=1).map(tuple),
    approval=st.booleans(),
)
def test_the_evaluator_agrees_with_the_reference_on_1000_random_policies(
    doc: dict[str, Any],
    subject: str,
    roles: tuple[str, ...],
    plugin: str,
    op: str,
    verb: str,
    needs: tuple[str, ...],
    approval: bool,
) -> None:
    rbac = Rbac(parse_document(doc))
    got = rbac.decide(
        Caller(subject, roles),
        plugin,
        op,
        verb=verb,
        required_permissions=needs,
        requires_approval=approval,
    ).outcome
    assert got == reference(doc, subject, roles, plugin, op, verb, needs, approval)


@settings(max_examples=500, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    doc=documents(),
    effects=st.lists(
        st.sampled_from(["*", "read", "write", "destructive"]), min_size=6, max_size=6
    ),
    subject=st.sampled_from([*NAMES, "stranger"]),
    roles=st.lists(st.sampled_from(["r1", "r2", "r3"]), max_size=2, unique=True).map(tuple),
    plugin=st.sampled_from(PLUGINS),
    op=st.sampled_from(OPS),
    needs=st.lists(st.sampled_from(["k1", "k2"]), max_size=1).map(tuple),
    approval=st.booleans(),
    effect=st.sampled_from(["read", "write", "destructive"]),
)
def test_a_sight_sees_exactly_the_operations_the_enforcer_does_not_deny(
    doc: dict[str, Any],
    effects: list[str],
    subject: str,
    roles: tuple[str, ...],
    plugin: str,
    op: str,
    needs: tuple[str, ...],
    approval: bool,
    effect: str,
) -> None:
    for grant, operation_effect in zip(doc["grants"], effects, strict=False):
        grant["operation_effect"] = operation_effect
    rbac = Rbac(parse_document(doc))
    who = Caller(subject, roles)
    decided = rbac.decide(who, plugin, op, verb="call", required_permissions=needs,
                          requires_approval=approval, operation_effect=effect)  # fmt: skip
    assert rbac.sight(who).sees(plugin, op, needs, effect) == (decided.outcome != "deny")


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    doc=documents(),
    effects=st.lists(
        st.sampled_from(["*", "read", "write", "destructive"]), min_size=6, max_size=6
    ),
    subject=st.sampled_from([*NAMES, "stranger"]),
    roles=st.lists(st.sampled_from(["r1", "r2", "r3"]), min_size=1, max_size=2, unique=True).map(
        tuple
    ),
    plugin=st.sampled_from(PLUGINS),
    ops=st.lists(
        st.tuples(st.sampled_from(OPS), st.sampled_from(["read", "write", "destructive"])),
        min_size=2,
        max_size=3,
        unique_by=lambda op: op[0],
    ),
    needs=st.lists(st.sampled_from(["k1", "k2"]), max_size=1).map(tuple),
)
def test_a_listing_shows_a_plugin_when_the_enforcer_allows_one_of_its_operations(
    doc: dict[str, Any],
    effects: list[str],
    subject: str,
    roles: tuple[str, ...],
    plugin: str,
    ops: list[tuple[str, str]],
    needs: tuple[str, ...],
) -> None:
    for grant, operation_effect in zip(doc["grants"], effects, strict=False):
        grant["operation_effect"] = operation_effect
    rbac = Rbac(parse_document(doc))
    who = Caller(subject, roles)
    descriptor = PluginDescriptor(
        id=plugin,
        name=plugin,
        permissions=needs,
        operations=tuple(Operation(id=op, effect=effect) for op, effect in ops),  # type: ignore[arg-type]
    )
    expected = any(
        rbac.decide(who, plugin, op, required_permissions=needs, operation_effect=effect).outcome
        != "deny"
        for op, effect in ops
    )
    assert rbac.sight(who).shows(descriptor) == expected


def test_equal_grants_make_equal_sights_across_versions_and_others_do_not() -> None:
    base = parse_text(GOLDEN)
    other_subject = parse_text(GOLDEN + '  - {to: "subject:carol", plugin: x, effect: deny}\n')
    bobs = parse_text(GOLDEN + '  - {to: "subject:bob", plugin: x, effect: deny}\n')
    bob = Caller("bob")
    first, second, third = (Rbac(d).sight(bob) for d in (base, other_subject, bobs))
    assert first.version != second.version
    assert first == second and hash(first) == hash(second)
    assert first != third


def test_decisions_are_not_logged(caplog: pytest.LogCaptureFixture) -> None:
    rbac = Rbac(parse_text(GOLDEN))
    # A server's own logging setup (uvicorn's) re-enables the loggers it keeps.
    logging.config.dictConfig({"version": 1, "disable_existing_loggers": False})
    caplog.set_level(logging.DEBUG)
    assert rbac.decide(Caller("erin"), "calculator", "execute").outcome == "deny"
    assert rbac.decide(Caller("bob"), "sqlite-query", "run").outcome == "deny"
    assert rbac.decide(Caller("alice"), "calculator", "execute").outcome == "allow"
    assert caplog.records == []  # the audit log is the record


@pytest.mark.parametrize(
    ("subject", "plugin", "op", "verb", "needs", "approval", "reason"),
    [
        ("erin", "calculator", "execute", "call", (), False, "unknown subject 'erin'"),
        ("bob", "sqlite-query", "run", "call", (), False, "denied by grant #3"),
        ("carol", "gmail", "read", "call", ("gmail.read", "a.b"), False,
         "missing permission 'a.b'"),
        ("bob", "mailer", "send", "call", (), False, "approval required by grant #2"),
        ("bob", "calculator", "execute", "call", (), False, "allowed by grant #1"),
        ("bob", "calculator", "execute", "call", (), True,
         "allowed by grant #1; the operation requires approval"),
        ("dave", "calculator", "execute", "call", (), False, "no grant matches (default deny)"),
        ("alice", "mailer", "send", "approve", (), False, "allowed by grant #4"),
    ],
)  # fmt: skip
def test_a_decision_names_its_reason(
    subject: str,
    plugin: str,
    op: str,
    verb: str,
    needs: tuple[str, ...],
    approval: bool,
    reason: str,
) -> None:
    rbac = Rbac(parse_text(GOLDEN))
    decision = rbac.decide(Caller(subject), plugin, op, verb=verb, required_permissions=needs,
                           requires_approval=approval)  # fmt: skip
    assert decision.reason == reason


def test_the_grant_named_is_the_subjects_own_before_a_vouched_roles() -> None:
    rbac = Rbac(parse_text(GOLDEN))
    # bob's own reach (viewer, via analyst) meets grant #1; a vouched admin role would
    # meet #6 for secret-* — but bob's own deny (#5) comes first and wins.
    assert rbac.decide(Caller("bob", ("admin",)), "secret-x", "y").reason == "denied by grant #5"
    assert rbac.decide(Caller("zed", ("admin",)), "secret-x", "y").reason == "allowed by grant #1"
    zed_perm = Rbac(parse_text("subjects: {zed: {permissions: ['plugin:web']}}"))
    assert zed_perm.decide(Caller("zed"), "web", "go").reason == (
        "allowed by the permission 'plugin:web'"
    )
