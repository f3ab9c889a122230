"""Does the model choose and call better when the functions reach it through its own chat
template (the ``tools`` of the request, rendered by the GGUF's template as the model was
trained to read them) than through plugyard's catalog in the system message? Runs
``bench/bfcl.py --direct`` with ``plugyard.llm.calls`` patched so that each step keeps the
request's tools and the catalog is left out; the steps' instructions and schemas stay.

    python bench/labs/bfcl_native.py --data package --categories simple_python,multiple \
        --limit 20 --half tune --json -v

Only for a backend that renders ``tools`` with the model's template and still honours
``response_format`` beside them (the embedded llama.cpp core does).
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bfcl

from plugyard.llm import calls as calls_module

_step = calls_module._step


def _native_prompt(messages: Any, tools: Any) -> tuple[Any, ...]:
    return tuple(messages)


def _native_step(request: Any, messages: Any, **options: Any) -> Any:
    return replace(_step(request, messages, **options), tools=request.tools)


if __name__ == "__main__":
    calls_module._prompt = _native_prompt  # type: ignore[assignment]
    calls_module._step = _native_step  # type: ignore[assignment]
    if "--direct" not in sys.argv:
        sys.argv.append("--direct")
    bfcl.main()
