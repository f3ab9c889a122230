"""Tests send traffic to loopback only: names other than loopback ones never reach DNS."""

from __future__ import annotations

import socket
from typing import Any

import pytest

_LOCAL = frozenset({"localhost", "localhost.localdomain"})


@pytest.fixture(autouse=True)
def offline_resolution(monkeypatch: pytest.MonkeyPatch) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is None or name.lower() in _LOCAL:
            return real(host, *args, **kwargs)
        try:
            port = args[0] if args else kwargs.get("port")
            return real(host, port, flags=socket.AI_NUMERICHOST)
        except socket.gaierror:
            raise socket.gaierror(socket.EAI_NONAME, f"tests resolve no names ({name})") from None

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
