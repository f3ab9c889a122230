"""Identity providers for Shu's ``host.auth``: a small protocol, a generic OAuth2
token-endpoint provider, and a loopback token server for tests (docs/shu.md)."""

from plugyard.governance.identities.providers import (
    AuthError,
    ProviderRegistry,
    Token,
    TokenProvider,
)

__all__ = ["AuthError", "ProviderRegistry", "Token", "TokenProvider"]
