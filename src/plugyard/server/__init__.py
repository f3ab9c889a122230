"""The REST service (docs/server.md): ``create_app`` builds the FastAPI app."""

from plugyard.server.app import ServerSettings, create_app

__all__ = ["ServerSettings", "create_app"]
