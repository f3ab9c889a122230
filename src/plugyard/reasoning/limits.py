"""The bounds of one reasoning request: every loop in it ends, whatever plugins answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Limits:
    #: Model calls a request may make when the caller names no budget.
    default_llm_budget: int = 4
    #: Plans tried in all (a validator that rejects everything stops here).
    max_plan_attempts: int = 4
    #: Planners tried, the first included.
    max_planners: int = 3
    #: Plugins tried per stage within one plan or frame.
    max_plugins_per_stage: int = 8
    #: How deep child frames nest (the root is depth 0) and how many one request opens.
    max_frame_depth: int = 3
    max_frames: int = 12
    #: Subtasks one decomposition opens.
    max_subtasks: int = 4
    #: A prompt's length, and each source's size (UTF-8 bytes) and count per request.
    max_prompt_chars: int = 20_000
    max_source_bytes: int = 1_048_576
    max_sources: int = 8
    #: Plugins may take this long per call unless their own ``timeoutMs`` is shorter.
    call_timeout_ms: int | None = None
