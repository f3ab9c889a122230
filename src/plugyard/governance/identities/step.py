"""The identities step of the call path: the accounts and identities the operation needs
are connected for the caller (``identity_required`` and the other codes of
:class:`~plugyard.governance.identities.providers.AuthError`)."""

from __future__ import annotations

from plugyard.execution.steps import NOTHING, Call, refuse
from plugyard.governance.identities.op_auth import Identities
from plugyard.governance.identities.providers import AuthError
from plugyard.governance.secrets.step import call_op_auth
from plugyard.runtimes.base import Outcome


class IdentitiesStep:
    name = "identities"
    after = NOTHING

    def __init__(self, identities: Identities) -> None:
        self.identities = identities

    def before(self, call: Call) -> Outcome | None:
        plugin = call.plugin
        assert plugin is not None
        auth = call_op_auth(call)
        if auth is None and not plugin.descriptor.required_identities:
            return None
        try:
            self.identities.check(plugin.descriptor, auth, call.context.subject)
        except AuthError as exc:
            return refuse(exc.code, exc.message, **exc.details)
        return None
