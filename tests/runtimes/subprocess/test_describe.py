"""A worker that dies while describing itself is refused with its own words: the end of
its stderr (here the import guard naming what the vendored code imported)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plugyard.yard import Settings, Yard
from registry.packages.zips import build, shu_files

# A vendored SDK as Shu's is written: it imports importlib, which plugin code may not.
VENDORED = {"vendor/shu_like_sdk/__init__.py": "import importlib\n"}
PLUGIN = """
import shu_like_sdk


class Plugin:
    async def execute(self, params, context, host):
        return {"ok": True}
"""


def test_a_worker_dying_while_describing_is_refused_with_its_stderr(tmp_path: Path) -> None:
    settings = Settings(database=str(tmp_path / "y.db"), builtins=False, embedder="hashing")
    files = shu_files(**VENDORED, **{"greeter_pkg/plugin.py": PLUGIN})
    with Yard.from_settings(settings) as yard:
        yard.packages.install(build(files), trust="trusted")

        async def go() -> object:
            try:
                return await yard.call("greeter", "execute", {})
            finally:
                await yard.runtimes["subprocess"].aclose()  # type: ignore[attr-defined]

        result = asyncio.run(go())
    error = getattr(result, "error", None)
    assert error is not None
    assert error.code == "plugin_unavailable"
    assert "closed stdout before describing" in error.message
    assert "GuardedImportError" in error.message
    assert "may not import importlib" in error.message
