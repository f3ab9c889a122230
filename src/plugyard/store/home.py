"""The data folder: where the embedded store, its key files and installed packages live
when no setting names a database.

One folder per user, whatever the working folder — a desktop MCP client starts
``plugyard mcp`` in a folder of its own choosing, and must find the same store as the
user's shell. In order:

1. ``$PLUGYARD_HOME``;
2. ``$XDG_DATA_HOME/plugyard`` when ``XDG_DATA_HOME`` is set (on any system: setting it
   is a choice);
3. ``~/Library/Application Support/plugyard`` on macOS, ``%LOCALAPPDATA%\\plugyard`` on
   Windows — each system's own place for application data;
4. ``~/.local/share/plugyard`` (the XDG default).

Before this folder existed the default was ``./.plugyard`` in the working folder. Such a
store is no longer opened by default (a store that follows the working folder is the
fault this module removes): :func:`legacy_notice` tells how to keep using it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path

HOME_ENV = "PLUGYARD_HOME"
STORE_FILE = "plugyard.db"
#: Where stores were kept before the data folder: relative to the working folder.
LEGACY_STORE = Path(".plugyard") / STORE_FILE


def data_home(environ: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The data folder (not created here)."""
    env = os.environ if environ is None else environ
    system = sys.platform if platform is None else platform
    chosen = env.get(HOME_ENV)
    if chosen:
        return Path(chosen).expanduser()
    xdg = env.get("XDG_DATA_HOME")
    if xdg and Path(xdg).is_absolute():  # the XDG spec: a relative value is ignored
        return Path(xdg) / "plugyard"
    home = Path(env["HOME"]) if env.get("HOME") else Path.home()
    if system == "darwin":
        return home / "Library" / "Application Support" / "plugyard"
    if system == "win32" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "plugyard"
    return home / ".local" / "share" / "plugyard"


def default_store(environ: Mapping[str, str] | None = None) -> Path:
    return data_home(environ) / STORE_FILE


def legacy_notice(store: Path, cwd: Path | None = None) -> str | None:
    """A one-line notice when the working folder holds a store of the old default that
    is not the one in use; ``None`` otherwise."""
    old = (cwd or Path.cwd()) / LEGACY_STORE
    try:
        if not old.is_file() or old.resolve() == store.resolve():
            return None
    except OSError:
        return None
    return (
        f"plugyard: not using {LEGACY_STORE} of this folder (the default store is now "
        f"{store}); to keep its data, move the files of {old.parent} there, or pass "
        f"--db {LEGACY_STORE}"
    )
