"""The host step of the call path, last before the plugin runs: the call's own host
object — the plugin's services (storage, cursor, rate limit, http, kb…) and the
per-call ones (secrets, identity, audit, scheduler, auth), with every writing service
recorded in the call's :class:`~plugyard.governance.host.services.Effects` ledger (the
complete step reads it: did anything land?)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from plugyard.execution.host import CapabilityError, Host, make_host
from plugyard.execution.steps import NOTHING, Call
from plugyard.governance.host.services import (
    EFFECTS,
    Effects,
    Http,
    Recorded,
    RecordedHttp,
)
from plugyard.governance.secrets.step import call_op_auth
from plugyard.runtimes.base import Outcome

if TYPE_CHECKING:
    from plugyard.governance.core import Governance

#: The host services that write, and their writing methods (``kb`` and ``http`` apart).
WRITES: dict[str, frozenset[str]] = {
    "storage": frozenset({"put", "set", "delete"}),
    "cursor": frozenset({"set"}),
    "scheduler": frozenset({"enqueue"}),
    "audit": frozenset({"record"}),
}
#: The services whose use the call's ledger records.
_WATCHED = frozenset({"kb", "http", *WRITES})


class HostStep:
    name = "host"
    after = NOTHING

    def __init__(self, governance: Governance) -> None:
        self.governance = governance
        self._hosts: dict[tuple[str, str], Host] = {}

    def before(self, call: Call) -> Outcome | None:
        plugin = call.plugin
        assert plugin is not None
        key = (plugin.id, plugin.content_hash)
        host = self._hosts.get(key)
        if host is None:  # the services that depend only on the plugin, made once
            host = make_host(plugin.id, plugin.descriptor.host_capabilities)
            host = self._hosts[key] = host.extended(self.governance.plugin_services(plugin))
        extra: dict[str, Any] = {}
        overlay = call.host_context
        bound = overlay is not None and (overlay.ocr_mode or overlay.knowledge_base_ids)
        if overlay is not None and bound and "kb" in host.capabilities:
            with contextlib.suppress(CapabilityError):
                kb = host.kb
                if hasattr(kb, "with_mode"):
                    extra["kb"] = kb.with_mode(overlay.ocr_mode, overlay.knowledge_base_ids)
        governance = self.governance
        if governance.needs_call_services(plugin.descriptor):
            extra.update(governance.call_services(plugin, call.context, call_op_auth(call)))
        effects = call.state[EFFECTS] = Effects()
        for name in host.capabilities & _WATCHED:
            service = extra.get(name)
            if service is None:
                with contextlib.suppress(CapabilityError):
                    service = getattr(host, name)
            if service is None:
                continue
            if name == "kb":
                if hasattr(service, "with_effects"):
                    extra[name] = service.with_effects(effects.track("kb.ingest"))
            elif name == "http":
                if isinstance(service, Http):
                    extra[name] = RecordedHttp(service, effects)
            else:
                extra[name] = Recorded(service, name, WRITES[name], effects)
        call.host = host.extended(extra) if extra else host
        return None
