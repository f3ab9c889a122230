"""What an external registration must satisfy before anything is stored.

Over the API only ``http`` plugins may register: a ``subprocess`` or ``mcp`` (stdio)
registration would be a request to run a command on this host. Every URL of the
registration (``base_url``, and ``health_check_url``, which is required) must be an
http(s) URL whose host does not resolve where the outbound guard refuses to connect.
All plugins of a registration are checked before any is registered, so a refusal leaves
nothing half-registered.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from plugyard.errors import ManifestError, Problem
from plugyard.manifest.model import HttpRuntime, PluginDescriptor
from plugyard.runtimes.http.runtime import url_problem
from plugyard.runtimes.outbound.guard import OutboundError, OutboundGuard


async def check_registration(descriptors: Sequence[PluginDescriptor], guard: OutboundGuard) -> None:
    """Raise ``manifest_invalid_value`` (not an http plugin), ``manifest_missing_field``
    (no ``health_check_url``), ``invalid_request`` (a URL
    that is not one) or ``outbound_blocked`` (a URL pointing where it must not)."""
    for index, descriptor in enumerate(descriptors):
        runtime = descriptor.runtime
        if not isinstance(runtime, HttpRuntime):
            raise ManifestError(
                [
                    Problem(
                        "manifest_invalid_value",
                        "/type",
                        f"plugin {descriptor.id!r} has runtime {runtime.kind!r}; only http "
                        "plugins may register over the API",
                        index,
                    )
                ]
            )
        if runtime.health_check_url is None:
            raise ManifestError(
                [
                    Problem(
                        "manifest_missing_field",
                        "/health_check_url",
                        f"plugin {descriptor.id!r}: an external registration must give "
                        "health_check_url",
                        index,
                    )
                ]
            )
        for where, url in _urls(runtime):
            label = f"plugin {descriptor.id!r} {where}"
            problem = url_problem(url)
            if problem is not None:
                raise OutboundError(f"{label}: {problem}", code="invalid_request")
            await guard.check_url(url, where=label)


def _urls(runtime: HttpRuntime) -> Iterator[tuple[str, str]]:
    yield "base_url", runtime.base_url
    if runtime.health_check_url is not None:
        yield "health_check_url", runtime.health_check_url
