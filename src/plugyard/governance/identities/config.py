"""Identity providers from an operator's file (``PLUGYARD_AUTH_PROVIDERS``): YAML or JSON,
one entry per provider::

    google:
      token_url: https://oauth2.googleapis.com/token
      client_id: 1234.apps.googleusercontent.com
      client_secret: google_client_secret   # the name of a system secret, never the value
      timeout_s: 10

Every entry is a generic OAuth2 token endpoint (:mod:`.oauth2`)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from plugyard.governance.identities.oauth2 import OAuth2Provider
from plugyard.governance.identities.providers import AuthError

Secret = Callable[[str], str | None]


def providers_from_file(path: Path, secret: Secret) -> list[OAuth2Provider]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise AuthError(f"{path}: {exc}", code="invalid_request") from None
    if not isinstance(data, dict):
        raise AuthError(f"{path}: expected a mapping of providers", code="invalid_request")
    return [_provider(str(name), spec, secret, path) for name, spec in data.items()]


def _provider(name: str, spec: Any, secret: Secret, path: Path) -> OAuth2Provider:
    if not isinstance(spec, dict) or not isinstance(spec.get("token_url"), str):
        raise AuthError(f"{path}: {name}: needs a token_url", code="invalid_request")
    secret_name = spec.get("client_secret")
    timeout = spec.get("timeout_s", 10.0)
    try:
        return OAuth2Provider(
            name,
            spec["token_url"],
            str(spec.get("client_id") or ""),
            (lambda: secret(secret_name)) if isinstance(secret_name, str) else (lambda: None),
            timeout_s=float(timeout),
        )
    except (TypeError, ValueError) as exc:
        raise AuthError(f"{path}: {name}: {exc}", code="invalid_request") from None
