"""A source's name is a label: what a citation shows, never a path or a key.

It is checked once where a source enters (a request's ``sources``, an upload): a name
with a control character (NUL, a newline, a bidirectional override) would forge lines in
logs and traces or hide what a citation names, so it is refused with the pointer of the
name. Anything else — ``../../etc/passwd`` included — stays a string; nothing resolves
it against a file system.
"""

from __future__ import annotations

import re

from plugyard.errors import Problem, ReasoningError

MAX_NAME_CHARS = 200
#: C0 and C1 controls, the line and paragraph separators, and the bidirectional overrides
#: and isolates (they reorder what is shown). Written as a character class that JSON
#: Schema reads the same, so a request schema can say it too.
CONTROL_CLASS = r"\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069"
#: A name without any of them, as a JSON Schema ``pattern``.
LABEL_PATTERN = f"^[^{CONTROL_CLASS}]*$"
_CONTROL = re.compile(f"[{CONTROL_CLASS}]")


def fault(name: str) -> str | None:
    """Why ``name`` is not a usable label, or ``None``."""
    if not name or len(name) > MAX_NAME_CHARS:
        return f"a source name is 1 to {MAX_NAME_CHARS} characters"
    found = _CONTROL.search(name)
    if found is not None:
        char = found.group()
        return f"a source name holds the control character U+{ord(char):04X} at {found.start()}"
    return None


def check(name: str, pointer: str) -> None:
    """Refuse ``name`` (``invalid_source_name`` at ``pointer``) unless it is a label."""
    why = fault(name)
    if why is not None:
        problem = Problem("invalid_source_name", pointer, why)
        raise ReasoningError(f"{pointer}: {why}", code="invalid_source_name", problems=(problem,))
