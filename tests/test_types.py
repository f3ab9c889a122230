"""The one Caller: what a call without a subject may do is said once."""

from __future__ import annotations

import plugyard
from plugyard.runtimes.base import CallContext
from plugyard.types import ADMIN_ROLE, Caller


def test_a_call_with_neither_subject_nor_roles_is_the_application_with_the_admin_role() -> None:
    application = Caller.of()
    assert application == Caller(None, (ADMIN_ROLE,))
    assert application.application


def test_a_subject_holds_only_the_roles_given() -> None:
    assert Caller.of("bob") == Caller("bob", ())
    assert Caller.of("bob", ["reader"], ["plugin:calc"]) == Caller(
        "bob", ("reader",), ("plugin:calc",)
    )
    assert not Caller.of("bob").application


def test_roles_given_without_a_subject_are_kept() -> None:
    assert Caller.of(None, ["reader"]).roles == ("reader",)


def test_a_context_names_its_caller_and_keeps_its_wire_members() -> None:
    context = CallContext("r1", subject="bob", roles=("reader",), permissions=("plugin:x",))
    assert context.caller == Caller("bob", ("reader",), ("plugin:x",))
    wire = context.as_plugin_context(wire=True)
    assert wire["subject"] == "bob" and wire["roles"] == ["reader"]
    assert "caller" not in wire


def test_caller_is_public() -> None:
    assert plugyard.Caller is Caller
    assert "Caller" in plugyard.__all__
