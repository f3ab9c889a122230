"""A HomeClaw built-in (a ``BasePlugin`` subclass built with HomeClaw's core object) is
refused with exactly what it needs of HomeClaw's core, never a bare import error."""

from __future__ import annotations

from pathlib import Path

from plugyard.runtimes.python import InProcessRuntime

from .conftest import target, write

PLUGIN_YAML = """
id: quotes
name: Quotes Plugin
description: Generate motivational quotes from chat history.
type: inline
capabilities:
  - id: generate_random_quote
    name: Generate random quote
    parameters: []
"""
# As HomeClaw's plugins/Quotes/plugin.py is written.
PLUGIN = """
from base.BasePlugin import BasePlugin
from base.util import Util
from core.coreInterface import CoreInterface


class QuotePlugin(BasePlugin):
    def __init__(self, coreInst: CoreInterface):
        super().__init__(coreInst=coreInst)

    async def generate_random_quote(self) -> str:
        app_id, user_name, user_id = self.coreInst.get_latest_chat_info()
        hist = self.coreInst.get_latest_chats(app_id=app_id, user_id=user_id)
        return await Util().openai_chat_completion([{"role": "user", "content": str(hist)}])
"""


def test_a_homeclaw_built_in_is_refused_naming_the_core_it_needs(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    folder = write(tmp_path, {"plugin.yaml": PLUGIN_YAML, "plugin.py": PLUGIN})
    reason = runtime.check(target(folder))
    assert reason is not None
    assert "base.BasePlugin, base.util, core.coreInterface" in reason
    assert "get_latest_chat_info, get_latest_chats" in reason
    assert "Util().openai_chat_completion" in reason


def test_other_missing_modules_keep_the_plain_reason(
    tmp_path: Path, runtime: InProcessRuntime
) -> None:
    code = "import not_installed_anywhere\n\ndef generate_random_quote():\n    return 1\n"
    folder = write(tmp_path, {"plugin.yaml": PLUGIN_YAML, "plugin.py": code})
    reason = runtime.check(target(folder))
    assert reason is not None and reason.startswith("cannot load the plugin's code")
