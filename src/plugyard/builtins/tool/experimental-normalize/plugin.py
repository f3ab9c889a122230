"""An experimental text normaliser (an OLO stage with no capability: *Undefined*)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

MAX_CHARACTERS = 1_000_000
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_SPACES = re.compile(r"[ \t\u00a0]{2,}")
_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "“": '"', "”": '"', "„": '"'})


class TextNormaliser:
    def execute(self, params: dict[str, Any], context: Any = None, host: Any = None) -> Any:
        original = params.get("text")
        if not isinstance(original, str) or len(original) > MAX_CHARACTERS:
            return {
                "status": "error",
                "error": {
                    "code": "invalid_parameters",
                    "message": f"'text' must be a string of at most {MAX_CHARACTERS} characters",
                },
            }
        text = unicodedata.normalize("NFKC", original)
        text = _INVISIBLE.sub("", text)
        if params.get("straighten_quotes", True):
            text = text.translate(_QUOTES)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        text = "\n".join(_SPACES.sub(" ", line).rstrip() for line in text.split("\n")).strip()
        return {
            "text": text,
            "changed": text != original,
            "removed_characters": max(0, len(original) - len(text)),
        }
